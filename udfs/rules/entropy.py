"""Vectorized character statistics of many short tokens at once (numpy over Arrow buffers).

``token_stats`` gives, per token, its Shannon entropy in bits per character and
its class-switch rate: the share of adjacent character pairs that change class
(lower case, upper case, digit, symbol). Random credentials switch class at about
every other character; words, camelCase identifiers and version strings rarely do.
No Python loop runs per token or per character.
"""

from __future__ import annotations

from typing import Final, NamedTuple

import numpy as np
import pyarrow as pa

__all__ = ["CLASS", "CLASS_BITS", "TokenStats", "token_stats"]

CLASS: Final = np.zeros(256, dtype=np.int8)  # per byte: 0 symbol / other
CLASS[ord("a"): ord("z") + 1] = 1
CLASS[ord("A"): ord("Z") + 1] = 2
CLASS[ord("0"): ord("9") + 1] = 3
CLASS_BITS: Final = ((1, 1), (2, 2), (3, 4), (0, 8))  # (class, its bit in TokenStats.classes)


class TokenStats(NamedTuple):
    """Per-token statistics, aligned with the input array."""

    length: np.ndarray        # bytes
    entropy: np.ndarray       # Shannon entropy, bits per character
    switch_rate: np.ndarray   # class changes / (length - 1)
    classes: np.ndarray       # bit set: 1 lower, 2 upper, 4 digit, 8 symbol


def _buffers(tokens: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    arr = tokens.cast(pa.string()) if tokens.type != pa.string() else tokens
    if arr.null_count:
        arr = arr.fill_null("")
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset: arr.offset + len(arr) + 1]
    data_buf = arr.buffers()[2]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return offsets.astype(np.int64), data[offsets[0]: offsets[-1]] if len(offsets) else data[:0]


def token_stats(tokens: pa.Array) -> TokenStats:
    """Entropy, class-switch rate and character classes of every token in ``tokens``."""
    n = len(tokens)
    if n == 0:
        empty = np.zeros(0)
        return TokenStats(empty.astype(np.int64), empty, empty, empty.astype(np.int64))
    offsets, data = _buffers(tokens)
    lengths = np.diff(offsets)
    token_of = np.repeat(np.arange(n), lengths)
    # Entropy: count each (token, byte) pair once, then sum -p*log2(p) per token.
    pair = token_of * 256 + data.astype(np.int64)
    uniq, counts = np.unique(pair, return_counts=True)
    owner = uniq // 256
    p = counts / lengths[owner]
    entropy = -np.bincount(owner, weights=p * np.log2(p), minlength=n)
    # Class switches between neighbours inside one token.
    cls = CLASS[data]
    same_token = token_of[1:] == token_of[:-1]
    switches = np.bincount(token_of[1:][same_token & (cls[1:] != cls[:-1])], minlength=n)
    rate = np.divide(switches, np.maximum(lengths - 1, 1))
    # Which classes occur in each token (bit set).
    classes = np.zeros(n, dtype=np.int64)
    for code, bit in CLASS_BITS:
        classes |= np.where(np.bincount(token_of[cls == code], minlength=n) > 0, bit, 0)
    return TokenStats(lengths, entropy, rate, classes)

"""Find secrets inside strings, vectorized over a whole Arrow array (RE2 regexes + numpy).

``scan`` returns, for each input string, the catalog rule id of the first secret
kind found in it (``secret-private-key``, ``secret-aws-access-key``, ...), or null.
It runs one combined prefilter regex over every value, the per-kind regexes only
over what passed, and the entropy test only over long mixed-class tokens; no
Python loop runs per value. What it deliberately does not flag: UUIDs, hex ids and
hashes (at most two character classes; a canonical UUID in one case, ``UUID``, is passed
over before the prefilter, as no kind can match it), host:port lists, dotted class names and
ordinary identifiers (low class-switch rate), compound ids such as Kafka Streams
thread client ids (their structured segments are taken out before the entropy test,
``udfs.rules.identity``), and ``${provider:...}`` references. ``scan_identity`` is
``scan`` for identity fields (client id, principal): a distinguished name's attribute
assignments (``CN=``, ``OU=``) separate tokens there before the entropy test.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Final, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from udfs.rules.entropy import token_stats
from udfs.rules.identity import SEGMENT_SEPARATORS, split_identity, strip_structure

__all__ = [
    "CERTIFICATE",
    "DIGIT",
    "ENTROPY_BITS",
    "ENTROPY_BITS_LONG",
    "ENTROPY_LONG_LEN",
    "ENTROPY_MIN_LEN",
    "HIGH_ENTROPY",
    "KINDS",
    "LOWER",
    "MIN_VALUE_CHARS",
    "PLACEHOLDER",
    "PREFILTER",
    "SECRET_GROUPS",
    "SWITCH_RATE",
    "TOKEN_CHARS",
    "TOKEN_RUN",
    "TOKEN_SPLIT",
    "UPPER",
    "UUID",
    "UUID_CHARS",
    "mask_secrets",
    "scan",
    "scan_identity",
    "scan_strings",
]


class _Kind(NamedTuple):
    rule: str
    pattern: str
    secret_group: bool  # True: the pattern names the secret part (groups s, t, u); placeholders there do not count


KINDS: Final[tuple[_Kind, ...]] = (
    _Kind("secret-private-key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", False),
    _Kind("secret-aws-access-key", r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}", False),
    _Kind("secret-github-token", r"gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82}", False),
    _Kind("secret-api-token", r"xox[abprs]-[0-9A-Za-z-]{10}|AIza[0-9A-Za-z_\-]{35}|[sr]k_live_[0-9A-Za-z]{24}", False),
    _Kind("secret-jwt", r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*", False),
    _Kind("secret-url-credentials",
          r"(?:[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:]+:(?P<s>[^\s/@]+)@"
          r"|(?:^|[\s,;])[^\s,;/?#@:=]+:(?P<t>[^\s,;/@]+)@[A-Za-z0-9.\-\[\]]+:[0-9]{1,5})", True),
    # A quoted value runs to its closing quote (a JAAS password="&..." may hold any character); an unquoted
    # one ends at whitespace, a quote, "," ";" or "&" (the next query parameter).
    _Kind("secret-password-fragment",
          r"(?i)(?:password|passwd|pwd|secret|token|api[_.\-]?key|access[_.\-]?key)[\"']?\s*[=:]\s*"
          r"(?:\"(?P<s>[^\"]{3,})\"|'(?P<t>[^']{3,})'|[\"']?(?P<u>[^\s\"',;&]{3,}))", True),
)
HIGH_ENTROPY: Final = "secret-high-entropy"

# Placeholders are not secrets: KIP-297 config provider references, masks, templates.
PLACEHOLDER: Final = r"^(?:\$\{.*|\*+|\[hidden\]|<[^>]*>|\{\{.*\}\}|%\(.*|x{3,}|\.{3,})$"
SECRET_GROUPS: Final = ("s", "t", "u")  # the names a kind's pattern may give its secret part, in coalesce order
TOKEN_CHARS: Final = r"A-Za-z0-9+/=_\-"
MIN_VALUE_CHARS: Final = 7
ENTROPY_MIN_LEN: Final = 20
ENTROPY_BITS: Final = 3.6           # bits per character, for tokens of 20..31 characters
ENTROPY_LONG_LEN: Final = 32        # tokens of this length and more need ENTROPY_BITS_LONG
ENTROPY_BITS_LONG: Final = 4.0      # for tokens of 32 characters and more
SWITCH_RATE: Final = 0.38           # share of neighbour pairs changing class
LOWER: Final = 1                    # the token_stats class bits
UPPER: Final = 2
DIGIT: Final = 4
CERTIFICATE: Final = r"-----BEGIN CERTIFICATE-----"


# Cheap necessary conditions of every kind: a 16-character token run (key ids, tokens, JWT
# parts, key bodies, entropy candidates), an "@" (credentials in URLs and host lists), or a
# keyword (password fragments). Only values passing it meet the per-kind regexes.
PREFILTER: Final = f"[{TOKEN_CHARS}]{{16}}|@|(?i:pass|pwd|secret|token|key)"
TOKEN_RUN: Final = f"[{TOKEN_CHARS}]{{{ENTROPY_MIN_LEN}}}"
TOKEN_SPLIT: Final = f"[^{TOKEN_CHARS}]+"  # what separates a value's tokens

# A canonical UUID in one case: KIP-714's client instance id as the edge writes it, on every
# connection event. No kind's pattern can match one (hex digits and dashes, no run of more than 12
# alphanumerics), and with two character classes the entropy test cannot flag it either, so it is
# passed over before the prefilter (tests/test_rules_secretscan.py checks both, pattern by pattern).
UUID_CHARS: Final = len(str(uuid.UUID(int=0)))
UUID: Final = r"^(?:[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|[0-9A-F]{8}(?:-[0-9A-F]{4}){3}-[0-9A-F]{12})$"


def _as_string_array(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if arr.type != pa.string():
        arr = arr.cast(pa.string())
    return arr


def _placeholder(extracted: pa.StructArray, names: list[str]) -> pa.Array:
    """True where every captured secret part is a placeholder (or nothing was captured)."""
    parts = [pc.struct_field(extracted, name) for name in names]
    parts = [pc.if_else(pc.equal(part, ""), pa.scalar(None, pa.string()), part) for part in parts]
    secret = parts[0]
    for other in parts[1:]:
        secret = pc.coalesce(secret, other)
    is_placeholder = pc.match_substring_regex(secret, PLACEHOLDER)
    return pc.fill_null(is_placeholder, True)


def _with_long_segments(tokens: pa.Array, owners: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """The tokens, then each of their ``-``/``_`` segments long enough to be judged on its own.

    A credential appended to a name (``checkout-7-<token>``) is diluted by the name when
    the token is judged whole; judged alone, it is what it is.
    """
    split = pc.split_pattern_regex(tokens, pattern=SEGMENT_SEPARATORS)
    segments = pc.list_flatten(split)
    parents = pc.list_parent_indices(split).to_numpy()
    several = (pc.list_value_length(split).to_numpy() > 1)[parents]
    keep = several & pc.greater_equal(pc.utf8_length(segments), ENTROPY_MIN_LEN).to_numpy(zero_copy_only=False)
    if not keep.any():
        return tokens, owners
    return (pa.concat_arrays([tokens, segments.filter(pa.array(keep))]),
            np.concatenate([owners, owners[parents[keep]]]))


def _high_entropy(values: pa.Array) -> np.ndarray:
    """Per value: True when one of its tokens looks like a random credential."""
    n = len(values)
    hit = np.zeros(n, dtype=bool)
    has_run = np.flatnonzero(pc.fill_null(pc.match_substring_regex(values, TOKEN_RUN), False).to_numpy(
        zero_copy_only=False))
    if len(has_run) == 0:
        return hit
    values = values.take(pa.array(has_run))
    split = pc.split_pattern_regex(values, pattern=TOKEN_SPLIT)
    tokens = pc.list_flatten(split)
    owners = pc.list_parent_indices(split).to_numpy()
    long_enough = pc.greater_equal(pc.utf8_length(tokens), ENTROPY_MIN_LEN).to_numpy(zero_copy_only=False)
    if not long_enough.any():
        return hit
    # Judge what is left of each token once the structure of compound ids is taken out.
    tokens = strip_structure(tokens.filter(pa.array(long_enough)))
    owners = owners[long_enough]
    long_enough = pc.greater_equal(pc.utf8_length(tokens), ENTROPY_MIN_LEN).to_numpy(zero_copy_only=False)
    tokens, owners = tokens.filter(pa.array(long_enough)), owners[long_enough]
    tokens, owners = _with_long_segments(tokens, owners)
    stats = token_stats(tokens)
    mixed = (stats.classes & (LOWER | UPPER | DIGIT)) == (LOWER | UPPER | DIGIT)
    bits = np.where(stats.length >= ENTROPY_LONG_LEN, ENTROPY_BITS_LONG, ENTROPY_BITS)
    random_like = mixed & (stats.entropy >= bits) & (stats.switch_rate >= SWITCH_RATE)
    found = np.zeros(len(values), dtype=bool)
    found[owners[random_like]] = True
    # A certificate's body is public, not a secret.
    cert = pc.fill_null(pc.match_substring(values, CERTIFICATE), False).to_numpy(zero_copy_only=False)
    hit[has_run[found & ~cert]] = True
    return hit


def scan(values: pa.Array | pa.ChunkedArray, *, identity: bool = False) -> pa.Array:
    """The rule id of the first secret kind found in each string (null: none, or a null input).

    ``identity``: the strings are identity fields; the entropy test judges each part of a
    distinguished name alone (``udfs.rules.identity.split_identity``), the other kinds the whole.
    """
    arr = _as_string_array(values)
    n = len(arr)
    out = np.full(n, None, dtype=object)
    if n == 0:
        return pa.array(out, pa.string())
    long_enough = pc.greater_equal(pc.utf8_length(arr), MIN_VALUE_CHARS)
    candidate = pc.and_(pc.and_(long_enough, pc.match_substring_regex(arr, PREFILTER)),
                        pc.invert(pc.match_substring_regex(arr, UUID)))
    idx = np.flatnonzero(pc.fill_null(candidate, False).to_numpy(zero_copy_only=False))
    if len(idx) == 0:
        return pa.array(out, pa.string())
    sub = arr.take(pa.array(idx))
    kinds = np.full(len(idx), None, dtype=object)
    open_ = np.ones(len(idx), dtype=bool)
    for kind in KINDS:
        if not open_.any():
            break
        mask = pc.fill_null(pc.match_substring_regex(sub, kind.pattern), False).to_numpy(zero_copy_only=False)
        mask &= open_
        if kind.secret_group and mask.any():
            names = [g for g in SECRET_GROUPS if f"(?P<{g}>" in kind.pattern]
            extracted = pc.extract_regex(sub, pattern=kind.pattern)
            mask &= ~_placeholder(extracted, names).to_numpy(zero_copy_only=False)
        kinds[mask] = kind.rule
        open_ &= ~mask
    if open_.any():
        rest = np.flatnonzero(open_)
        rest_values = sub.take(pa.array(rest))
        entropic = _high_entropy(split_identity(rest_values) if identity else rest_values)
        kinds[rest[entropic]] = HIGH_ENTROPY
    out[idx] = kinds
    return pa.array(out, pa.string())


def scan_identity(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``scan`` of identity fields (client ids, principals): see ``scan``'s ``identity``."""
    return scan(values, identity=True)


def scan_strings(values: Sequence[str | None]) -> list[str | None]:
    """Convenience for small Python lists (tests, the bench): ``scan`` over ``pa.array(values)``."""
    return scan(pa.array(values, pa.string())).to_pylist()


def mask_secrets(values: Sequence[str], replace: Callable[[str], str], *, identity: bool = False) -> list[str]:
    """``values`` with every string ``scan`` flags swapped for ``replace(value)``; one scan per distinct value."""
    distinct = list(dict.fromkeys(values))
    found = scan(pa.array(distinct, pa.string()), identity=identity).to_pylist()
    swaps = {v: replace(v) for v, kind in zip(distinct, found, strict=True) if kind is not None}
    return [swaps.get(v, v) for v in values] if swaps else list(values)

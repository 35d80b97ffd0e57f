"""Split whole replay files (JSON Lines) into one raw record per line, with the line number.

Spark's text source reads a whole file per row (``wholetext``), because only the
whole file knows its line numbers; this turns such rows into ``value`` (the
line's bytes, without its ``\\n`` or ``\\r\\n``), ``file`` and ``line`` (counted
from 1). Blank lines (empty or JSON whitespace only) are no records and are
skipped; their numbers still count.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["FILE_COLUMNS", "split_lines"]

FILE_COLUMNS = (pa.field("file", pa.string()), pa.field("line", pa.int64()))


def split_lines(texts: pa.Array, files: pa.Array) -> pa.Table:
    """One row per non-blank line of each text: ``value`` (binary), ``file``, ``line``."""
    if pa.types.is_string(texts.type) or pa.types.is_large_string(texts.type):
        texts = texts.cast(pa.binary())
    texts = texts.fill_null(b"")
    parts = pc.split_pattern(texts, b"\n")
    flat = pc.list_flatten(parts)
    parents = pc.list_parent_indices(parts).to_numpy()
    offsets = parts.offsets.to_numpy()
    line = np.arange(len(flat), dtype=np.int64) - offsets[parents] + 1
    flat = pc.if_else(pc.ends_with(flat, b"\r"), pc.binary_slice(flat, 0, -1), flat)
    keep = pc.invert(pc.match_substring_regex(flat, r"^[ \t\r]*$"))
    table = pa.table({
        "value": flat,
        "file": files.cast(pa.string()).take(pa.array(parents)),
        "line": pa.array(line, pa.int64()),
    })
    return table.filter(keep)

"""The vectorized fast path of decode: pyarrow's C++ JSON reader plus contract checks as Arrow kernels.

``fast_parse`` reads a batch of raw records with ``pyarrow.json.read_json``
(newline-joined in one buffer, explicit schema), one call per segment of up
to ``SEGMENT_ROWS`` consecutive candidates (records that look like objects). It only *accepts*: a row is returned as
parsed when the reader typed it and every section-3 check passed; every other
row (not JSON, wrong types, a failed check, anything unusual) is left for the
exact per-row path (``udfs.classify``), which gives the quarantine reason. So
the two paths cannot disagree on a reason; the tests check that they agree on
validity.

A read the reader rejects is cut at the row its error names (``... in row N``:
each read is one block, so N counts from the read's first row): the rows before
it are read again, the row goes per-row, the rest is read on. So each bad row
costs one re-read of at most the rows before it in its segment, not a per-row
pass over the batch. An error without a row (two objects on one line) bisects the
segment instead. A budget of reads and re-read bytes bounds dense garbage: past
it the per-row path takes the rest (see ``_read_cutting``), so the worst case
stays close to the per-row cost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from configwatch.contract import (
    CONFIG_PUSH,
    CONFIG_TYPES,
    EVENT_FIELDS,
    EVENT_TYPES,
    SCHEMA_VERSION,
    SOFTWARE_MAX_CHARS,
    SOFTWARE_PATTERN,
)
from udfs.schema import EVENT_SCHEMA

__all__ = ["FastResult", "fast_parse"]

_PARSE = pj.ParseOptions(explicit_schema=EVENT_SCHEMA, unexpected_field_behavior="ignore")
_BISECT_FLOOR = 8  # below this many rows a failing slice without a named row goes per-row
SEGMENT_ROWS = 512  # rows per first read: a bad row costs a re-read of at most this many (docs/benchmarks.md)
_THREADS = False  # the worker runs one task per core already
_REREAD_BUDGET = 4  # failed reads may cost at most this many times the batch's bytes
_READS_PER_ROW = 1 / 32  # ... and at most this many reads per row (plus a few): dense garbage goes per-row
_ERROR_ROW = re.compile(r" in row (\d+)$")
# The list fields besides configs, with their elements' required fields.
_REQUIRED_ITEMS = {spec.name: [item.name for item in spec.items if item.required]
                   for spec in EVENT_FIELDS if spec.items is not None}


@dataclass(frozen=True)
class FastResult:
    """Rows the fast path accepted and the rest: ``table`` holds every row the reader read (chunked, in
    input order), of which ``rows`` were accepted, at ``positions`` of the input; ``rest`` goes per-row."""

    table: pa.Table
    rows: np.ndarray
    positions: np.ndarray
    rest: np.ndarray


def _candidates(values: pa.Array) -> np.ndarray:
    """Mask of rows worth a fast read: text that starts with ``{`` and ends with ``}``, in UTF-8.

    A record with a line break inside reads as several rows or fails; either
    way ``_read`` discards the read (row count check), so no blank-only record
    (which would read as zero rows) may enter: the brace test excludes those.
    """
    mask = pc.and_kleene(pc.starts_with(values, b"{"), pc.ends_with(values, b"}"))
    mask = mask.fill_null(False).to_numpy(zero_copy_only=False).astype(bool)
    try:
        values.cast(pa.string())
    except pa.ArrowInvalid:  # some row is not UTF-8: keep only the candidates that are
        for i in np.flatnonzero(mask).tolist():
            try:
                values[i].as_py().decode("utf-8")
            except UnicodeDecodeError:
                mask[i] = False
    return mask


def _segments(mask: np.ndarray) -> list[tuple[int, int]]:
    """Row ranges [lo, hi) of consecutive candidates, at most ``SEGMENT_ROWS`` long, in row order."""
    edges = np.diff(np.concatenate(([False], mask, [False])).astype(np.int8))
    starts, ends = np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()
    return [(lo, min(lo + SEGMENT_ROWS, end)) for start, end in zip(starts, ends, strict=True)
            for lo in range(start, end, SEGMENT_ROWS)]


class _Lines:
    """The records joined by newlines in one buffer, addressable by row range (a null row is empty)."""

    def __init__(self, records: pa.Array) -> None:
        joined = pc.binary_join_element_wise(records, b"", b"\n")  # each record + "\n"
        if joined.offset:
            joined = pa.concat_arrays([joined])  # rebase so offsets index the buffer
        self.data = joined.buffers()[2] or pa.py_buffer(b"")
        self.offsets = np.frombuffer(joined.buffers()[1], dtype=np.int32)[: len(joined) + 1]

    def nbytes(self, lo: int, hi: int) -> int:
        return int(self.offsets[hi] - self.offsets[lo])

    def read(self, lo: int, hi: int) -> tuple[pa.Table | None, int | None]:
        """Rows [lo, hi) as one table, or None and the row (absolute) the reader's error names, if any."""
        start, size = int(self.offsets[lo]), self.nbytes(lo, hi)
        try:
            # One block for the whole read, so an error's row number counts from ``lo``.
            table = pj.read_json(pa.BufferReader(self.data.slice(start, size)),
                                 read_options=pj.ReadOptions(block_size=size + 1, use_threads=_THREADS),
                                 parse_options=_PARSE)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            found = _ERROR_ROW.search(str(exc))
            row = lo + int(found.group(1)) if found else None
            return None, row if row is not None and lo <= row < hi else None
        # Two objects on one line would shift every later row: such a read is thrown away.
        return (table, None) if table.num_rows == hi - lo else (None, None)


def _read_cutting(lines: _Lines, segments: list[tuple[int, int]], out: list[tuple[pa.Table, int, int]]) -> None:
    """Read each segment in as few reads as possible; rows that never read are left out (they go per-row).

    A failed read whose error names a row is cut there (the row is left out, both
    sides are read again); one that names none is split in two down to
    ``_BISECT_FLOOR`` rows. Stops when the failed reads exceed the budget of
    reads or of re-read bytes.
    """
    todo = segments[::-1]
    byte_budget = _REREAD_BUDGET * max(1, sum(lines.nbytes(lo, hi) for lo, hi in segments))
    read_budget = 8 + int(sum(hi - lo for lo, hi in segments) * _READS_PER_ROW)
    while todo:
        lo, hi = todo.pop()
        if hi <= lo:
            continue
        table, bad = lines.read(lo, hi)
        if table is not None:
            out.append((table, lo, hi))
            continue
        byte_budget -= lines.nbytes(lo, hi if bad is None else bad + 1)  # the reader stops at the bad row
        read_budget -= 1
        if byte_budget <= 0 or read_budget <= 0:
            return  # dense garbage: what is left goes per-row
        if bad is not None:
            todo += [(bad + 1, hi), (lo, bad)]  # the part before the bad row is read first
        elif hi - lo > _BISECT_FLOOR:
            mid = (lo + hi) // 2
            todo += [(mid, hi), (lo, mid)]


def _valid_software(column: pa.ChunkedArray) -> pa.ChunkedArray:
    matches = pc.and_kleene(pc.match_substring_regex(column, SOFTWARE_PATTERN.pattern),
                            pc.less_equal(pc.utf8_length(column), SOFTWARE_MAX_CHARS))
    return pc.or_kleene(pc.or_kleene(pc.is_null(column), pc.equal(column, "")), matches).fill_null(False)


def _entries_ok(configs: pa.ChunkedArray) -> np.ndarray:
    """Per row: every configs entry is an object with key, type (a ConfigDef.Type name) and is_default."""
    n = len(configs)
    flat_parts, parent_parts = [], []
    for chunk in configs.chunks:
        flat_parts.append(pc.list_flatten(chunk))
        parent_parts.append(pc.list_parent_indices(chunk))
    bad_rows = np.zeros(n, dtype=bool)
    base = 0
    for chunk, flat, parents in zip(configs.chunks, flat_parts, parent_parts, strict=True):
        if len(flat):
            ok = pc.is_valid(flat)
            ok = pc.and_(ok, pc.is_valid(pc.struct_field(flat, "key")))
            ok = pc.and_(ok, pc.is_valid(pc.struct_field(flat, "is_default")))
            ok = pc.and_(ok, pc.is_in(pc.struct_field(flat, "type"), pa.array(CONFIG_TYPES)).fill_null(False))
            bad = np.flatnonzero(~ok.fill_null(False).to_numpy(zero_copy_only=False))
            if len(bad):
                bad_rows[base + parents.to_numpy()[bad]] = True
        base += len(chunk)
    return ~bad_rows


def _items_ok(column: pa.ChunkedArray, required: list[str]) -> np.ndarray:
    """Per row: a null list, or every element an object with each of ``required`` set."""
    bad_rows = np.zeros(len(column), dtype=bool)
    base = 0
    for chunk in column.chunks:
        flat = pc.list_flatten(chunk)
        if len(flat):
            ok = pc.is_valid(flat)
            for name in required:
                ok = pc.and_(ok, pc.is_valid(pc.struct_field(flat, name)))
            bad = np.flatnonzero(~ok.fill_null(False).to_numpy(zero_copy_only=False))
            if len(bad):
                bad_rows[base + pc.list_parent_indices(chunk).to_numpy()[bad]] = True
        base += len(chunk)
    return ~bad_rows


def _contract_ok(table: pa.Table) -> np.ndarray:
    """Boolean mask of rows that satisfy every check of ``validate_event`` (types are the reader's)."""
    event = table["event"]
    ok = pc.equal(table["schema_version"], SCHEMA_VERSION).fill_null(False)
    ok = pc.and_(ok, pc.is_in(event, pa.array(EVENT_TYPES)).fill_null(False))
    ok = pc.and_(ok, pc.is_valid(table["timestamp_ms"]))
    ok = pc.and_(ok, _valid_software(table["client_software_name"]))
    ok = pc.and_(ok, _valid_software(table["client_software_version"]))
    is_push = pc.equal(event, CONFIG_PUSH).fill_null(False)
    push_ok = pc.is_valid(table["configs"])
    conn_ok = pc.is_valid(table["connection_id"])
    ok = pc.and_(ok, pc.if_else(is_push, push_ok, conn_ok))
    mask = ok.to_numpy(zero_copy_only=False).astype(bool)
    for name, required in _REQUIRED_ITEMS.items():
        if table[name].null_count < table.num_rows:
            mask &= _items_ok(table[name], required)
    if pc.any(is_push).as_py():
        mask &= _entries_ok(table["configs"]) | ~is_push.to_numpy(zero_copy_only=False).astype(bool)
    return mask


def fast_parse(values: pa.Array) -> FastResult:
    """Split ``values`` (binary, one raw record each) into fast-accepted rows and rows for the exact path.

    The reads stay as the reader gave them (no copy): the caller gathers what it keeps in one ``take``.
    """
    n = len(values)
    segments = _segments(_candidates(values))
    reads: list[tuple[pa.Table, int, int]] = []
    if segments:
        _read_cutting(_Lines(values), segments, reads)
    if reads:
        table = pa.concat_tables([t for t, _, _ in reads])
        read_pos = np.concatenate([np.arange(lo, hi, dtype=np.int64) for _, lo, hi in reads])
        rows = np.flatnonzero(_contract_ok(table))
        pos = read_pos[rows]
    else:
        table = EVENT_SCHEMA.empty_table()
        rows = pos = np.empty(0, dtype=np.int64)
    accepted = np.zeros(n, dtype=bool)
    accepted[pos] = True
    return FastResult(table=table, rows=rows, positions=pos, rest=np.flatnonzero(~accepted))

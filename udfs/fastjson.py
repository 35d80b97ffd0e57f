"""The vectorized fast path of decode: pyarrow's C++ JSON reader plus contract checks as Arrow kernels.

``fast_parse`` reads a batch of raw records in one ``pyarrow.json.read_json``
call (newline-joined, explicit schema). It only *accepts*: a row is returned as
parsed when the reader typed it and every section-3 check passed; every other
row (not JSON, wrong types, a failed check, anything unusual) is left for the
exact per-row path (``udfs.classify``), which gives the quarantine reason. So
the two paths cannot disagree on a reason; the tests check that they agree on
validity.

A batch the reader rejects is bisected, so one bad row costs a few re-reads of
its neighbourhood, not a per-row pass over the whole batch; when garbage is
dense, bisection stops early and the per-row path takes the rest (see
``_read_bisecting``), so the worst case stays close to the per-row cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from configwatch.contract import CONFIG_PUSH, CONFIG_TYPES, EVENT_TYPES, SCHEMA_VERSION, SOFTWARE_PATTERN
from udfs.schema import EVENT_SCHEMA

__all__ = ["FastResult", "fast_parse"]

_PARSE = pj.ParseOptions(explicit_schema=EVENT_SCHEMA, unexpected_field_behavior="ignore")
_MIN_BLOCK = 1 << 20
_BISECT_FLOOR = 8  # below this many rows a failing slice goes per-row
_THREADS = False  # the worker runs one task per core already
_REREAD_BUDGET = 4  # bisection may re-read at most this many times the batch's bytes


@dataclass(frozen=True)
class FastResult:
    """Rows the fast path accepted (``table``, at ``positions`` of the input) and the rest."""

    table: pa.Table
    positions: np.ndarray
    rest: np.ndarray


def _candidates(values: pa.Array) -> np.ndarray:
    """Positions worth a fast read: text that starts with ``{`` and ends with ``}``, in UTF-8.

    A record with a line break inside reads as several rows or fails; either
    way ``_read`` discards the read (row count check), so no blank-only record
    (which would read as zero rows) may enter: the brace test excludes those.
    """
    mask = pc.and_kleene(pc.starts_with(values, b"{"), pc.ends_with(values, b"}"))
    positions = np.flatnonzero(mask.fill_null(False).to_numpy(zero_copy_only=False))
    chosen = values.take(pa.array(positions, pa.int64()))
    try:
        chosen.cast(pa.string())
    except pa.ArrowInvalid:  # some row is not UTF-8: keep only those that are
        keep = []
        for i, raw in zip(positions, chosen.to_pylist(), strict=True):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
            keep.append(i)
        positions = np.asarray(keep, dtype=np.int64)
    return positions.astype(np.int64)


class _Lines:
    """The candidate records joined by newlines in one buffer, addressable by row range."""

    def __init__(self, records: pa.Array) -> None:
        joined = pc.binary_join_element_wise(records, b"", b"\n")  # each record + "\n"
        if joined.offset:
            joined = pa.concat_arrays([joined])  # rebase so offsets index the buffer
        self.data = joined.buffers()[2] or pa.py_buffer(b"")
        self.offsets = np.frombuffer(joined.buffers()[1], dtype=np.int32)[: len(joined) + 1]
        lengths = np.diff(self.offsets)
        self.block = max(_MIN_BLOCK, int(lengths.max()) + 2 if len(lengths) else 0)

    def read(self, lo: int, hi: int) -> pa.Table | None:
        start, stop = int(self.offsets[lo]), int(self.offsets[hi])
        try:
            table = pj.read_json(pa.BufferReader(self.data.slice(start, stop - start)),
                                 read_options=pj.ReadOptions(block_size=self.block, use_threads=_THREADS),
                                 parse_options=_PARSE)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
        # Two objects on one line would shift every later row: such a read is thrown away.
        return table if table.num_rows == hi - lo else None


def _read_bisecting(lines: _Lines, n: int, out: list[tuple[pa.Table, int, int]]) -> None:
    """Read rows [0, n) in as few reads as possible; rows in segments that never read are left out.

    Breadth first: a failed segment splits in two for the next round. The search
    gives up (those rows go per-row) when a round of several segments all fail
    (garbage is dense: splitting further costs more than the per-row path) or
    when the bytes re-read exceed ``_REREAD_BUDGET`` times the batch.
    """
    segments = [(0, n)]
    budget = _REREAD_BUDGET * max(1, int(lines.offsets[n] - lines.offsets[0]))
    while segments:
        failed = []
        for lo, hi in segments:
            budget -= int(lines.offsets[hi] - lines.offsets[lo])
            table = lines.read(lo, hi)
            if table is not None:
                out.append((table, lo, hi))
            elif hi - lo > _BISECT_FLOOR:
                failed.append((lo, hi))
        if len(failed) >= 4 and len(failed) == len(segments):
            return  # dense garbage
        if budget <= 0:
            return
        segments = [half for lo, hi in failed for half in ((lo, (lo + hi) // 2), ((lo + hi) // 2, hi))]


def _valid_software(column: pa.ChunkedArray) -> pa.ChunkedArray:
    matches = pc.match_substring_regex(column, SOFTWARE_PATTERN.pattern)
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
    if pc.any(is_push).as_py():
        mask &= _entries_ok(table["configs"]) | ~is_push.to_numpy(zero_copy_only=False).astype(bool)
    return mask


def fast_parse(values: pa.Array) -> FastResult:
    """Split ``values`` (binary, one raw record each) into fast-accepted rows and rows for the exact path."""
    n = len(values)
    candidates = _candidates(values)
    tables: list[pa.Table] = []
    positions: list[np.ndarray] = []
    if len(candidates):
        lines = _Lines(values.take(pa.array(candidates, pa.int64())))
        reads: list[tuple[pa.Table, int, int]] = []
        _read_bisecting(lines, len(candidates), reads)
        for table, lo, hi in reads:
            tables.append(table)
            positions.append(candidates[lo:hi])
    if tables:
        table = pa.concat_tables(tables).combine_chunks()
        pos = np.concatenate(positions)
        ok = _contract_ok(table)
        table = table.filter(pa.array(ok))
        pos = pos[ok]
    else:
        table = EVENT_SCHEMA.empty_table()
        pos = np.empty(0, dtype=np.int64)
    accepted = np.zeros(n, dtype=bool)
    accepted[pos] = True
    return FastResult(table=table, positions=pos.astype(np.int64), rest=np.flatnonzero(~accepted))

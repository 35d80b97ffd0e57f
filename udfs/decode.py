"""Decode raw input records (bytes) into typed contract columns, or a quarantine reason.

``decode_values`` is a plain function over one Arrow array of raw records: the
Arrow JSON fast path (``udfs.fastjson``) accepts what it can, the exact per-row
path (``udfs.classify``) decides the rest, then the GX suite
(``udfs.expectations``) checks the valid rows. A row is either valid (``reason``
null, typed fields filled) or invalid (``reason`` set, fields null): nothing is
dropped and no payload is copied.

``decode_batches`` (Kafka records) and ``decode_file_batches`` (whole replay
files, split into lines) are the ``mapInArrow`` bodies; ``streaming.decode``
wires them into Spark, tests call everything directly.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from configwatch.contract import CONFIG_PUSH
from configwatch.errors import ContractError
from udfs.classify import parse_record
from udfs.expectations import CHECKED_COLUMNS, BatchValidator
from udfs.fastjson import fast_parse
from udfs.schema import DECODED_FIELDS, ENTRY_NAMES, ENTRY_TYPE, EVENT_NAMES, EVENT_SCHEMA, LIST_FIELDS
from udfs.split_lines import FILE_COLUMNS, split_lines

__all__ = [
    "DECODED_FIELDS",
    "ENTRY_TYPE",
    "DecodeStats",
    "apply_expectations",
    "decode_batch",
    "decode_batches",
    "decode_file_batches",
    "decode_values",
    "file_output_schema",
    "output_schema",
]

OUTPUT_CHUNK_ROWS = 10_000
GX_MIN_ROWS = 50_000  # rows of a partition validated per GX call (GX costs mostly per call)


@dataclass
class DecodeStats:
    """Counts and costs of decoding one or more batches (summed with ``+=``)."""

    records: int = 0
    valid: int = 0
    invalid: int = 0
    expectation_failed: int = 0
    fast_rows: int = 0
    decode_seconds: float = 0.0
    gx_seconds: float = 0.0
    gx_batches: int = 0
    gx_errors: int = 0
    failed_by_expectation: dict[str, int] = field(default_factory=dict)

    def __iadd__(self, other: DecodeStats) -> DecodeStats:
        for name in ("records", "valid", "invalid", "expectation_failed", "fast_rows", "decode_seconds",
                     "gx_seconds", "gx_batches", "gx_errors"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name, count in other.failed_by_expectation.items():
            self.failed_by_expectation[name] = self.failed_by_expectation.get(name, 0) + count
        return self

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__, failed_by_expectation=dict(self.failed_by_expectation))


def output_schema(passthrough: pa.Schema) -> pa.Schema:
    """Decoded fields followed by the input's pass-through (source coordinate) columns."""
    return pa.schema(DECODED_FIELDS + [f for f in passthrough if f.name != "value"])


def file_output_schema() -> pa.Schema:
    """Decoded fields followed by the replay coordinates ``file`` and ``line``."""
    return pa.schema(DECODED_FIELDS + list(FILE_COLUMNS))


def _slow_rows(values: pa.Array, positions: np.ndarray) -> tuple[list[dict[str, Any]], list[int],
                                                                   dict[int, ContractError]]:
    rows: list[dict[str, Any]] = []
    ok_positions: list[int] = []
    errors: dict[int, ContractError] = {}
    raws = values.take(pa.array(positions, pa.int64())).to_pylist()
    for pos, raw in zip(positions.tolist(), raws, strict=True):
        try:
            obj = parse_record(raw)
        except ContractError as err:
            errors[pos] = err
            continue
        row = {name: obj.get(name) for name in EVENT_NAMES}
        for name, item_names in LIST_FIELDS.items():
            items = row[name]
            if items is not None:
                row[name] = [{k: item.get(k) for k in item_names} for item in items]
        entries = obj.get("configs") if obj["event"] == CONFIG_PUSH else None
        row["configs"] = None if entries is None else [{k: e.get(k) for k in ENTRY_NAMES} for e in entries]
        rows.append(row)
        ok_positions.append(pos)
    return rows, ok_positions, errors


def _null_configs_unless_push(table: pa.Table) -> pa.Table:
    is_push = pc.equal(table["event"], CONFIG_PUSH).fill_null(False)
    if not pc.any(pc.and_(pc.invert(is_push), pc.is_valid(table["configs"]))).as_py():
        return table  # the usual case: connection events carry no configs
    configs = pc.if_else(is_push, table["configs"], pa.scalar(None, table.schema.field("configs").type))
    return table.set_column(table.schema.get_field_index("configs"), "configs", configs)


def _decode(values: pa.Array, exact_only: bool) -> tuple[pa.Table, DecodeStats]:
    """Contract decode only (no GX): ``DECODED_FIELDS`` rows in input order."""
    started = time.perf_counter()
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        values = values.cast(pa.binary())
    n = len(values)
    stats = DecodeStats(records=n)
    if exact_only:
        fast_table, fast_rows, fast_pos, rest = (EVENT_SCHEMA.empty_table(), np.empty(0, np.int64),
                                                 np.empty(0, np.int64), np.arange(n))
    else:
        fast = fast_parse(values)
        fast_table, fast_rows, fast_pos, rest = (_null_configs_unless_push(fast.table), fast.rows, fast.positions,
                                                 fast.rest)
    stats.fast_rows = len(fast_pos)
    slow, slow_pos, errors = _slow_rows(values, rest)
    valid = pa.concat_tables([fast_table, pa.Table.from_pylist(slow, schema=EVENT_SCHEMA)])
    reasons: list[str | None] = [None] * n
    details: list[str | None] = [None] * n
    for pos, err in errors.items():
        reasons[pos], details[pos] = err.reason, err.detail
    gather = np.full(n, -1, dtype=np.int64)  # the input's rows from ``valid``, in one copy
    gather[fast_pos] = fast_rows
    gather[np.asarray(slow_pos, dtype=np.int64)] = fast_table.num_rows + np.arange(len(slow_pos))
    decoded = valid.take(pa.array(gather, mask=gather < 0))
    decoded = decoded.append_column(DECODED_FIELDS[-3], pa.array(reasons, pa.string()))
    decoded = decoded.append_column(DECODED_FIELDS[-2], pa.array(details, pa.string()))
    decoded = decoded.append_column(DECODED_FIELDS[-1], pc.binary_length(values).cast(pa.int64()).fill_null(0))
    stats.valid = len(fast_pos) + len(slow_pos)
    stats.invalid = n - stats.valid
    stats.decode_seconds = time.perf_counter() - started
    return decoded, stats


def apply_expectations(decoded: pa.Table, validator: BatchValidator, stats: DecodeStats,
                       now_ms: int | None = None) -> pa.Table:
    """Run the GX suite over the valid rows of ``decoded`` (any table with ``DECODED_FIELDS``, pass-through
    columns allowed); failing rows get ``reason = expectation:<name>`` and lose their event fields.
    ``stats`` is updated in place.
    """
    reasons = decoded.column("reason")
    is_valid = pc.is_null(reasons)
    valid_rows = np.flatnonzero(is_valid.to_numpy(zero_copy_only=False))
    if not len(valid_rows):
        return decoded
    checked_columns = decoded.select(CHECKED_COLUMNS)
    if len(valid_rows) < decoded.num_rows:
        checked_columns = checked_columns.filter(is_valid)
    checked = validator.validate(checked_columns, now_ms)
    stats.gx_seconds += checked.seconds
    stats.gx_batches += 1
    stats.gx_errors += checked.errors
    for name, count in checked.failed_by_name.items():
        stats.failed_by_expectation[name] = stats.failed_by_expectation.get(name, 0) + count
    if not checked.failures:
        return decoded
    stats.expectation_failed += len(checked.failures)
    stats.valid -= len(checked.failures)
    stats.invalid += len(checked.failures)
    reason_list, detail_list = reasons.to_pylist(), decoded.column("detail").to_pylist()
    gather = np.arange(decoded.num_rows, dtype=np.int64)
    for row, name in checked.failures.items():
        pos = int(valid_rows[row])
        reason_list[pos], detail_list[pos] = f"expectation:{name}", checked.detail(name)
        gather[pos] = -1
    cleared = decoded.select(EVENT_SCHEMA.names).take(pa.array(gather, mask=gather < 0))
    for f in EVENT_SCHEMA:
        decoded = decoded.set_column(decoded.schema.get_field_index(f.name), f, cleared.column(f.name))
    decoded = decoded.set_column(decoded.schema.get_field_index("reason"), DECODED_FIELDS[-3],
                                 pa.array(reason_list, pa.string()))
    return decoded.set_column(decoded.schema.get_field_index("detail"), DECODED_FIELDS[-2],
                              pa.array(detail_list, pa.string()))


def decode_values(values: pa.Array, *, validator: BatchValidator | None = None, now_ms: int | None = None,
                  exact_only: bool = False) -> tuple[pa.Table, DecodeStats]:
    """Decode raw records (binary or string array) into a table of ``DECODED_FIELDS``, in input order.

    ``validator`` (the GX suite) checks valid rows; ``exact_only`` skips the fast
    path (tests use it to compare both paths).
    """
    decoded, stats = _decode(values, exact_only)
    if validator is not None:
        decoded = apply_expectations(decoded, validator, stats, now_ms)
    return decoded, stats


def _with_passthrough(decoded: pa.Table, batch: pa.RecordBatch) -> pa.Table:
    for i, f in enumerate(batch.schema):
        if f.name != "value":
            decoded = decoded.append_column(f, batch.column(i))
    return decoded


def decode_batch(batch: pa.RecordBatch, *, validator: BatchValidator | None = None,
                 now_ms: int | None = None) -> tuple[pa.RecordBatch, DecodeStats]:
    """Decode the ``value`` column of ``batch``; other columns pass through unchanged."""
    decoded, stats = decode_values(batch.column("value"), validator=validator, now_ms=now_ms)
    out = _with_passthrough(decoded, batch).combine_chunks().to_batches()
    merged = out[0] if out else pa.RecordBatch.from_pylist([], schema=output_schema(batch.schema))
    return merged, stats


Reporter = Callable[[DecodeStats], None]


def _validator(validate: bool) -> BatchValidator | None:
    if not validate:
        return None
    from udfs.expectations import get_validator

    return get_validator()


def _validated(tables: Iterable[tuple[pa.Table, DecodeStats]], validator: BatchValidator | None,
               report: Reporter | None) -> Iterator[pa.RecordBatch]:
    """GX runs once per ``GX_MIN_ROWS`` decoded rows (its cost is mostly per call), then batches go out."""
    pending: list[pa.Table] = []
    pending_stats = DecodeStats()
    rows = 0

    def flush() -> Iterator[pa.RecordBatch]:
        nonlocal pending, pending_stats, rows
        if not pending:
            return
        table = pa.concat_tables(pending)
        if validator is not None:
            table = apply_expectations(table, validator, pending_stats)
        if report is not None:
            report(pending_stats)
        yield from table.combine_chunks().to_batches(max_chunksize=OUTPUT_CHUNK_ROWS)
        pending, pending_stats, rows = [], DecodeStats(), 0

    for table, stats in tables:
        pending.append(table)
        pending_stats += stats
        rows += table.num_rows
        if rows >= GX_MIN_ROWS:
            yield from flush()
    yield from flush()


def decode_batches(batches: Iterable[pa.RecordBatch], *, validate: bool = True,
                   report: Reporter | None = None) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` body for Kafka records: decode every batch of a partition."""
    decoded = ((_with_passthrough(t, b), s) for b in batches for t, s in [_decode(b.column("value"), False)])
    yield from _validated(decoded, _validator(validate), report)


def decode_file_batches(batches: Iterable[pa.RecordBatch], *, validate: bool = True,
                        report: Reporter | None = None) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` body for replay files: rows of (``value`` = whole file, ``file``) -> one row per line."""
    schema = file_output_schema()

    def decoded() -> Iterator[tuple[pa.Table, DecodeStats]]:
        for batch in batches:
            lines = split_lines(batch.column("value"), batch.column("file"))
            for start in range(0, lines.num_rows, OUTPUT_CHUNK_ROWS):
                chunk = lines.slice(start, OUTPUT_CHUNK_ROWS)
                table, stats = _decode(chunk["value"].combine_chunks(), False)
                for f in FILE_COLUMNS:
                    table = table.append_column(f, chunk[f.name])
                yield table.cast(schema), stats

    yield from _validated(decoded(), _validator(validate), report)

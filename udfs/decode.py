"""Decode raw input records (bytes) into typed contract columns, or a quarantine reason.

``decode_batch`` is a plain function over one Arrow record batch; Spark calls it
through ``mapInArrow`` (see ``streaming.decode``), tests call it directly.
A row is either valid (``reason`` null, typed fields filled) or invalid
(``reason`` set, fields null): nothing is dropped and no payload is copied.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

from configwatch.contract import EVENT_FIELDS
from configwatch.errors import ContractError
from configwatch.records import validate_event

__all__ = ["DECODED_FIELDS", "ENTRY_TYPE", "decode_batch", "decode_batches", "output_schema"]

ENTRY_TYPE = pa.struct([
    ("key", pa.string()),
    ("value", pa.string()),
    ("type", pa.string()),
    ("is_default", pa.bool_()),
    ("redacted", pa.bool_()),
    ("fingerprint", pa.string()),
])

_ARROW_TYPES = {int: pa.int64(), str: pa.string(), bool: pa.bool_()}

# Event fields (in contract order), then configs, then the quarantine verdict.
DECODED_FIELDS: list[pa.Field] = [
    pa.field(spec.name, _ARROW_TYPES[spec.json_type]) for spec in EVENT_FIELDS
] + [
    pa.field("configs", pa.list_(ENTRY_TYPE)),
    pa.field("reason", pa.string()),
    pa.field("detail", pa.string()),
    pa.field("size_bytes", pa.int64()),
]
_EVENT_NAMES = [spec.name for spec in EVENT_FIELDS]
_ENTRY_NAMES = [f.name for f in ENTRY_TYPE]


def output_schema(passthrough: pa.Schema) -> pa.Schema:
    """Decoded fields followed by the input's pass-through (source coordinate) columns."""
    return pa.schema(DECODED_FIELDS + [f for f in passthrough if f.name != "value"])


def _parse(raw: bytes | str | None) -> Any:
    if raw is None:
        raise ContractError("not_json", "the record has no value")
    try:
        obj = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        raise ContractError("not_json", "the record is not UTF-8 JSON") from None
    validate_event(obj)
    return obj


def decode_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Decode the ``value`` column of ``batch``; other columns pass through unchanged."""
    values = batch.column("value").to_pylist()
    columns: dict[str, list[Any]] = {name: [] for name in _EVENT_NAMES}
    configs: list[list[dict[str, Any]] | None] = []
    reasons: list[str | None] = []
    details: list[str | None] = []
    sizes: list[int] = []
    for raw in values:
        sizes.append(len(raw) if raw is not None else 0)
        try:
            obj = _parse(raw)
        except ContractError as err:
            for name in _EVENT_NAMES:
                columns[name].append(None)
            configs.append(None)
            reasons.append(err.reason)
            details.append(err.detail)
            continue
        for name in _EVENT_NAMES:
            columns[name].append(obj.get(name))
        entries = obj.get("configs")
        configs.append(
            None if entries is None else [{k: e.get(k) for k in _ENTRY_NAMES} for e in entries]
        )
        reasons.append(None)
        details.append(None)
    arrays = [pa.array(columns[f.name], f.type) for f in DECODED_FIELDS[: len(_EVENT_NAMES)]]
    arrays += [
        pa.array(configs, pa.list_(ENTRY_TYPE)),
        pa.array(reasons, pa.string()),
        pa.array(details, pa.string()),
        pa.array(sizes, pa.int64()),
    ]
    passthrough = [(f, batch.column(i)) for i, f in enumerate(batch.schema) if f.name != "value"]
    arrays += [col for _, col in passthrough]
    return pa.RecordBatch.from_arrays(arrays, schema=output_schema(batch.schema))


def decode_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` body: decode every batch of a partition."""
    for batch in batches:
        yield decode_batch(batch)

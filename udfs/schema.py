"""Arrow types of decoded records: the contract's event fields, the configs entries, the verdict.

One statement of the decoded column names and types, shared by the decode UDF,
the Arrow JSON fast path and the GX suite (and, through ``streaming.decode``,
by Spark). :func:`record_fields` and :func:`state_ddl` derive the Arrow fields and
the Spark state DDL of the other records (findings, gauges, connection state) from
their dataclasses, so each shape is written once.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ForwardRef

import pyarrow as pa

from configwatch.contract import ENTRY_FIELDS, EVENT_FIELDS, FieldSpec

__all__ = [
    "DECODED_FIELDS",
    "ENTRY_NAMES",
    "ENTRY_TYPE",
    "EVENT_NAMES",
    "EVENT_SCHEMA",
    "LIST_FIELDS",
    "VERDICT_FIELDS",
    "record_fields",
    "state_ddl",
]

_ARROW_TYPES = {int: pa.int64(), str: pa.string(), bool: pa.bool_()}


def _arrow_type(spec: FieldSpec) -> pa.DataType:
    """A scalar's Arrow type; a list field's is a list of structs of its items' fields."""
    if spec.items is not None:
        return pa.list_(pa.struct([(item.name, _arrow_type(item)) for item in spec.items]))
    return _ARROW_TYPES[spec.json_type]


# One config entry, as the contract's ENTRY_FIELDS say.
ENTRY_TYPE = pa.struct([(spec.name, _arrow_type(spec)) for spec in ENTRY_FIELDS])

# What a valid record decodes to: the event fields in contract order, then configs.
EVENT_SCHEMA = pa.schema(
    [pa.field(spec.name, _arrow_type(spec)) for spec in EVENT_FIELDS]
    + [pa.field("configs", pa.list_(ENTRY_TYPE))]
)

# The verdict: null reason for a valid row, else the quarantine reason and one sentence.
VERDICT_FIELDS = [
    pa.field("reason", pa.string()),
    pa.field("detail", pa.string()),
    pa.field("size_bytes", pa.int64()),
]

DECODED_FIELDS: list[pa.Field] = list(EVENT_SCHEMA) + VERDICT_FIELDS
EVENT_NAMES = [spec.name for spec in EVENT_FIELDS]
# The list fields (besides configs) and the names of their elements' fields.
LIST_FIELDS: dict[str, list[str]] = {spec.name: [item.name for item in spec.items]
                                     for spec in EVENT_FIELDS if spec.items is not None}
ENTRY_NAMES = [f.name for f in ENTRY_TYPE]

# Arrow types and Spark DDL types of record annotations; a mapping (a finding's evidence) travels as JSON text.
_ARROW_OF = {"str": pa.string(), "int": pa.int64(), "bool": pa.bool_(), "tuple[str, ...]": pa.list_(pa.string()),
             "Mapping[str, Any]": pa.string()}
_DDL_OF = {"str": "string", "int": "long", "bool": "boolean"}


def _annotations(record: Any) -> list[tuple[str, str]]:
    """(name, annotation) of a dataclass's fields or a NamedTuple's, in order (annotations as strings)."""
    if dataclasses.is_dataclass(record):
        return [(f.name, str(f.type)) for f in dataclasses.fields(record)]
    return [(name, t.__forward_arg__ if isinstance(t, ForwardRef) else str(t))
            for name, t in record.__annotations__.items()]


def record_fields(record: Any) -> list[pa.Field]:
    """Arrow fields of a record dataclass, in field order; ``X | None`` is nullable."""
    out = []
    for name, annotation in _annotations(record):
        base = annotation.removesuffix(" | None")
        out.append(pa.field(name, _ARROW_OF[base], nullable=base != annotation))
    return out


def state_ddl(record: Any) -> str:
    """The Spark DDL of a record kept in a state variable (``name string, opened_ms long, ...``)."""
    return ", ".join(f"{name} {_DDL_OF[a.removesuffix(' | None')]}" for name, a in _annotations(record))

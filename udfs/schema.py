"""Arrow types of decoded records: the contract's event fields, the configs entries, the verdict.

One statement of the decoded column names and types, shared by the decode UDF,
the Arrow JSON fast path and the GX suite (and, through ``streaming.decode``,
by Spark).
"""

from __future__ import annotations

import pyarrow as pa

from configwatch.contract import ENTRY_FIELDS, EVENT_FIELDS, FieldSpec

__all__ = ["DECODED_FIELDS", "ENTRY_NAMES", "ENTRY_TYPE", "EVENT_NAMES", "EVENT_SCHEMA", "LIST_FIELDS",
           "VERDICT_FIELDS"]

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

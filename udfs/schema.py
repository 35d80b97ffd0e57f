"""Arrow types of decoded records: the contract's event fields, the configs entries, the verdict.

One statement of the decoded column names and types, shared by the decode UDF,
the Arrow JSON fast path and the GX suite (and, through ``streaming.decode``,
by Spark).
"""

from __future__ import annotations

import pyarrow as pa

from configwatch.contract import EVENT_FIELDS

__all__ = ["DECODED_FIELDS", "ENTRY_NAMES", "ENTRY_TYPE", "EVENT_NAMES", "EVENT_SCHEMA", "VERDICT_FIELDS"]

ENTRY_TYPE = pa.struct([
    ("key", pa.string()),
    ("value", pa.string()),
    ("type", pa.string()),
    ("is_default", pa.bool_()),
    ("redacted", pa.bool_()),
    ("fingerprint", pa.string()),
])

_ARROW_TYPES = {int: pa.int64(), str: pa.string(), bool: pa.bool_()}

# What a valid record decodes to: the event fields in contract order, then configs.
EVENT_SCHEMA = pa.schema(
    [pa.field(spec.name, _ARROW_TYPES[spec.json_type]) for spec in EVENT_FIELDS]
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
ENTRY_NAMES = [f.name for f in ENTRY_TYPE]

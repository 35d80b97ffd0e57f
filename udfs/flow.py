"""The rows of the gauge steps when they run on the JVM (the layout of new checkpoints).

::

    route (udfs.pipeline, Python) --ROUTED rows, shuffled by state_key once-->
        conn|<bucket> keys: connection step, totals step (JVM: streaming/jvm, io.configwatch.gauges)
                            --RECORD rows--> contract JSON (streaming.jvm_gauges)
        every other key:    the last keyed step (Python: udfs.steps.final_step)

``DELTA_SCHEMA``: what the connection step hands the totals step, one row per connection
that started (+1) or stopped (-1) counting under its name and version (``udfs.gauges.Delta``).
``RECORD_SCHEMA``: what the totals step emits, a gauge or a usage record's typed fields;
the gauge fields come from ``configwatch.records.Gauge`` and the usage fields are
``VersionUsage.to_dict``'s shape, so the JSON made from them is the records' own. On a
checkpoint with one keyed step, that step (the JVM detection step beside the connection step)
hands the totals step ``KEYED_SCHEMA`` rows and the totals step emits ``PASSED_RECORD_SCHEMA``
rows, the detection step's records among them. The JVM
looks up every field of these schemas by name, nested structs included
(``streaming.jvm_gauges.spec`` hands them over); its state variables' shapes are its own.
"""

from __future__ import annotations

from typing import Final

import pyarrow as pa

from configwatch.records import Gauge
from udfs.pipeline import ROUTED_SCHEMA
from udfs.schema import record_fields

__all__ = ["DELTA_SCHEMA", "GAUGE_COLUMN", "KEYED_SCHEMA", "PASSED_FIELDS", "PASSED_RECORD_SCHEMA", "RECORD_SCHEMA",
           "USAGE_COLUMN"]

GAUGE_COLUMN: Final = "gauge"  # a gauge record's fields
USAGE_COLUMN: Final = "usage"  # a usage record's fields
_IDENTITY = ("client_software_name", "client_software_version")

DELTA_SCHEMA: Final = pa.schema([
    *(ROUTED_SCHEMA.field(name) for name in (*_IDENTITY, "client_instance_id")),
    pa.field("change", pa.int64()),   # +1 / -1 connection
    pa.field("expired", pa.bool_()),  # made by the lease
    ROUTED_SCHEMA.field("request_pairs"),  # a close's request versions (null unless a proxying gateway's)
    ROUTED_SCHEMA.field("request_overflow"),
])

# A gauge record's fields besides its name and version (connections, client_instances, updated_at_ms, removed).
_GAUGE_FIELDS: Final = [f for f in record_fields(Gauge) if f.name not in _IDENTITY]
# A usage record's fields besides its name and version, in the order and with the names VersionUsage.to_dict has.
_USAGE_TYPE: Final = pa.struct([
    ("request_versions", pa.list_(pa.struct([("api_key", pa.int64()), ("version", pa.int64()),
                                             ("connections", pa.int64())]))),
    ("connections", pa.int64()),
    ("client_instances", pa.int64()),
    ("client_instance_ids", pa.list_(pa.string())),
    ("updated_at_ms", pa.int64()),
    ("overflow", pa.int64()),
])

RECORD_SCHEMA: Final = pa.schema([
    pa.field("kind", pa.string()),  # configwatch.contract.GAUGES or USAGE
    *(ROUTED_SCHEMA.field(name) for name in _IDENTITY),
    pa.field(GAUGE_COLUMN, pa.struct(_GAUGE_FIELDS)),
    pa.field(USAGE_COLUMN, _USAGE_TYPE),
])

# With one keyed step (``udfs.pipeline.StateLayout.one_keyed_step``) the detection step's records (findings,
# quarantine) go through the totals step's shuffle beside the deltas, grouped by their kind and key, and the
# totals step passes them on unchanged: their kind, key and contract JSON.
PASSED_FIELDS: Final = [pa.field("passed_kind", pa.string()), pa.field("passed_key", pa.string()),
                        pa.field("passed_value", pa.string())]
# The one keyed step -> the totals step: the totals key (a delta's name and version, a passed record's kind and
# key), then either a delta's fields or a passed record's.
KEYED_SCHEMA: Final = pa.schema([pa.field("totals_name", pa.string()), pa.field("totals_version", pa.string()),
                                 *DELTA_SCHEMA, *PASSED_FIELDS])
# The totals step's output when it passes records on: a record row, or a passed record (its kind in ``kind``).
PASSED_RECORD_SCHEMA: Final = pa.schema([*RECORD_SCHEMA, *PASSED_FIELDS[1:]])

"""The job's one pass per record, as plain functions over Arrow data: route, then two keyed steps.

Spark runs these in one streaming query (``streaming.pipeline``); tests and the
bench peers call them directly.

1. :func:`route` (the ``mapInArrow`` stage, after decode in the same Python call):
   one decoded batch -> ``ROUTED_SCHEMA`` rows, each with a ``state_key``:

   - ``pass|<n>``: a finished output record (quarantine, stateless finding):
     ``kind``, ``out_key`` and its contract JSON in ``finding``;
   - ``fleet|...``/``group|...``: the stateful rules' observations (``udfs.rules.stateful``);
   - ``conn|<bucket>``: a connection event for the gauges (``udfs.gauges``), its
     software name and version already masked.

2. Per ``state_key`` (first keyed step): pass rows go on; fleet and group keys
   run ``udfs.rules.stateful.step``; connection buckets run
   ``udfs.gauges.step_bucket`` and emit gauge deltas keyed ``gauge|<name>/<version>``
   (``MID_SCHEMA`` rows).
3. Per ``route`` (second keyed step): pass rows go on; gauge keys fold their
   deltas with ``udfs.gauges.apply_deltas`` (``FINAL_SCHEMA`` rows).

In Spark, a new checkpoint runs the gauge half of steps 2 and 3 in the JVM and the rest
in ``udfs.steps.final_step`` (``udfs.flow``, :class:`StateLayout`).
Every output row is ``kind, key, value`` (contract JSON) and ``tombstone``.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any, Final

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from configwatch.contract import (
    ALERTS,
    CONFIG_PUSH,
    CONNECTION_CLOSED,
    CONNECTION_OPENED,
    GAUGES,
    OUTPUT_KINDS,
    QUARANTINE,
    SCHEMA_VERSION,
    USAGE,
    software_key,
)
from configwatch.records import Gauge
from configwatch.secrets import SecretStr
from udfs.gauges import DEFAULT_BUCKETS, GaugeConfig, bucket_of, masked_texts
from udfs.rules.findings import contract_json
from udfs.rules.stateful import KEY_SEP, OBSERVATION_SCHEMA, PASS, pass_key, prepare
from udfs.schema import EVENT_SCHEMA
from udfs.sensitivity import masked_identities

__all__ = [
    "CONN",
    "CONN_PREFIX",
    "DEFAULT_LAYOUT",
    "FINAL_SCHEMA",
    "GAUGE",
    "LEGACY_LAYOUT",
    "MID_SCHEMA",
    "ROUTED_SCHEMA",
    "StateLayout",
    "finding_rows",
    "gauge_route",
    "gauge_value",
    "is_pass",
    "key_kind",
    "pass_rows",
    "quarantine_values",
    "route",
    "source_key",
]

CONN: Final = "conn"
GAUGE: Final = "gauge"
CONN_PREFIX: Final = CONN + KEY_SEP  # a connection bucket's state key: ``conn|<bucket>``

# Stage 1 input: the observation columns plus the output kind and the gauges' event columns.
ROUTED_SCHEMA: Final = pa.schema([
    *OBSERVATION_SCHEMA,
    pa.field("kind", pa.string()),
    pa.field("event", pa.string()),
    pa.field("partition", pa.int64()),
    pa.field("offset", pa.int64()),
    # A close's request versions as decoded (gateway proxy mode; null on other events), and its overflow.
    pa.field("request_pairs", EVENT_SCHEMA.field("request_versions").type),
    pa.field("request_overflow", pa.int64()),
])
# Stage 1 output / stage 2 input: pass rows (kind, out_key, value) or gauge deltas.
MID_SCHEMA: Final = pa.schema([
    ("route", pa.string()),
    ("kind", pa.string()),
    ("out_key", pa.string()),
    ("value", pa.string()),
    ("name", pa.string()),
    ("version", pa.string()),
    ("instance", pa.string()),
    ("change", pa.int64()),
    ("expired", pa.bool_()),
    ("usage", pa.string()),  # a closing connection's usage, on its -1 delta
])
# What the job writes: one record of one output kind. ``tombstone``: a null value on Kafka.
FINAL_SCHEMA: Final = pa.schema([
    ("kind", pa.string()),
    ("key", pa.string()),
    ("value", pa.string()),
    ("tombstone", pa.bool_()),
])


def source_key(source: dict[str, Any]) -> str:
    """A stable text form of source coordinates: ``topic/partition/offset`` or ``file:line``."""
    if source.get("file") is not None:
        return f"{source['file']}:{source['line']}"
    return f"{source.get('topic')}/{source.get('partition')}/{source.get('offset')}"


def quarantine_values(invalid: pa.Table, now_ms: int) -> tuple[list[str], list[str]]:
    """Keys and contract quarantine records (section 2) of invalid decoded rows; never the payload."""
    coords = ("file", "line") if "file" in invalid.column_names else ("topic", "partition", "offset")
    keys, values = [], []
    for row in invalid.select(["reason", "detail", "size_bytes", *coords]).to_pylist():
        source = {c: row[c] for c in coords}
        keys.append(source_key(source))
        values.append(json.dumps({"schema_version": SCHEMA_VERSION, "reason": row["reason"], "detail": row["detail"],
                                  "source": source, "size_bytes": row["size_bytes"], "quarantined_at_ms": now_ms},
                                 separators=(",", ":"), ensure_ascii=False))
    return keys, values


def _column(values: Any, n: int, type_: pa.DataType) -> pa.Array | pa.ChunkedArray:
    if values is None:
        return pa.nulls(n, type_)
    if isinstance(values, pa.Array | pa.ChunkedArray):  # already Arrow: a cast, not a trip through Python
        return values if values.type == type_ else values.cast(type_)
    return pa.array(values, type_)


def _table(columns: dict[str, Any], n: int, schema: pa.Schema) -> pa.Table:
    return pa.Table.from_arrays([_column(columns.get(f.name), n, f.type) for f in schema], schema=schema)


def pass_rows(kind: str, keys: list[str], values: list[str]) -> pa.Table:
    """Finished output records as routed rows."""
    return _table({"state_key": [pass_key(k) for k in keys], "kind": [kind] * len(keys), "out_key": keys,
                   "finding": values}, len(keys), ROUTED_SCHEMA)


def gauge_route(name: str, version: str) -> str:
    return f"{GAUGE}{KEY_SEP}{software_key(name, version)}"


def _gauge_rows(valid: pa.Table, config: GaugeConfig, key: SecretStr) -> pa.Table:
    """Connection events as gauge rows: names and versions as counted, instance ids as findings show them."""
    wanted = [CONNECTION_OPENED, CONNECTION_CLOSED] + ([CONFIG_PUSH] if config.ttl_ms is not None else [])
    mask = pc.and_(pc.is_in(valid.column("event"), pa.array(wanted)),
                   pc.and_(pc.is_valid(valid.column("connection_id")), pc.is_valid(valid.column("timestamp_ms"))))
    events = valid.filter(mask)
    n = events.num_rows
    if n == 0:
        return ROUTED_SCHEMA.empty_table()
    cids = events.column("connection_id").to_pylist()
    if "partition" in events.column_names:
        partition, offset = events.column("partition").cast(pa.int64()), events.column("offset").cast(pa.int64())
    elif "line" in events.column_names:
        files = events.column("file").to_pylist()  # replay files: a hash of the file name, then the line
        partition = pa.array([zlib.crc32(str(f).encode("utf-8", "surrogatepass")) for f in files], pa.int64())
        offset = events.column("line").cast(pa.int64())
    else:
        partition = offset = pa.nulls(n, pa.int64())
    return _table({
        "state_key": [f"{CONN_PREFIX}{bucket_of(c, config.buckets)}" for c in cids],
        "kind": [GAUGES] * n,
        "event": events.column("event"),
        "connection_id": cids,
        "timestamp_ms": events.column("timestamp_ms"),
        "client_instance_id": masked_identities(events.column("client_instance_id").to_pylist(), key),
        "client_software_name": masked_texts(events.column("client_software_name").to_pylist(),
                                             config.fingerprint_key),
        "client_software_version": masked_texts(events.column("client_software_version").to_pylist(),
                                                config.fingerprint_key),
        "partition": partition,
        "offset": offset,
        **_usage_columns(events),
    }, n, ROUTED_SCHEMA)


def _usage_columns(events: pa.Table) -> dict[str, Any]:
    """A ``connection_closed``'s request versions and overflow (null on every other event).

    Only closes from a gateway in proxy mode carry them; a batch without any costs one null count.
    """
    if "request_versions" not in events.column_names:
        return {}
    pairs = events.column("request_versions")
    carrying = pc.fill_null(pc.and_(pc.is_valid(pairs), pc.equal(events.column("event"), CONNECTION_CLOSED)), False)
    if not pc.any(carrying).as_py():
        return {}
    over = events.column("request_versions_overflow") if "request_versions_overflow" in events.column_names \
        else pa.nulls(events.num_rows, pa.int64())
    return {"request_pairs": pc.if_else(carrying, pairs, pa.scalar(None, pairs.type)),
            "request_overflow": pc.if_else(carrying, over, pa.scalar(None, pa.int64()))}


@dataclass(frozen=True)
class StateLayout:
    """How the keyed steps' state keys are formed; a checkpoint keeps the layout it began with.

    A restart that formed its keys differently would not find its state (closes would miss
    their connections), so ``streaming.job.layout`` pins the layout beside the checkpoint.
    """

    connection_buckets: int = DEFAULT_BUCKETS  # ``conn|<n>`` keys: few, so a batch makes few Python calls
    fleet_per_key: bool = False  # ``fleet|<peer group>|<config key>`` instead of ``fleet|<peer group>``
    markers_apart: bool = False  # close markers in their own map, not in the connection's entry
    gauges_on_jvm: bool = True  # the gauge steps in the JVM (``udfs.flow``), not as Python keyed steps
    detection_on_jvm: bool = True  # route and detection in the JVM (``streaming.jvm_pipeline``): no Python stage
    # The JVM route's ``conn|``/``pass|`` bucket keys named so that Spark spreads them evenly over this many
    # shuffle partitions (the checkpoint's, which Spark pins too); 0: plain labels, as before the field.
    key_partitions: int = 0
    # The JVM detection and connection steps as one keyed step over the route's shuffle, the detection step's
    # records passed on through the totals step (``streaming.jvm_pipeline.plan``): one sort of that shuffle, not two.
    one_keyed_step: bool = True

    def gauges(self, config: GaugeConfig) -> GaugeConfig:
        """``config`` with this layout's connection buckets and marker placement."""
        return replace(config, buckets=self.connection_buckets, markers_apart=self.markers_apart)


# What a new checkpoint begins with, once ``streaming.job.layout.pinned_layout`` has set ``key_partitions``
# to the session's shuffle partitions.
DEFAULT_LAYOUT: Final = StateLayout()
# What checkpoints begun before the layout was pinned used: 64 buckets, a fleet key per peer group and config key.
LEGACY_LAYOUT: Final = StateLayout(connection_buckets=64, fleet_per_key=True, markers_apart=True,
                                   gauges_on_jvm=False, detection_on_jvm=False, one_keyed_step=False)


def route(decoded: pa.Table, key: SecretStr, now_ms: int, gauges: GaugeConfig,
          kinds: Collection[str] = OUTPUT_KINDS, *, fleet_per_key: bool = False) -> pa.Table:
    """One decoded batch (``udfs.decode`` rows with their coordinates) as ``ROUTED_SCHEMA`` rows.

    ``gauges.buckets`` and ``fleet_per_key`` come from the checkpoint's :class:`StateLayout`.
    """
    parts = []
    invalid_mask = pc.is_valid(decoded.column("reason"))
    if QUARANTINE in kinds:
        keys, values = quarantine_values(decoded.filter(invalid_mask), now_ms)
        parts.append(pass_rows(QUARANTINE, keys, values))
    valid = decoded.filter(pc.invert(invalid_mask))
    if ALERTS in kinds:
        pushes = valid.filter(pc.equal(valid.column("event"), CONFIG_PUSH))
        if pushes.num_rows:
            observed = prepare(pushes, key, now_ms, fleet_per_key=fleet_per_key)
            kind = pa.array([ALERTS] * observed.num_rows, pa.string())
            parts.append(_table({**{n: observed.column(n) for n in observed.column_names}, "kind": kind},
                                observed.num_rows, ROUTED_SCHEMA))
    if GAUGES in kinds or USAGE in kinds:  # one pass over the connection events gives both
        parts.append(_gauge_rows(valid, gauges, key))
    return pa.concat_tables(parts) if parts else ROUTED_SCHEMA.empty_table()


def finding_rows(route_key: str, findings: pa.Table) -> pd.DataFrame:
    """Finding rows (``FINDING_SCHEMA``) as ``MID_SCHEMA`` pass rows."""
    ids = findings.column("alert_id").to_pylist()
    return pd.DataFrame({"route": [pass_key(i) for i in ids], "kind": ALERTS, "out_key": ids,
                         "value": contract_json(findings)}, columns=MID_SCHEMA.names)


def gauge_value(row: dict[str, Any]) -> str:
    """A gauge row's contract record (section 2) as JSON."""
    gauge = Gauge(row["client_software_name"], row["client_software_version"], int(row["connections"]),
                  int(row["client_instances"]), int(row["updated_at_ms"]), bool(row["removed"]))
    return gauge.to_json()


def key_kind(state_key: str) -> str:
    """What a state key is for: its part before the first separator (``conn``, ``pass``, ``fleet``, ...)."""
    return state_key.partition(KEY_SEP)[0]


def is_pass(route_key: str) -> bool:
    return route_key.startswith(PASS + KEY_SEP)

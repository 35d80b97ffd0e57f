"""The job's one pass per record, as plain functions over Arrow data: route, then one keyed step.

Spark runs these in one streaming query (``streaming.pipeline``); tests and the
bench peers call them directly.

1. :func:`route` (the ``mapInArrow`` stage, after decode in the same Python call):
   one decoded batch -> ``ROUTED_SCHEMA`` rows, each with a ``state_key``:

   - ``pass|<n>``: a finished output record (quarantine, stateless finding):
     ``kind``, ``out_key`` and its contract JSON in ``finding``;
   - ``fleet|...``/``group|...``: the stateful rules' observations (``udfs.rules.stateful``);
   - ``conn``: a connection event for the gauges (``udfs.gauges``), its software name
     and version already masked.

2. Per ``state_key`` (``udfs.steps.keyed_step``, one ``transformWithStateInPandas``
   operator in Spark): pass rows go on; fleet and group keys run
   ``udfs.rules.stateful.step``; the ``conn`` key runs the connection gauges
   (``udfs.gauge_state``) and writes the gauge and usage records.

Every output row (``FINAL_SCHEMA``) is ``kind, key, value`` (contract JSON) and ``tombstone``.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Collection
from typing import Any, Final

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from configwatch.contract import (
    ALERTS,
    CONFIG_PUSH,
    CONNECTION_CLOSED,
    CONNECTION_OPENED,
    CONNECTION_USAGE,
    GAUGES,
    OUTPUT_KINDS,
    QUARANTINE,
    SCHEMA_VERSION,
    SECURITY_SEP,
    UNKNOWN_SECURITY,
    USAGE,
)
from configwatch.records import Gauge
from configwatch.secrets import SecretStr
from udfs.gauges import GaugeConfig, masked_texts
from udfs.rules.posture import posture_findings
from udfs.rules.stateful import KEY_SEP, OBSERVATION_SCHEMA, pass_key, prepare
from udfs.schema import EVENT_SCHEMA
from udfs.sensitivity import masked_identities

__all__ = [
    "CONN",
    "FINAL_SCHEMA",
    "ROUTED_SCHEMA",
    "final_rows",
    "gauge_value",
    "key_kind",
    "pass_rows",
    "quarantine_values",
    "route",
    "source_key",
]

CONN: Final = "conn"  # the state key of every connection event

# The route stage's output, the keyed step's input: the observation columns, the output kind, the gauges' event
# columns.
ROUTED_SCHEMA: Final = pa.schema([
    *OBSERVATION_SCHEMA,
    pa.field("kind", pa.string()),
    pa.field("event", pa.string()),
    pa.field("partition", pa.int64()),
    pa.field("offset", pa.int64()),
    # A close's request versions as decoded (gateway proxy mode; null on other events), and its overflow.
    pa.field("request_pairs", EVENT_SCHEMA.field("request_versions").type),
    pa.field("request_overflow", pa.int64()),
    pa.field("usage_sequence", pa.int64()),  # a connection_usage's number on its connection
    pa.field("security", pa.string()),  # a connection event's posture as gauges count it (contract.security_label)
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


def _gauge_rows(valid: pa.Table, config: GaugeConfig, key: SecretStr) -> pa.Table:
    """Connection events as gauge rows: names and versions as counted, instance ids as findings show them."""
    wanted = [CONNECTION_OPENED, CONNECTION_CLOSED, CONNECTION_USAGE] + ([CONFIG_PUSH] if config.ttl_ms is not None
                                                                          else [])
    mask = pc.and_(pc.is_in(valid.column("event"), pa.array(wanted)),
                   pc.and_(pc.is_valid(valid.column("connection_id")), pc.is_valid(valid.column("timestamp_ms"))))
    events = valid.filter(mask)
    n = events.num_rows
    if n == 0:
        return ROUTED_SCHEMA.empty_table()
    if "partition" in events.column_names:
        partition, offset = events.column("partition").cast(pa.int64()), events.column("offset").cast(pa.int64())
    elif "line" in events.column_names:
        files = events.column("file").to_pylist()  # replay files: a hash of the file name, then the line
        partition = pa.array([zlib.crc32(str(f).encode("utf-8", "surrogatepass")) for f in files], pa.int64())
        offset = events.column("line").cast(pa.int64())
    else:
        partition = offset = pa.nulls(n, pa.int64())
    return _table({
        "state_key": pa.array([CONN] * n, pa.string()),
        "kind": [GAUGES] * n,
        "event": events.column("event"),
        "connection_id": events.column("connection_id"),
        "timestamp_ms": events.column("timestamp_ms"),
        "client_instance_id": masked_identities(events.column("client_instance_id").to_pylist(), key),
        "client_software_name": masked_texts(events.column("client_software_name").to_pylist(),
                                             config.fingerprint_key),
        "client_software_version": masked_texts(events.column("client_software_version").to_pylist(),
                                                config.fingerprint_key),
        "partition": partition,
        "offset": offset,
        "security": _security_labels(events),
        **_usage_columns(events),
        **_usage_groups(events, key),
    }, n, ROUTED_SCHEMA)


def _security_labels(events: pa.Table) -> pa.ChunkedArray | pa.Array:
    """``configwatch.contract.security_label`` of each event, as one Arrow kernel call."""
    n = events.num_rows
    protocol = (pc.fill_null(events.column("security_protocol"), UNKNOWN_SECURITY)
                if "security_protocol" in events.column_names else pa.array([UNKNOWN_SECURITY] * n, pa.string()))
    if "sasl_mechanism" not in events.column_names:
        return protocol
    mechanism = pc.if_else(pc.equal(events.column("sasl_mechanism"), ""), None, events.column("sasl_mechanism"))
    return pc.binary_join_element_wise(protocol, mechanism, SECURITY_SEP, null_handling="skip")


def _usage_columns(events: pa.Table) -> dict[str, Any]:
    """The request versions and overflow of a ``connection_closed`` or ``connection_usage`` (null on every other
    event), and a usage event's sequence number.

    Only a gateway in proxy mode sends them; a batch without any costs one null count.
    """
    if "request_versions" not in events.column_names:
        return {}
    pairs = events.column("request_versions")
    kinds = pc.is_in(events.column("event"), pa.array([CONNECTION_CLOSED, CONNECTION_USAGE]))
    carrying = pc.fill_null(pc.and_(pc.is_valid(pairs), kinds), False)
    if not pc.any(carrying).as_py():
        return {}
    nulls = pa.nulls(events.num_rows, pa.int64())
    over = events.column("request_versions_overflow") if "request_versions_overflow" in events.column_names \
        else nulls
    sequence = events.column("usage_sequence") if "usage_sequence" in events.column_names else nulls
    return {"request_pairs": pc.if_else(carrying, pairs, pa.scalar(None, pairs.type)),
            "request_overflow": pc.if_else(carrying, over, pa.scalar(None, pa.int64())),
            "usage_sequence": pc.if_else(carrying, sequence, pa.scalar(None, pa.int64()))}


def _usage_groups(events: pa.Table, key: SecretStr) -> dict[str, Any]:
    """Client id and principal (as findings show them) of the usage-carrying events of clients that name no
    software (below ApiVersions v3): their usage is grouped by both (``configwatch.contract.usage_key``)."""
    if "request_versions" not in events.column_names:
        return {}
    carrying = pc.fill_null(pc.and_(pc.is_valid(events.column("request_versions")),
                                    pc.invert(pc.is_valid(events.column("client_software_name")))), False)
    if not pc.any(carrying).as_py():
        return {}
    out: dict[str, Any] = {}
    for name in ("client_id", "principal"):  # Python only for the carrying rows' values (their secret scan)
        shown = pa.array(masked_identities(events.column(name).filter(carrying).to_pylist(), key), pa.string())
        out[name] = pc.replace_with_mask(pa.nulls(events.num_rows, pa.string()), _combined(carrying), shown)
    return out


def _combined(mask: pa.Array | pa.ChunkedArray) -> pa.Array:
    return mask.combine_chunks() if isinstance(mask, pa.ChunkedArray) else mask


def route(decoded: pa.Table, key: SecretStr, now_ms: int, gauges: GaugeConfig,
          kinds: Collection[str] = OUTPUT_KINDS) -> pa.Table:
    """One decoded batch (``udfs.decode`` rows with their coordinates) as ``ROUTED_SCHEMA`` rows."""
    parts = []
    invalid_mask = pc.is_valid(decoded.column("reason"))
    if QUARANTINE in kinds:
        keys, values = quarantine_values(decoded.filter(invalid_mask), now_ms)
        parts.append(pass_rows(QUARANTINE, keys, values))
    valid = decoded.filter(pc.invert(invalid_mask))
    if ALERTS in kinds:
        pushes = valid.filter(pc.equal(valid.column("event"), CONFIG_PUSH))
        if pushes.num_rows:
            observed = prepare(pushes, key, now_ms)
            kind = pa.array([ALERTS] * observed.num_rows, pa.string())
            parts.append(_table({**{n: observed.column(n) for n in observed.column_names}, "kind": kind},
                                observed.num_rows, ROUTED_SCHEMA))
        parts.append(pass_rows(ALERTS, *posture_findings(valid, key, now_ms)))
    if GAUGES in kinds or USAGE in kinds:  # one pass over the connection events gives both
        parts.append(_gauge_rows(valid, gauges, key))
    return pa.concat_tables(parts) if parts else ROUTED_SCHEMA.empty_table()


def gauge_value(row: dict[str, Any]) -> str:
    """A gauge row's contract record (section 2) as JSON."""
    gauge = Gauge(row["client_software_name"], row["client_software_version"], int(row["connections"]),
                  int(row["client_instances"]), int(row["updated_at_ms"]), bool(row["removed"]),
                  row.get("connections_by_security") or {})
    return gauge.to_json()


def key_kind(state_key: str) -> str:
    """What a state key is for: its part before the first separator (``conn``, ``pass``, ``fleet``, ...)."""
    return state_key.partition(KEY_SEP)[0]


def final_rows(kind: Any, keys: Any, values: Any, tombstones: Any = False) -> pd.DataFrame:
    """Output records as ``FINAL_SCHEMA`` rows."""
    return pd.DataFrame({"kind": kind, "key": keys, "value": values, "tombstone": tombstones},
                        columns=FINAL_SCHEMA.names)

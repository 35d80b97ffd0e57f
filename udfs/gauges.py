"""Per-version connection gauges: the state transition for one group of connection events.

A plain function over pandas/Arrow data (no Spark): ``advance(state, events,
now_ms, config)`` applies a micro-batch of events to the open-connection table
and returns the new state plus one gauge row per key whose value changed.
``streaming.gauges`` runs it inside Spark's stateful operator; tests call it
directly. Semantics (contract section 2, "Gauges"; details in docs/gauges.md):

- a connection counts from its first ``connection_opened`` until its
  ``connection_closed``, under the name/version of that open event (absent or
  empty -> ``unknown``); repeated opens of an open connection and closes of an
  unknown connection change nothing;
- events apply in event order: ``timestamp_ms``, then source partition, offset;
- a close leaves a marker for ``closed_retention_ms`` of event time, so a
  redelivered (older or equal timestamp) open of a closed connection stays
  ignored, and an event older than a connection's open never touches it;
- ``connections`` = open connections of a name/version; ``client_instances`` =
  distinct non-null ``client_instance_id`` among them; the fleet total uses the
  key ``__fleet__/__fleet__`` (a name no KIP-511 client can have);
- a software name or version that the secret scan flags (a token pasted into
  ``client.id``-like fields reaches KIP-511's version too) is counted, stored and
  published as ``redacted-<fingerprint>`` (still a valid KIP-511 string), so no
  gauge record or state ever holds it;
- optional lease: with ``ttl_ms``, a connection whose last event was seen
  ``ttl_ms`` or longer ago (processing time) is dropped, logged and counted.

The state is Arrow tables serialised as Arrow IPC (``GaugeState.to_row``), so a
whole key group's state is one value: one state read and one write per batch.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from configwatch.contract import CONNECTION_CLOSED, CONNECTION_OPENED, UNKNOWN_SOFTWARE
from configwatch.secrets import SecretStr, fingerprint
from udfs.rules.secretscan import mask_secrets

__all__ = [
    "CLOSED_SCHEMA",
    "CONNECTION_SCHEMA",
    "DEFAULT_CLOSED_RETENTION_MS",
    "FLEET_KEY",
    "FLEET_NAME",
    "FLEET_VERSION",
    "INPUT_COLUMNS",
    "OUTPUT_SCHEMA",
    "STATE_SCHEMA",
    "GaugeConfig",
    "GaugeState",
    "Transition",
    "advance",
    "gauge_key",
]

log = logging.getLogger(__name__)

# The fleet total's name and version start with "_", which the KIP-511 pattern
# forbids, so no real client can ever share its key; the dashboard
# (sinks.dashboard.fleet.FLEET_TOTAL_KEYS) reads this key as the fleet total.
FLEET_NAME: Final = "__fleet__"
FLEET_VERSION: Final = "__fleet__"
FLEET_KEY: Final = f"{FLEET_NAME}/{FLEET_VERSION}"
DEFAULT_CLOSED_RETENTION_MS: Final = 10 * 60 * 1000

# What the transition reads from the decoded stream (partition/offset may be null).
INPUT_COLUMNS: Final = (
    "event", "timestamp_ms", "connection_id", "client_instance_id",
    "client_software_name", "client_software_version", "partition", "offset",
)
_ORDER: Final = ["timestamp_ms", "partition", "offset"]

CONNECTION_SCHEMA: Final = pa.schema([
    ("connection_id", pa.string()),
    ("client_software_name", pa.string()),
    ("client_software_version", pa.string()),
    ("client_instance_id", pa.string()),
    ("opened_ms", pa.int64()),      # event time of the open that counted
    ("last_event_ms", pa.int64()),  # event time of the latest applied event
    ("seen_ms", pa.int64()),        # processing time of the batch that saw it (the lease)
])
CLOSED_SCHEMA: Final = pa.schema([("connection_id", pa.string()), ("closed_ms", pa.int64())])

# One gauge update; the first seven fields are the contract's gauge record plus its key.
OUTPUT_SCHEMA: Final = pa.schema([
    ("key", pa.string()),
    ("client_software_name", pa.string()),
    ("client_software_version", pa.string()),
    ("connections", pa.int64()),
    ("client_instances", pa.int64()),
    ("updated_at_ms", pa.int64()),
    ("removed", pa.bool_()),
    ("expired", pa.int64()),  # connections of this key dropped by the lease in this update
])

# The persisted state of one key group: one row, two Arrow IPC blobs and two counters.
STATE_SCHEMA: Final = pa.schema([
    ("format", pa.int32()),
    ("connections", pa.binary()),
    ("closed", pa.binary()),
    ("clock_ms", pa.int64()),       # max event time seen (ages the close markers)
    ("expired_total", pa.int64()),  # connections dropped by the lease, ever
])
_FORMAT: Final = 1


def gauge_key(name: str, version: str) -> str:
    """The contract's record key of a gauge: ``<name>/<version>``."""
    return f"{name}/{version}"


@dataclass(frozen=True, slots=True)
class GaugeConfig:
    """Knobs of the transition. ``ttl_ms`` None disables the lease; ``fingerprint_key`` keys the redaction."""

    ttl_ms: int | None = None
    closed_retention_ms: int = DEFAULT_CLOSED_RETENTION_MS
    fingerprint_key: SecretStr | None = None

    def __post_init__(self) -> None:
        if self.ttl_ms is not None and self.ttl_ms <= 0:
            raise ValueError("ttl_ms must be positive")


_IPC_OPTIONS: Final = pa.ipc.IpcWriteOptions(compression="zstd")  # ~7x smaller state for ~20 ms per 100k rows


def _to_ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema, options=_IPC_OPTIONS) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _from_ipc(blob: bytes | None, schema: pa.Schema) -> pa.Table:
    if not blob:
        return schema.empty_table()
    return pa.ipc.open_stream(pa.py_buffer(blob)).read_all()


@dataclass(frozen=True, slots=True)
class GaugeState:
    """Open connections, recent close markers, the event-time clock and the lease counter."""

    connections: pa.Table
    closed: pa.Table
    clock_ms: int = 0
    expired_total: int = 0

    @classmethod
    def empty(cls) -> GaugeState:
        return cls(CONNECTION_SCHEMA.empty_table(), CLOSED_SCHEMA.empty_table())

    @classmethod
    def from_row(cls, row: tuple[Any, ...] | None) -> GaugeState:
        """Rebuild from a ``STATE_SCHEMA`` row (as Spark's state APIs hand it back); None = empty."""
        if row is None:
            return cls.empty()
        fmt, conns, closed, clock_ms, expired_total = row
        if fmt != _FORMAT:
            raise ValueError(f"unknown gauge state format {fmt}")
        return cls(_from_ipc(conns, CONNECTION_SCHEMA), _from_ipc(closed, CLOSED_SCHEMA),
                   int(clock_ms or 0), int(expired_total or 0))

    def to_row(self) -> tuple[int, bytes, bytes, int, int]:
        """A ``STATE_SCHEMA`` row."""
        return (_FORMAT, _to_ipc(self.connections), _to_ipc(self.closed), self.clock_ms, self.expired_total)

    def next_expiry_ms(self, config: GaugeConfig) -> int | None:
        """When the earliest lease runs out (processing time), None without a lease or connections."""
        if config.ttl_ms is None or self.connections.num_rows == 0:
            return None
        earliest = pc.min(self.connections.column("seen_ms")).as_py()
        return int(earliest) + config.ttl_ms


@dataclass(frozen=True, slots=True)
class Transition:
    """The result of one ``advance``: new state, gauge updates (``OUTPUT_SCHEMA``), lease drops."""

    state: GaugeState
    gauges: pd.DataFrame
    expired: int


def _texts(column: pd.Series, key: SecretStr | None) -> list[str]:
    """Software names/versions as counted: absent or empty is ``unknown``; a flagged secret is redacted."""
    texts = column.fillna("").astype(str).replace("", UNKNOWN_SOFTWARE).tolist()
    if key is None:
        return texts
    return mask_secrets(texts, lambda value: f"redacted-{fingerprint(value, key)}")


def _sorted_events(events: pd.DataFrame | Iterable[pd.DataFrame]) -> pd.DataFrame:
    frames = [events] if isinstance(events, pd.DataFrame) else [f for f in events if len(f)]
    if not frames:
        return pd.DataFrame({c: [] for c in INPUT_COLUMNS})
    df = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    for column in INPUT_COLUMNS:
        if column not in df.columns:
            df = df.assign(**{column: None})
    df = df[df["connection_id"].notna() & df["timestamp_ms"].notna()]
    return df.sort_values(_ORDER, kind="stable", na_position="last")


class _Batch:
    """Working copy of the state for one batch: existing rows patched in place, new rows apart."""

    def __init__(self, state: GaugeState, now_ms: int, touched: list[str]) -> None:
        conns = state.connections
        self.now_ms = now_ms
        self.table = conns
        # Row numbers of the connections this batch mentions (hash join in Arrow, not a Python dict of all).
        rows = pc.index_in(conns.column("connection_id"), value_set=pa.array(touched, pa.string()))
        hit = np.flatnonzero(rows.is_valid().to_numpy(zero_copy_only=False))
        ids = conns.column("connection_id").take(pa.array(hit)).to_pylist()
        self.index = dict(zip(ids, hit.tolist(), strict=True))
        self.keep = np.ones(conns.num_rows, dtype=bool)
        self.opened = conns.column("opened_ms").to_numpy()
        self.last_event = conns.column("last_event_ms").to_numpy().copy()
        self.seen = conns.column("seen_ms").to_numpy().copy()
        # connection_id -> [name, version, instance, opened_ms, last_event_ms, seen_ms]
        self.new: dict[str, list[Any]] = {}
        closed = state.closed
        self.closed = dict(zip(closed.column("connection_id").to_pylist(),
                               closed.column("closed_ms").to_pylist(), strict=True))

    def open_row(self, cid: str) -> int | None:
        i = self.index.get(cid)
        return i if i is not None and self.keep[i] else None

    def apply(self, event: str, ts: int, cid: str, name: Any, version: Any, instance: Any) -> None:
        fresh = self.new.get(cid)
        row = None if fresh is not None else self.open_row(cid)
        opened_ms = fresh[3] if fresh is not None else (int(self.opened[row]) if row is not None else None)
        if opened_ms is not None:
            assert row is not None or fresh is not None
            if ts < opened_ms:
                return  # older than the open that counts: a stale redelivery
            if event == CONNECTION_CLOSED:
                if fresh is not None:
                    del self.new[cid]
                else:
                    self.keep[row] = False
                self.closed[cid] = ts
                return
            # A repeated open or any other event of an open connection: only the lease moves.
            if fresh is not None:
                fresh[4], fresh[5] = max(fresh[4], ts), self.now_ms
            else:
                self.last_event[row] = max(int(self.last_event[row]), ts)
                self.seen[row] = self.now_ms
            return
        if event == CONNECTION_CLOSED:
            # Unknown connection: no gauge changes; remember the close so an older open stays out.
            self.closed[cid] = max(self.closed.get(cid, ts), ts)
            return
        if event != CONNECTION_OPENED:
            return  # e.g. a config_push of a connection that is not open
        marker = self.closed.get(cid)
        if marker is not None and ts <= marker:
            return  # an open no newer than a close already applied: redelivered
        self.closed.pop(cid, None)
        self.new[cid] = [name, version, instance, ts, ts, self.now_ms]

    def expire(self, ttl_ms: int) -> pa.Table:
        """Drop connections whose lease ran out; return them (their identity, for the counts)."""
        mask = self.keep & (self.seen + ttl_ms <= self.now_ms)
        if not mask.any():
            return CONNECTION_SCHEMA.empty_table()
        self.keep &= ~mask
        dropped = self.table.filter(pa.array(mask))
        for cid, last in zip(dropped.column("connection_id").to_pylist(),
                             self.last_event[mask].tolist(), strict=True):
            self.closed[cid] = max(self.closed.get(cid, last), last)
        return dropped

    def connections(self) -> pa.Table:
        kept = self.table.set_column(
            self.table.schema.get_field_index("last_event_ms"), "last_event_ms", pa.array(self.last_event)
        ).set_column(self.table.schema.get_field_index("seen_ms"), "seen_ms", pa.array(self.seen))
        kept = kept.filter(pa.array(self.keep))
        if not self.new:
            return kept.combine_chunks()
        cols = list(zip(*self.new.values(), strict=True))
        fresh = pa.table([pa.array(list(self.new.keys()), pa.string())]
                         + [pa.array(c, f.type) for c, f in zip(cols, list(CONNECTION_SCHEMA)[1:], strict=True)],
                         schema=CONNECTION_SCHEMA)
        return pa.concat_tables([kept, fresh]).combine_chunks()

    def markers(self, clock_ms: int, retention_ms: int) -> pa.Table:
        horizon = clock_ms - retention_ms
        live = {cid: ms for cid, ms in self.closed.items() if ms >= horizon}
        return pa.table({"connection_id": pa.array(list(live.keys()), pa.string()),
                         "closed_ms": pa.array(list(live.values()), pa.int64())}, schema=CLOSED_SCHEMA)


def _gauges(conns: pa.Table) -> dict[str, tuple[str, str, int, int]]:
    """key -> (name, version, connections, client_instances), fleet total included when non-zero."""
    out: dict[str, tuple[str, str, int, int]] = {}
    if conns.num_rows == 0:
        return out
    grouped = conns.group_by(["client_software_name", "client_software_version"]).aggregate(
        [("connection_id", "count"), ("client_instance_id", "count_distinct")]
    )
    for name, version, n, inst in zip(
        grouped.column("client_software_name").to_pylist(),
        grouped.column("client_software_version").to_pylist(),
        grouped.column("connection_id_count").to_pylist(),
        grouped.column("client_instance_id_count_distinct").to_pylist(), strict=True,
    ):
        out[gauge_key(name, version)] = (name, version, int(n), int(inst))
    fleet_instances = pc.count_distinct(conns.column("client_instance_id")).as_py()
    out[FLEET_KEY] = (FLEET_NAME, FLEET_VERSION, conns.num_rows, int(fleet_instances))
    return out


def _expired_by_key(dropped: pa.Table) -> dict[str, int]:
    if dropped.num_rows == 0:
        return {}
    grouped = dropped.group_by(["client_software_name", "client_software_version"]).aggregate(
        [("connection_id", "count")]
    )
    out = {
        gauge_key(n, v): int(c) for n, v, c in zip(
            grouped.column("client_software_name").to_pylist(),
            grouped.column("client_software_version").to_pylist(),
            grouped.column("connection_id_count").to_pylist(), strict=True,
        )
    }
    out[FLEET_KEY] = dropped.num_rows
    return out


def _diff(before: dict[str, tuple[str, str, int, int]], after: dict[str, tuple[str, str, int, int]],
          expired: dict[str, int], now_ms: int) -> pd.DataFrame:
    rows: list[tuple[Any, ...]] = []
    for key in sorted(before.keys() | after.keys() | expired.keys()):
        new, old = after.get(key), before.get(key)
        if new is not None and (new != old or key in expired):
            name, version, n, inst = new
            rows.append((key, name, version, n, inst, now_ms, False, expired.get(key, 0)))
        elif new is None and (old is not None or key in expired):
            name, version = (old[0], old[1]) if old is not None else key.split("/", 1)
            rows.append((key, name, version, 0, 0, now_ms, True, expired.get(key, 0)))
    frame = pd.DataFrame(rows, columns=OUTPUT_SCHEMA.names)
    return frame.astype({"connections": "int64", "client_instances": "int64", "updated_at_ms": "int64",
                         "removed": "bool", "expired": "int64"})


def advance(state: GaugeState, events: pd.DataFrame | Iterable[pd.DataFrame], now_ms: int,
            config: GaugeConfig | None = None) -> Transition:
    """Apply one micro-batch of valid events (``INPUT_COLUMNS``) at processing time ``now_ms``.

    Returns the new state and the gauge rows (``OUTPUT_SCHEMA``) of every key whose
    ``connections``/``client_instances`` changed or that lost connections to the lease.
    A key reaching zero gets ``removed=True`` with zero counts. Invalid records must
    not be passed in; rows without ``connection_id`` or ``timestamp_ms`` are ignored.
    """
    config = config or GaugeConfig()
    df = _sorted_events(events)
    cids = df["connection_id"].tolist()
    work = _Batch(state, now_ms, list(set(cids)))
    clock_ms = state.clock_ms
    if len(df):
        for event, ts, cid, name, version, instance in zip(
            df["event"].tolist(), df["timestamp_ms"].astype("int64").tolist(), cids,
            _texts(df["client_software_name"], config.fingerprint_key),
            _texts(df["client_software_version"], config.fingerprint_key),
            [v if isinstance(v, str) and v else None for v in df["client_instance_id"].tolist()],
            strict=True,
        ):
            work.apply(event, ts, cid, name, version, instance)
        clock_ms = max(clock_ms, int(df["timestamp_ms"].max()))
    dropped = work.expire(config.ttl_ms) if config.ttl_ms is not None else CONNECTION_SCHEMA.empty_table()
    conns = work.connections()
    new_state = GaugeState(conns, work.markers(clock_ms, config.closed_retention_ms), clock_ms,
                           state.expired_total + dropped.num_rows)
    expired = _expired_by_key(dropped)
    if dropped.num_rows:
        log.warning("connection lease: dropped %d connection(s) with no event for %d ms or more "
                    "(%d dropped since the checkpoint began)", dropped.num_rows, config.ttl_ms,
                    new_state.expired_total)
    gauges = _diff(_gauges(state.connections), _gauges(conns), expired, now_ms)
    return Transition(new_state, gauges, dropped.num_rows)

"""Per-version connection gauges: the state transitions, as plain functions (no Spark).

The state is split so that a batch's work is in proportion to what it touches:

- **connections**: per connection its counted identity and times, per closed
  connection a close marker, and one event-time clock. :func:`step_connections`
  applies a batch's events to the stored entries of the connections they name
  (``udfs.gauge_store`` reads only those) and returns what changed plus *deltas*: ``(name, version, instance,
  +1/-1)`` for every connection that started or stopped counting;
- **totals**, keyed by the gauge key ``<name>/<version>``: the connection count and
  a reference count per client instance. :func:`apply_deltas` folds one key's
  deltas in and returns its gauge row when a value changed.

``udfs.gauge_state`` runs both in the job's keyed step (state in RocksDB, one entry
per connection); :func:`advance` runs them in memory over a :class:`GaugeState`
(tests: the reference the keyed step is held to). Semantics (contract section 2,
"Gauges"; docs/gauges.md):

- a connection counts from its first ``connection_opened`` until its
  ``connection_closed``, under the name/version of that open event (absent or
  empty -> ``unknown``); repeated opens of an open connection and closes of an
  unknown connection change nothing;
- events apply in event order: ``timestamp_ms``, then source partition, offset;
- a close leaves a marker, so a redelivered (older or equal timestamp) open of a
  closed connection stays ignored; a marker counts while it is no older than
  ``closed_retention_ms`` behind the clock (the largest event time seen); an event
  older than a connection's open never touches it;
- ``connections`` = open connections of a name/version; ``client_instances`` =
  distinct non-null ``client_instance_id`` among them; ``connections_by_security``
  = those connections per posture of their open event (``security``, the
  contract's ``<security_protocol>[/<sasl_mechanism>]``);
- software names and versions arrive already masked (:func:`masked_texts`): a
  value the secret scan flags is counted as ``redacted-<fingerprint>``; client
  instance ids too, as findings show them (``udfs.sensitivity.masked_identities``);
- optional lease: with ``ttl_ms``, a connection whose last event was seen
  ``ttl_ms`` or longer ago (processing time) is dropped, logged and counted.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

import pandas as pd
import pyarrow as pa

from configwatch.contract import (
    CONNECTION_CLOSED,
    CONNECTION_OPENED,
    CONNECTION_USAGE,
    UNKNOWN_SECURITY,
    UNKNOWN_SOFTWARE,
    software_key,
)
from configwatch.records import Gauge
from configwatch.secrets import SecretStr, fingerprint
from udfs.rules.secretscan import mask_secrets
from udfs.schema import record_fields
from udfs.sensitivity import masked_identities

__all__ = [
    "DEFAULT_CLOSED_RETENTION_MS",
    "INPUT_COLUMNS",
    "MASK_PREFIX",
    "OUTPUT_SCHEMA",
    "SWEEP_MIN_MARKERS",
    "Conn",
    "ConnectionsStep",
    "Delta",
    "GaugeConfig",
    "GaugeState",
    "Totals",
    "Transition",
    "advance",
    "apply_deltas",
    "expire_connections",
    "log_lease",
    "masked_texts",
    "sorted_events",
    "stale_markers",
    "step_connections",
    "sweep_due",
]

log = logging.getLogger(__name__)

DEFAULT_CLOSED_RETENTION_MS: Final = 10 * 60 * 1000
MASK_PREFIX: Final = "redacted-"  # a software name or version holding a secret counts as this + its fingerprint
SWEEP_MIN_MARKERS: Final = 1_000  # a sweep runs no sooner than this many close markers written (sweep_due)

# What the transition reads from the decoded stream (partition/offset may be null; ``usage``: the request
# versions of a close or a connection_usage as ``udfs.upgrade.usage.encode_usage`` wrote them, else null;
# ``usage_sequence``: a connection_usage's number on its connection; ``security``: the posture label).
INPUT_COLUMNS: Final = (
    "event", "timestamp_ms", "connection_id", "client_instance_id",
    "client_software_name", "client_software_version", "partition", "offset", "usage", "usage_sequence",
    "client_id", "principal", "security",
)
_ORDER: Final = ["timestamp_ms", "partition", "offset"]

# One gauge update: its key, the contract's gauge record, and the connections of this key the lease dropped.
OUTPUT_SCHEMA: Final = pa.schema([pa.field("key", pa.string()), *record_fields(Gauge),
                                  pa.field("expired", pa.int64())])


@dataclass(frozen=True, slots=True)
class GaugeConfig:
    """Knobs of the transition. ``ttl_ms`` None disables the lease; ``fingerprint_key`` keys the redaction."""

    ttl_ms: int | None = None
    closed_retention_ms: int = DEFAULT_CLOSED_RETENTION_MS
    fingerprint_key: SecretStr | None = None

    def __post_init__(self) -> None:
        if self.ttl_ms is not None and self.ttl_ms <= 0:
            raise ValueError("ttl_ms must be positive")


class Conn(NamedTuple):
    """One open connection as counted."""

    name: str
    version: str
    instance: str | None
    opened_ms: int
    last_event_ms: int
    seen_ms: int  # processing time of the batch that last saw it (the lease)
    usage_seq: int = 0  # the last connection_usage folded (a redelivered one is not counted twice)
    security: str = UNKNOWN_SECURITY  # the posture it counts under (``connections_by_security``)


class Delta(NamedTuple):
    """A connection that started (+1) or stopped (-1) counting under ``name/version``, or (0) reported usage."""

    name: str
    version: str
    instance: str | None
    change: int
    expired: bool = False
    # The request versions the connection sent (encode_usage): on a connection_usage, those new since its last;
    # on a close, those not reported before.
    usage: str | None = None
    group: tuple[str | None, str | None] | None = None  # a client naming no software: its (client id, principal)
    security: str = UNKNOWN_SECURITY


@dataclass(frozen=True, slots=True)
class ConnectionsStep:
    """What a batch changed: stored connections (None = remove), markers, the clock, the deltas."""

    conns: dict[str, Conn | None]
    markers: dict[str, int]
    clock_ms: int
    deltas: list[Delta]


def masked_texts(values: Iterable[Any], key: SecretStr | None) -> list[str]:
    """Software names/versions as counted: absent or empty is ``unknown``; a flagged secret is redacted."""
    texts = [v if isinstance(v, str) and v else UNKNOWN_SOFTWARE for v in values]
    if key is None:
        return texts
    return mask_secrets(texts, lambda value: f"{MASK_PREFIX}{fingerprint(value, key)}")


def sorted_events(events: pd.DataFrame | Iterable[pd.DataFrame]) -> pd.DataFrame:
    """The events with a connection id and a time, in event order (``INPUT_COLUMNS`` all present)."""
    frames = [events] if isinstance(events, pd.DataFrame) else [f for f in events if len(f)]
    if not frames:
        return pd.DataFrame({c: [] for c in INPUT_COLUMNS})
    df = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    for column in INPUT_COLUMNS:
        if column not in df.columns:
            df = df.assign(**{column: None})
    df = df[df["connection_id"].notna() & df["timestamp_ms"].notna()]
    return df.sort_values(_ORDER, kind="stable", na_position="last")


def step_connections(events: pd.DataFrame, conns: Mapping[str, Conn], markers: Mapping[str, int], clock_ms: int,
                     now_ms: int, config: GaugeConfig) -> ConnectionsStep:
    """Apply a batch's events (``sorted_events`` order, names masked) to the entries they name.

    ``conns``/``markers`` hold the stored entries of the connections in ``events``
    (absent: none stored); only those are read or changed. A connection opened and
    closed within the batch gives no deltas (they cancel), unless its close carries usage.
    """
    if len(events):
        clock_ms = max(clock_ms, int(events["timestamp_ms"].max()))
    horizon = clock_ms - config.closed_retention_ms
    live: dict[str, Conn | None] = {}
    marks: dict[str, int] = {}
    deltas: list[Delta | None] = []
    born: dict[str, int] = {}  # connections opened in this batch: the index of their +1

    def current(cid: str) -> Conn | None:
        return live[cid] if cid in live else conns.get(cid)

    def marker(cid: str) -> int | None:
        ms = marks.get(cid, markers.get(cid))
        return ms if ms is not None and ms >= horizon else None

    def column(name: str) -> list[Any]:
        return events[name].tolist() if name in events else [None] * len(events)

    for event, ts, cid, name, version, instance, usage, seq, client_id, principal, security in zip(
        events["event"].tolist(), events["timestamp_ms"].astype("int64").tolist(),
        events["connection_id"].tolist(), events["client_software_name"].tolist(),
        events["client_software_version"].tolist(), events["client_instance_id"].tolist(), column("usage"),
        column("usage_sequence"), column("client_id"), column("principal"), column("security"), strict=True,
    ):
        conn = current(cid)
        if conn is not None:
            if ts < conn.opened_ms:
                continue  # older than the open that counts: a stale redelivery
            if event == CONNECTION_USAGE:  # a long-lived connection's new request versions, each folded once
                number = int(seq) if isinstance(seq, int | float) and seq == seq else 0
                fresh = isinstance(usage, str) and number > conn.usage_seq
                live[cid] = conn._replace(last_event_ms=max(conn.last_event_ms, ts), seen_ms=now_ms,
                                          usage_seq=max(conn.usage_seq, number))
                if fresh:
                    deltas.append(Delta(conn.name, conn.version, conn.instance, 0, usage=usage,
                                        group=_group(conn, client_id, principal)))
                continue
            if event == CONNECTION_CLOSED:
                live[cid] = None
                marks[cid] = ts
                used = usage if isinstance(usage, str) else None
                if cid in born and used is None:  # opened and closed within the batch: no change to count
                    deltas[born.pop(cid)] = None
                else:
                    deltas.append(Delta(conn.name, conn.version, conn.instance, -1, usage=used,
                                        group=_group(conn, client_id, principal) if used is not None else None,
                                        security=conn.security))
            else:  # a repeated open or any other event of an open connection: only the lease moves
                live[cid] = conn._replace(last_event_ms=max(conn.last_event_ms, ts), seen_ms=now_ms)
            continue
        if event == CONNECTION_CLOSED:  # unknown connection: remember the close so an older open stays out
            known = marker(cid)
            marks[cid] = ts if known is None else max(known, ts)
        elif event == CONNECTION_OPENED:
            known = marker(cid)
            if known is not None and ts <= known:
                continue  # an open no newer than a close already applied: redelivered
            inst = instance if isinstance(instance, str) and instance else None
            posture = security if isinstance(security, str) and security else UNKNOWN_SECURITY
            live[cid] = Conn(str(name), str(version), inst, ts, ts, now_ms, security=posture)
            born[cid] = len(deltas)
            deltas.append(Delta(str(name), str(version), inst, +1, security=posture))
    # A connection opened and closed within the batch was never stored: nothing to remove.
    changed = {cid: conn for cid, conn in live.items() if conn is not None or cid in conns}
    return ConnectionsStep(changed, marks, clock_ms, [d for d in deltas if d is not None])


def _group(conn: Conn, client_id: Any, principal: Any) -> tuple[str | None, str | None] | None:
    """Who an unnamed client's usage is grouped under (``configwatch.contract.usage_key``); None if it is named."""
    if conn.name != UNKNOWN_SOFTWARE or conn.version != UNKNOWN_SOFTWARE:
        return None
    return (client_id if isinstance(client_id, str) else None, principal if isinstance(principal, str) else None)


def stale_markers(markers: Mapping[str, int], clock_ms: int, config: GaugeConfig) -> list[str]:
    """The close markers that fell behind the clock's retention horizon (no longer counted)."""
    horizon = clock_ms - config.closed_retention_ms
    return [cid for cid, ms in markers.items() if ms < horizon]


def sweep_due(written_since: int, live_after_last: int) -> bool:
    """Whether to sweep stale markers: once as many were written as the last sweep left (amortised O(1))."""
    return written_since > max(SWEEP_MIN_MARKERS, live_after_last)


def log_lease(dropped: int, config: GaugeConfig, total: int) -> None:
    """The warning a lease drop gives (``total``: dropped since the state began)."""
    log.warning("connection lease: dropped %d connection(s) with no event for %d ms or more "
                "(%d dropped since the checkpoint began)", dropped, config.ttl_ms, total)


def expire_connections(conns: Mapping[str, Conn], now_ms: int, ttl_ms: int) -> tuple[list[str], list[Delta]]:
    """The connections whose lease ran out at ``now_ms`` and their (-1, expired) deltas."""
    gone = [cid for cid, c in conns.items() if c.seen_ms + ttl_ms <= now_ms]
    return gone, [Delta(conns[c].name, conns[c].version, conns[c].instance, -1, True, security=conns[c].security)
                  for c in gone]


@dataclass(frozen=True, slots=True)
class Totals:
    """One gauge key's values: open connections, distinct client instances, connections per posture (JSON)."""

    connections: int = 0
    instances: int = 0
    by_security: str = "{}"  # JSON object, sorted keys: posture label -> open connections


def apply_deltas(name: str, version: str, totals: Totals, refs: Mapping[str, int], deltas: Iterable[Delta],
                 now_ms: int) -> tuple[Totals, dict[str, int], dict[str, Any] | None]:
    """Fold one key's deltas into its totals.

    ``refs``: the stored connection count of each client instance the deltas name.
    Returns the new totals, the new counts of those instances (0: forget it) and
    the gauge row (``OUTPUT_SCHEMA``) when a value changed or the lease dropped some.
    """
    connections, instances, expired = totals.connections, totals.instances, 0
    by_security: dict[str, int] = json.loads(totals.by_security)
    changed: dict[str, int] = {}
    for d in deltas:
        connections += d.change
        expired += int(d.expired)
        if d.change:
            by_security[d.security] = by_security.get(d.security, 0) + d.change
        if d.instance is not None:
            before = changed.get(d.instance, refs.get(d.instance, 0))
            after = max(before + d.change, 0)
            changed[d.instance] = after
            instances += int(after > 0) - int(before > 0)
    postures = {label: n for label, n in sorted(by_security.items()) if n > 0}
    new = Totals(max(connections, 0), max(instances, 0), json.dumps(postures, separators=(",", ":")))
    if new == totals and not expired:
        return new, changed, None
    removed = new.connections == 0
    row = {"key": software_key(name, version), "client_software_name": name, "client_software_version": version,
           "connections": new.connections, "client_instances": 0 if removed else new.instances,
           "updated_at_ms": now_ms, "removed": removed, "connections_by_security": postures, "expired": expired}
    return new, changed, row


@dataclass(frozen=True)
class GaugeState:
    """The whole state in memory: what Spark keeps in its state stores, as dicts."""

    conns: Mapping[str, Conn] = field(default_factory=dict)
    markers: Mapping[str, int] = field(default_factory=dict)
    clock_ms: int = 0  # the event-time clock
    totals: Mapping[str, Totals] = field(default_factory=dict)
    refs: Mapping[tuple[str, str], int] = field(default_factory=dict)  # (gauge key, instance) -> connections
    expired_total: int = 0

    @classmethod
    def empty(cls) -> GaugeState:
        return cls()

    def next_expiry_ms(self, config: GaugeConfig) -> int | None:
        """When the earliest lease runs out (processing time), None without a lease or connections."""
        if config.ttl_ms is None or not self.conns:
            return None
        return min(c.seen_ms for c in self.conns.values()) + config.ttl_ms


@dataclass(frozen=True, slots=True)
class Transition:
    """The result of one ``advance``: new state, gauge updates (``OUTPUT_SCHEMA``), lease drops."""

    state: GaugeState
    gauges: pd.DataFrame
    expired: int


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=OUTPUT_SCHEMA.names)
    return frame.astype({"connections": "int64", "client_instances": "int64", "updated_at_ms": "int64",
                         "removed": "bool", "expired": "int64"})


def advance(state: GaugeState, events: pd.DataFrame | Iterable[pd.DataFrame], now_ms: int,
            config: GaugeConfig | None = None) -> Transition:
    """Apply one micro-batch of valid events (``INPUT_COLUMNS``) at processing time ``now_ms``, in memory.

    The same transitions the job's keyed step runs (connections, then per gauge key). Returns the new
    state and one gauge row per key whose values changed or that lost connections
    to the lease; a key reaching zero gets ``removed=True`` with zero counts.
    """
    config = config or GaugeConfig()
    df = sorted_events(events)
    conns, markers, clock_ms = dict(state.conns), dict(state.markers), state.clock_ms
    deltas: list[Delta] = []
    if len(df):
        df = df.assign(client_software_name=masked_texts(df["client_software_name"], config.fingerprint_key),
                       client_software_version=masked_texts(df["client_software_version"], config.fingerprint_key),
                       client_instance_id=masked_identities(df["client_instance_id"].tolist(), config.fingerprint_key))
        touched = set(df["connection_id"].tolist())
        step = step_connections(df, {c: conns[c] for c in touched if c in conns},
                                {c: markers[c] for c in touched if c in markers}, clock_ms, now_ms, config)
        for cid, conn in step.conns.items():
            if conn is None:
                conns.pop(cid, None)
            else:
                conns[cid] = conn
        markers.update(step.markers)
        clock_ms = step.clock_ms
        deltas += step.deltas
    dropped: list[str] = []
    if config.ttl_ms is not None:
        dropped, lease = expire_connections(conns, now_ms, config.ttl_ms)
        for cid in dropped:
            markers[cid] = max(markers.get(cid, conns[cid].last_event_ms), conns[cid].last_event_ms)
            del conns[cid]
        deltas += lease
    # Markers older than the retention horizon no longer count: forget them.
    for cid in stale_markers(markers, clock_ms, config):
        del markers[cid]
    totals, refs = dict(state.totals), dict(state.refs)
    by_key: dict[tuple[str, str], list[Delta]] = {}
    for d in deltas:
        by_key.setdefault((d.name, d.version), []).append(d)
    rows = []
    for (name, version), ds in sorted(by_key.items()):
        key = software_key(name, version)
        named = {(key, d.instance): refs.get((key, d.instance), 0) for d in ds if d.instance is not None}
        new, changed, row = apply_deltas(name, version, totals.get(key, Totals()),
                                         {i: n for (_, i), n in named.items()}, ds, now_ms)
        for instance, n in changed.items():
            if n:
                refs[(key, instance)] = n
            else:
                refs.pop((key, instance), None)
        if new.connections:
            totals[key] = new
        else:
            totals.pop(key, None)
        if row is not None:
            rows.append(row)
    expired_total = state.expired_total + len(dropped)
    if dropped:
        log_lease(len(dropped), config, expired_total)
    return Transition(GaugeState(conns, markers, clock_ms, totals, refs, expired_total), _frame(rows), len(dropped))

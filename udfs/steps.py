"""The pipeline's Python keyed steps, once, over an abstract per-key state (Spark's, or dicts).

``first_step`` runs per ``state_key`` of ``udfs.pipeline.ROUTED_SCHEMA`` rows and
returns ``MID_SCHEMA`` rows; ``second_step`` runs per ``route`` of those and returns
``FINAL_SCHEMA`` rows (docs/architecture of the pipeline: ``udfs.pipeline``). That is
the whole pipeline in memory (:class:`udfs.memory.MemoryPipeline`: tests, the bench
peers) and in Spark for checkpoints begun before the JVM gauge steps. A new checkpoint
runs the connection buckets and totals in the JVM (``udfs.flow``, their twins) and
``final_step`` for the other keys (detection, pass rows). Every step reads and writes only
through a :class:`KeyedState`, the state of the key being processed: ``streaming.pipeline``
backs it with Spark's state variables (RocksDB), ``MemoryPipeline`` with dicts.

State variables: ``detect`` (detection JSON of a ``fleet|``/``group|`` key),
``entries`` (map: connection id -> its ``Conn`` and its close marker, either may be
null; checkpoints begun before it keep ``conns``, connection id -> ``Conn``, and
``closed``, connection id -> close time: ``GaugeConfig.markers_apart``), ``clock``
(a bucket's clock, lease total and marker bookkeeping), ``totals`` (a gauge key's
counts), ``instances`` (map: instance -> connections).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any, Final, Protocol

import pandas as pd
import pyarrow as pa

from configwatch.contract import ALERTS, GAUGES, USAGE
from configwatch.records import VersionUsage
from configwatch.secrets import SecretStr
from udfs.gauges import (
    INPUT_COLUMNS,
    USAGE_PAIR_SEP,
    BucketStep,
    Conn,
    Delta,
    GaugeConfig,
    Totals,
    apply_deltas,
    expire_bucket,
    log_lease,
    prune_due,
    sorted_events,
    stale_markers,
    step_bucket,
    usage_pair,
)
from udfs.pipeline import CONN, FINAL_SCHEMA, MID_SCHEMA, finding_rows, gauge_route, gauge_value, key_kind
from udfs.rules.findings import contract_json
from udfs.rules.stateful import PASS, step
from udfs.schema import state_ddl
from udfs.upgrade.usage import decode_usage, encode_usage

__all__ = ["STATE_SCHEMAS", "KeyedState", "connection_variables", "expire_step", "final_step", "first_step",
           "second_step"]

# Each state variable's Spark schema: (kind, schema) for values, (kind, key schema, value schema) for maps.
STATE_SCHEMAS: Final = {
    "detect": ("list", "state string"),
    "entries": ("map", "connection_id string", f"{state_ddl(Conn)}, closed_ms long"),
    "conns": ("map", "connection_id string", state_ddl(Conn)),
    "closed": ("map", "connection_id string", "closed_ms long"),
    "clock": ("value", "clock_ms long, expired_total long, markers_written long, markers_live long"),
    "totals": ("value", state_ddl(Totals)),
    "instances": ("map", "instance string", "connections long"),
    "usage": ("map", "pair string", "connections long"),
    "usage_instances": ("map", "instance string", "connections long"),
    "usage_totals": ("value", "connections long, instances long, overflow long"),
}


class KeyedState(Protocol):
    """The state of the key being processed: values and maps of tuples, and one timer."""

    def get(self, name: str) -> tuple[Any, ...] | None: ...

    def put(self, name: str, value: tuple[Any, ...]) -> None: ...

    def clear(self, name: str) -> None: ...

    def map_get(self, name: str, key: str) -> tuple[Any, ...] | None: ...

    def map_put(self, name: str, key: str, value: tuple[Any, ...]) -> None: ...

    def map_remove(self, name: str, key: str) -> None: ...

    def map_items(self, name: str) -> Iterator[tuple[str, tuple[Any, ...]]]: ...

    def timer_set(self) -> bool: ...

    def set_timer(self, at_ms: int) -> None: ...


def _mid(rows: dict[str, object]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=MID_SCHEMA.names)


def _deltas(deltas: list[Delta]) -> pd.DataFrame:
    return _mid({"route": [gauge_route(d.name, d.version) for d in deltas], "kind": GAUGES,
                 "name": [d.name for d in deltas], "version": [d.version for d in deltas],
                 "instance": [d.instance for d in deltas], "change": [d.change for d in deltas],
                 "expired": [d.expired for d in deltas], "usage": [d.usage for d in deltas]})


def _clock(state: KeyedState) -> tuple[int, int, int, int]:
    stored = state.get("clock")
    return (int(stored[0]), int(stored[1]), int(stored[2]), int(stored[3])) if stored else (0, 0, 0, 0)


class _Entries:
    """A bucket's connections and close markers, one ``entries`` value per connection id.

    A connection costs one read and one write a batch (a close overwrites the open entry).
    """

    NAME: Final = "entries"
    _NO_CONN: Final = (None,) * len(Conn._fields)

    def __init__(self, state: KeyedState) -> None:
        self._state = state
        self._stored: dict[str, tuple[Any, ...]] = {}

    def read(self, cids: list[str]) -> tuple[dict[str, Conn], dict[str, int]]:
        conns, markers = {}, {}
        for cid in cids:
            value = self._state.map_get(self.NAME, cid)
            if value is not None:
                self._stored[cid] = value
                conn, marker = self._split(value)
                if conn is not None:
                    conns[cid] = conn
                if marker is not None:
                    markers[cid] = marker
        return conns, markers

    def write(self, result: BucketStep) -> None:
        for cid in result.conns.keys() | result.markers.keys():
            conn, marker = self._split(self._stored.get(cid))
            self._put(cid, result.conns.get(cid, conn), result.markers.get(cid, marker))

    def sweep(self, clock_ms: int, config: GaugeConfig) -> int:
        """Drop the markers behind the retention horizon; the entries left."""
        entries = {cid: self._split(v) for cid, v in self._state.map_items(self.NAME)}
        marks = {cid: marker for cid, (_, marker) in entries.items() if marker is not None}
        stale = stale_markers(marks, {0: clock_ms}, replace(config, buckets=1)).get(0, [])
        for cid in stale:
            self._put(cid, entries[cid][0], None)
        return len(entries) - sum(entries[cid][0] is None for cid in stale)

    def open_conns(self) -> dict[str, Conn]:
        return {cid: conn for cid, v in self._state.map_items(self.NAME) if (conn := self._split(v)[0]) is not None}

    def expire(self, gone: Mapping[str, Conn]) -> None:
        for cid, conn in gone.items():
            self._put(cid, None, conn.last_event_ms)

    def _put(self, cid: str, conn: Conn | None, marker: int | None) -> None:
        if conn is None and marker is None:
            self._state.map_remove(self.NAME, cid)
        else:
            self._state.map_put(self.NAME, cid, (*(self._NO_CONN if conn is None else conn), marker))

    @staticmethod
    def _split(value: tuple[Any, ...] | None) -> tuple[Conn | None, int | None]:
        if value is None:
            return None, None
        return (None if value[0] is None else Conn(*value[:-1])), (None if value[-1] is None else int(value[-1]))


class _Apart:
    """Connections in ``conns``, close markers in ``closed``: checkpoints begun before ``entries``."""

    def __init__(self, state: KeyedState) -> None:
        self._state = state

    def read(self, cids: list[str]) -> tuple[dict[str, Conn], dict[str, int]]:
        conns, markers = {}, {}
        for cid in cids:
            value = self._state.map_get("conns", cid)
            if value is not None:
                conns[cid] = Conn(*value)
            else:
                marker = self._state.map_get("closed", cid)
                if marker is not None:
                    markers[cid] = int(marker[0])
        return conns, markers

    def write(self, result: BucketStep) -> None:
        for cid, conn in result.conns.items():
            if conn is None:
                self._state.map_remove("conns", cid)
            else:
                self._state.map_put("conns", cid, tuple(conn))
        for cid, ms in result.markers.items():
            self._state.map_put("closed", cid, (ms,))

    def sweep(self, clock_ms: int, config: GaugeConfig) -> int:
        """Drop the markers behind the retention horizon; the markers left."""
        marks = {cid: int(v[0]) for cid, v in self._state.map_items("closed")}
        stale = stale_markers(marks, {0: clock_ms}, replace(config, buckets=1)).get(0, [])
        for cid in stale:
            self._state.map_remove("closed", cid)
        return len(marks) - len(stale)

    def open_conns(self) -> dict[str, Conn]:
        return {cid: Conn(*v) for cid, v in self._state.map_items("conns")}

    def expire(self, gone: Mapping[str, Conn]) -> None:
        for cid, conn in gone.items():
            self._state.map_remove("conns", cid)
            self._state.map_put("closed", cid, (conn.last_event_ms,))


def connection_variables(config: GaugeConfig) -> tuple[str, ...]:
    """The state variables a connection bucket uses (``GaugeConfig.markers_apart``: the layout's choice)."""
    return ("conns", "closed", "clock") if config.markers_apart else (_Entries.NAME, "clock")


def _store(state: KeyedState, config: GaugeConfig) -> _Entries | _Apart:
    return _Apart(state) if config.markers_apart else _Entries(state)


def _with_usage(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``usage``: each close's request versions as one string (``encode_usage``), else null."""
    pairs = frame["request_pairs"] if "request_pairs" in frame else pd.Series(None, index=frame.index, dtype=object)
    carrying = pairs.notna()
    usage = pd.Series(None, index=frame.index, dtype=object)
    if carrying.any():
        over = frame["request_overflow"][carrying]
        usage[carrying] = [encode_usage(p, None if pd.isna(o) else int(o)) for p, o in zip(pairs[carrying], over,
                                                                                         strict=True)]
    return frame.assign(usage=usage)


def _connections(frame: pd.DataFrame, state: KeyedState, config: GaugeConfig, now_ms: int) -> Iterator[pd.DataFrame]:
    """One connection bucket: read the entries of the connections named, apply, write back what changed."""
    events = sorted_events(_with_usage(frame)[list(INPUT_COLUMNS)])
    store = _store(state, config)
    conns, markers = store.read(events["connection_id"].unique().tolist())
    clock, expired_total, written, live = _clock(state)
    result = step_bucket(events, conns, markers, clock, now_ms, config)
    store.write(result)
    written += len(result.markers)
    if prune_due(written, live):
        written, live = 0, store.sweep(result.clock_ms, config)
    state.put("clock", (result.clock_ms, expired_total, written, live))
    if config.ttl_ms is not None and not state.timer_set():
        state.set_timer(now_ms + config.ttl_ms)
    if result.deltas:
        yield _deltas(result.deltas)


def first_step(state_key: str, frame: pd.DataFrame, state: KeyedState, key: SecretStr, config: GaugeConfig,
               now_ms: int) -> Iterator[pd.DataFrame]:
    """One ``state_key``'s routed rows: pass rows on, detection keys through ``step``, buckets through gauges."""
    kind = key_kind(state_key)
    if kind == CONN:
        yield from _connections(frame, state, config, now_ms)
    elif kind == PASS:
        yield _mid({"route": state_key, "kind": frame["kind"], "out_key": frame["out_key"],
                    "value": frame["finding"]})
    else:
        found = _detect(state_key, frame, state, key, now_ms)
        if found.num_rows:
            yield finding_rows(state_key, found)


def _detect(state_key: str, frame: pd.DataFrame, state: KeyedState, key: SecretStr, now_ms: int) -> pa.Table:
    """A detection key's findings against its ``detect`` state, which it updates."""
    stored = state.get("detect")
    found, new_state = step(state_key, frame, str(stored[0]) if stored else None, key, now_ms)
    if new_state is not None:
        state.put("detect", (new_state,))
    return found


def _final(kind: str | pd.Series, keys: Any, values: Any) -> pd.DataFrame:
    return pd.DataFrame({"kind": kind, "key": keys, "value": values, "tombstone": False}, columns=FINAL_SCHEMA.names)


def final_step(state_key: str, frame: pd.DataFrame, state: KeyedState, key: SecretStr,
               now_ms: int) -> Iterator[pd.DataFrame]:
    """The Python keyed step when the gauge steps run on the JVM (``udfs.flow``): ``FINAL_SCHEMA`` rows.

    It reads the same routed rows as the JVM steps: ``conn|`` keys are theirs and give nothing
    here. Pass rows go out as they are, detection keys through ``step`` (as in :func:`first_step`).
    """
    kind = key_kind(state_key)
    if kind == CONN:
        return
    if kind == PASS:
        yield _final(frame["kind"], frame["out_key"], frame["finding"])
    else:
        found = _detect(state_key, frame, state, key, now_ms)
        if found.num_rows:
            yield _final(ALERTS, found.column("alert_id").to_pylist(), contract_json(found))


def expire_step(state: KeyedState, config: GaugeConfig, now_ms: int) -> Iterator[pd.DataFrame]:
    """A connection bucket's lease timer fired: drop the connections whose lease ran out."""
    if config.ttl_ms is None:
        return
    store = _store(state, config)
    conns = store.open_conns()
    gone, deltas = expire_bucket(conns, now_ms, config.ttl_ms)
    store.expire({cid: conns[cid] for cid in gone})
    clock, expired_total, written, live = _clock(state)
    state.put("clock", (clock, expired_total + len(gone), written + len(gone), live))
    dropped = set(gone)
    left = [c.seen_ms for cid, c in conns.items() if cid not in dropped]
    if left:
        state.set_timer(min(left) + config.ttl_ms)
    if gone:
        log_lease(len(gone), config, expired_total + len(gone))
        yield _deltas(deltas)


def second_step(frame: pd.DataFrame, state: KeyedState, now_ms: int) -> Iterator[pd.DataFrame]:
    """One ``route``'s rows: records on as they are; a gauge key folds its deltas into its totals."""
    gauges = frame[frame["kind"] == GAUGES]
    if len(gauges) < len(frame):
        rest = frame[frame["kind"] != GAUGES]
        yield pd.DataFrame({"kind": rest["kind"], "key": rest["out_key"], "value": rest["value"],
                            "tombstone": False}, columns=FINAL_SCHEMA.names)
    if not len(gauges):
        return
    name, version = str(gauges["name"].iloc[0]), str(gauges["version"].iloc[0])
    deltas = [Delta(name, version, i if isinstance(i, str) else None, int(c), bool(e))
              for i, c, e in zip(gauges["instance"], gauges["change"], gauges["expired"], strict=True)]
    closes = gauges[gauges["usage"].notna()]  # closes carrying request versions: none unless in proxy mode
    usage = _usage(name, version, closes, state, now_ms) if len(closes) else None
    if usage is not None:
        yield pd.DataFrame({"kind": [USAGE], "key": [usage.key], "value": [usage.to_json()], "tombstone": [False]},
                           columns=FINAL_SCHEMA.names)
    stored = state.get("totals")
    totals = Totals(int(stored[0]), int(stored[1])) if stored else Totals()
    refs = {}
    for instance in {d.instance for d in deltas if d.instance is not None}:
        value = state.map_get("instances", instance)
        refs[instance] = int(value[0]) if value is not None else 0
    new, changed, row = apply_deltas(name, version, totals, refs, deltas, now_ms)
    for instance, n in changed.items():
        if n:
            state.map_put("instances", instance, (n,))
        elif refs.get(instance):
            state.map_remove("instances", instance)
    if new.connections:
        state.put("totals", (new.connections, new.instances))
    else:
        state.clear("totals")
    if row is not None:
        yield pd.DataFrame({"kind": [GAUGES], "key": [row["key"]], "value": [gauge_value(row)],
                            "tombstone": [bool(row["removed"])]}, columns=FINAL_SCHEMA.names)


def _usage(name: str, version: str, closes: pd.DataFrame, state: KeyedState, now_ms: int) -> VersionUsage:
    """Fold closes with usage (rows with ``instance`` and ``usage``) into the key's usage state; the new record."""
    stored = state.get("usage_totals")
    connections, instances, overflow = (int(stored[0]), int(stored[1]), int(stored[2])) if stored else (0, 0, 0)
    counts: dict[str, int] = {}
    for instance, text in zip(closes["instance"], closes["usage"], strict=True):
        pairs, over = decode_usage(str(text))
        connections, overflow = connections + 1, overflow + over
        for k, v in pairs:
            pair = usage_pair(k, v)
            if pair not in counts:
                seen = state.map_get("usage", pair)
                counts[pair] = int(seen[0]) if seen is not None else 0
            counts[pair] += 1
        if isinstance(instance, str):
            seen = state.map_get("usage_instances", instance)
            if seen is None:
                instances += 1
            state.map_put("usage_instances", instance, ((int(seen[0]) if seen is not None else 0) + 1,))
    for pair, n in counts.items():
        state.map_put("usage", pair, (n,))
    state.put("usage_totals", (connections, instances, overflow))
    rows = sorted((int(k), int(v), int(n[0])) for (k, _, v), n in
                  ((pair.partition(USAGE_PAIR_SEP), n) for pair, n in state.map_items("usage")))
    ids: list[str] = []
    for kept, _ in state.map_items("usage_instances"):
        ids.append(kept)
        if len(ids) == VersionUsage.MAX_INSTANCE_IDS:
            break
    return VersionUsage(name, version, tuple(rows), connections, instances, tuple(sorted(ids)), now_ms, overflow)

"""The connection gauges in keyed state: the ``conn`` key's step over ``udfs.gauges``' transitions.

All connection events go to one state key, ``conn``, so one call per batch sees every
connection and every gauge key, and the gauge records leave the same keyed step that
counted them (a client instance's connections may be anywhere in the stream, so distinct
instances can only be counted where all of them are). State variables
(``udfs.steps.STATE_SCHEMAS``):

- the connections (``entries``, ``recent``, ``seen``, ``clock``): ``udfs.gauge_store``;
- ``totals`` (map: gauge key -> connections, instances, connections per posture), ``instances`` (map: gauge key and
  instance -> open connections), touched only for the keys and instances a batch's deltas name;
- ``usage`` (map: gauge key -> its usage record's numbers, request versions and first
  instance ids) and ``usage_instances`` (map: gauge key and instance -> closes).

Every state call is a round trip to Spark's state server (``docs/gauges.md``), so the
work is in proportion to what a batch names, not to the fleet.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

import pandas as pd

from configwatch.contract import GAUGES, USAGE, software_key, usage_key
from configwatch.records import VersionUsage
from udfs.gauge_store import Store
from udfs.gauges import (
    INPUT_COLUMNS,
    Delta,
    GaugeConfig,
    Totals,
    apply_deltas,
    expire_connections,
    log_lease,
    sorted_events,
    step_connections,
)
from udfs.pipeline import final_rows, gauge_value
from udfs.upgrade.usage import decode_usage, encode_usage

if TYPE_CHECKING:
    from udfs.steps import KeyedState

__all__ = ["INSTANCES", "TOTALS", "USAGE_INSTANCES", "USAGE_STATE", "connections", "expire"]

TOTALS: Final = "totals"
INSTANCES: Final = "instances"
USAGE_STATE: Final = "usage"
USAGE_INSTANCES: Final = "usage_instances"


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


def connections(frame: pd.DataFrame, state: KeyedState, config: GaugeConfig, now_ms: int) -> Iterator[pd.DataFrame]:
    """The batch's connection events: read the entries named, apply, write back, fold the gauges; records out."""
    events = sorted_events(_with_usage(frame)[list(INPUT_COLUMNS)])
    store = Store(state)
    conns, markers = store.read(events["connection_id"].unique().tolist())
    result = step_connections(events, conns, markers, store.clock.clock_ms, now_ms, config)
    store.write(result)
    store.save(config)
    if config.ttl_ms is not None and not state.timer_set():
        state.set_timer(now_ms + config.ttl_ms)
    yield from _fold(result.deltas, state, now_ms)


def expire(state: KeyedState, config: GaugeConfig, now_ms: int) -> Iterator[pd.DataFrame]:
    """The lease timer fired: drop the connections whose lease ran out, fold their deltas."""
    if config.ttl_ms is None:
        return
    store = Store(state)
    conns = store.open_conns()
    gone, deltas = expire_connections(conns, now_ms, config.ttl_ms)
    store.expire({cid: conns[cid] for cid in gone})
    store.save(config)
    dropped = set(gone)
    left = [c.seen_ms for cid, c in conns.items() if cid not in dropped]
    if left:
        state.set_timer(min(left) + config.ttl_ms)
    if gone:
        log_lease(len(gone), config, store.clock.expired_total)
        yield from _fold(deltas, state, now_ms)


def _fold(deltas: list[Delta], state: KeyedState, now_ms: int) -> Iterator[pd.DataFrame]:
    """Fold each gauge key's deltas into its totals (and a close's usage into its usage): the records."""
    by_key: dict[tuple[str, str], list[Delta]] = {}
    for d in deltas:
        by_key.setdefault((d.name, d.version), []).append(d)
    kinds, keys, values, tombstones = [], [], [], []
    for (name, version), ds in sorted(by_key.items()):
        gauge = software_key(name, version)
        groups: dict[tuple[str | None, str | None] | None, list[Delta]] = {}
        for d in ds:  # closes and usage events with request versions, per group (unnamed clients)
            if d.usage is not None:
                groups.setdefault(d.group, []).append(d)
        for group, reports in sorted(groups.items(), key=lambda g: json.dumps(g[0])):
            usage = _usage(name, version, group, reports, state, now_ms)
            kinds.append(USAGE)
            keys.append(usage.key)
            values.append(usage.to_json())
            tombstones.append(False)
        counting = [d for d in ds if d.change or d.expired]  # a usage report changes no gauge
        row = _totals(name, version, gauge, counting, state, now_ms) if counting else None
        if row is not None:
            kinds.append(GAUGES)
            keys.append(row["key"])
            values.append(gauge_value(row))
            tombstones.append(bool(row["removed"]))
    if kinds:
        yield final_rows(kinds, keys, values, tombstones)


def _totals(name: str, version: str, gauge: str, deltas: list[Delta], state: KeyedState,
            now_ms: int) -> dict[str, Any] | None:
    stored = state.map_get(TOTALS, (gauge,))
    totals = Totals(int(stored[0]), int(stored[1]), str(stored[2])) if stored else Totals()
    refs = {}
    for instance in {d.instance for d in deltas if d.instance is not None}:
        value = state.map_get(INSTANCES, (gauge, instance))
        refs[instance] = int(value[0]) if value is not None else 0
    new, changed, row = apply_deltas(name, version, totals, refs, deltas, now_ms)
    for instance, n in changed.items():
        if n:
            state.map_put(INSTANCES, (gauge, instance), (n,))
        elif refs.get(instance):
            state.map_remove(INSTANCES, (gauge, instance))
    if new.connections:
        state.map_put(TOTALS, (gauge,), (new.connections, new.instances, new.by_security))
    elif stored:
        state.map_remove(TOTALS, (gauge,))
    return row


def _usage(name: str, version: str, group: tuple[str | None, str | None] | None, reports: list[Delta],
           state: KeyedState, now_ms: int) -> VersionUsage:
    """Fold usage reports (closes and ``connection_usage``) into the key's usage state; the new record.

    Each pair of a connection arrives once (the gateway reports only what is new), so a pair's count is the
    connections that sent it; ``connections`` counts the closed ones. ``ids`` keeps the smallest
    ``VersionUsage.MAX_INSTANCE_IDS`` instance ids seen, sorted. ``group``: an unnamed client's (client id,
    principal), its own record (``configwatch.contract.usage_key``).
    """
    client_id, principal = group if group is not None else (None, None)
    gauge = usage_key(name, version, client_id, principal)
    stored = state.map_get(USAGE_STATE, (gauge,))
    connections, instances, overflow = (int(stored[0]), int(stored[1]), int(stored[2])) if stored else (0, 0, 0)
    counts: dict[tuple[int, int], int] = {(int(k), int(v)): int(n) for k, v, n in json.loads(stored[3])} \
        if stored else {}
    ids: list[str] = json.loads(stored[4]) if stored else []
    for d in reports:
        pairs, over = decode_usage(str(d.usage))
        connections, overflow = connections + int(d.change < 0), overflow + over
        for pair in pairs:
            counts[pair] = counts.get(pair, 0) + 1
        if d.instance is not None:
            seen = state.map_get(USAGE_INSTANCES, (gauge, d.instance))
            if seen is None:
                instances += 1
                if len(ids) < VersionUsage.MAX_INSTANCE_IDS or d.instance < ids[-1]:
                    bisect.insort(ids, d.instance)
                    del ids[VersionUsage.MAX_INSTANCE_IDS:]
            state.map_put(USAGE_INSTANCES, (gauge, d.instance), ((int(seen[0]) if seen is not None else 0) + 1,))
    rows = sorted((k, v, n) for (k, v), n in counts.items())
    state.map_put(USAGE_STATE, (gauge,), (connections, instances, overflow, json.dumps(rows, separators=(",", ":")),
                                      json.dumps(ids, separators=(",", ":"))))
    return VersionUsage(name, version, tuple(rows), connections, instances, tuple(ids), now_ms, overflow, client_id,
                        principal)

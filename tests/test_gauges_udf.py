"""The gauge transition (udfs.gauges) as a plain function, and the keyed step that stores it (udfs.gauge_store)."""

from __future__ import annotations

import random
from typing import Any

import pandas as pd
import pytest

from configwatch.contract import is_valid_software
from configwatch.secrets import SecretStr, fingerprint
from udfs.gauges import (
    INPUT_COLUMNS,
    OUTPUT_SCHEMA,
    Conn,
    Delta,
    GaugeConfig,
    GaugeState,
    Totals,
    advance,
    apply_deltas,
)
from udfs.rules.batch import redacted_marker

NOW = 1_800_000_000_000


def ev(event: str, ts: int, cid: str, name: str | None = "java", version: str | None = "3.9",
       inst: str | None = None, partition: int = 0, offset: int | None = None) -> dict[str, Any]:
    return {"event": f"connection_{event}" if event in ("opened", "closed") else event,
            "timestamp_ms": ts, "connection_id": cid, "client_instance_id": inst,
            "client_software_name": name, "client_software_version": version,
            "partition": partition, "offset": ts if offset is None else offset}


def frame(*events: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(list(events), columns=list(INPUT_COLUMNS))


def rows(gauges: pd.DataFrame) -> dict[str, tuple[int, int, bool]]:
    return {r.key: (r.connections, r.client_instances, r.removed) for r in gauges.itertuples()}


def run(*batches: list[dict[str, Any]], config: GaugeConfig | None = None
        ) -> tuple[GaugeState, list[dict[str, tuple[int, int, bool]]]]:
    state, out = GaugeState.empty(), []
    for i, batch in enumerate(batches):
        t = advance(state, frame(*batch), NOW + i * 1000, config)
        state = t.state
        out.append(rows(t.gauges))
    return state, out


def test_open_counts_under_the_open_events_identity_and_the_fleet() -> None:
    _, [out] = run([ev("opened", 1, "c1", inst="i1"), ev("opened", 2, "c2", inst="i1"),
                    ev("opened", 3, "c3", "librdkafka", "2.6.1", inst="i2")])
    assert out == {"java/3.9": (2, 1, False), "librdkafka/2.6.1": (1, 1, False)}


def test_a_secret_software_version_is_counted_and_stored_only_as_its_fingerprint() -> None:
    key = SecretStr("k")
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    state, [out] = run([ev("opened", 1, "c1", "java", token), ev("opened", 2, "c2", token, "3.9")],
                       config=GaugeConfig(fingerprint_key=key))
    marker = f"redacted-{fingerprint(token, key)}"
    assert out == {f"java/{marker}": (1, 0, False), f"{marker}/3.9": (1, 0, False)}
    assert is_valid_software(marker)
    stored = list(state.conns.values())
    assert token not in repr(state) and {c.version for c in stored} == {marker, "3.9"}


def test_a_secret_client_instance_id_is_counted_and_stored_only_as_its_marker() -> None:
    key = SecretStr("k")
    secret = "AKIAIOSFODNN7EXAMPLE"
    state, [out] = run([ev("opened", 1, "c1", inst=secret), ev("opened", 2, "c2", inst="i1")],
                       config=GaugeConfig(fingerprint_key=key))
    assert out == {"java/3.9": (2, 2, False)}
    assert secret not in repr(state) and {c.instance for c in state.conns.values()} == {
        redacted_marker(secret, key), "i1"}


def test_output_follows_the_schema_and_stamps_processing_time() -> None:
    t = advance(GaugeState.empty(), frame(ev("opened", 1, "c1", inst="i1")), NOW)
    assert list(t.gauges.columns) == OUTPUT_SCHEMA.names
    assert set(t.gauges["updated_at_ms"]) == {NOW}
    assert t.gauges.loc[t.gauges["key"] == "java/3.9", "client_software_name"].item() == "java"
    assert t.expired == 0


def test_repeated_opens_change_nothing_and_keep_the_first_identity() -> None:
    _, out = run([ev("opened", 1, "c1", inst="i1")],
                 [ev("opened", 1, "c1", inst="i1"), ev("opened", 5, "c1", "java", "4.0", inst="i9")])
    assert out[1] == {}


def test_close_of_an_unknown_connection_changes_nothing() -> None:
    state, out = run([ev("opened", 1, "c1")], [ev("closed", 2, "nope")])
    assert out[1] == {}
    assert len(state.conns) == 1


def test_missing_or_empty_identity_counts_as_unknown() -> None:
    _, [out] = run([ev("opened", 1, "c1", None, None), ev("opened", 2, "c2", "", ""),
                    ev("opened", 3, "c3", "java", None)])
    assert out["unknown/unknown"] == (2, 0, False)
    assert out["java/unknown"] == (1, 0, False)


def test_close_to_zero_removes_the_key_and_the_fleet() -> None:
    state, out = run([ev("opened", 1, "c1", inst="i1"), ev("opened", 2, "c2", "go", "1", inst="i2")],
                     [ev("closed", 3, "c1")], [ev("closed", 4, "c2")])
    assert out[1] == {"java/3.9": (0, 0, True)}
    assert out[2] == {"go/1": (0, 0, True)}
    assert len(state.conns) == 0


def test_client_instances_are_distinct_non_null_ids_per_version_and_fleet() -> None:
    _, out = run([ev("opened", 1, "c1", inst="i1"), ev("opened", 2, "c2", inst="i1"),
                  ev("opened", 3, "c3", inst=None), ev("opened", 4, "c4", "java", "4.0", inst="i1")],
                 [ev("closed", 5, "c1")])
    assert out[0] == {"java/3.9": (3, 1, False), "java/4.0": (1, 1, False)}
    # i1 still has c2 open: connections drop, instances stay.
    assert out[1] == {"java/3.9": (2, 1, False)}


def test_events_apply_in_event_order_within_a_batch() -> None:
    # Listed close-first, but the open is older: net effect is a closed connection, no gauge.
    _, [out] = run([ev("closed", 7, "c1"), ev("opened", 3, "c1")])
    assert out == {}
    # Same millisecond: partition offset decides; open (offset 1) then close (offset 2).
    _, [out] = run([ev("closed", 7, "c2", offset=2), ev("opened", 7, "c2", offset=1)])
    assert out == {}
    # Open after close in event order: counts.
    _, [out] = run([ev("opened", 9, "c3"), ev("closed", 4, "c3")])
    assert out["java/3.9"] == (1, 0, False)


def test_chunked_input_is_sorted_across_chunks() -> None:
    chunks = [frame(ev("closed", 8, "c1")), frame(ev("opened", 2, "c1"), ev("opened", 3, "c2"))]
    t = advance(GaugeState.empty(), chunks, NOW)
    assert rows(t.gauges) == {"java/3.9": (1, 0, False)}


def test_redelivered_open_after_close_is_ignored_but_a_newer_open_reopens() -> None:
    _, out = run([ev("opened", 10, "c1")], [ev("closed", 20, "c1")],
                 [ev("opened", 10, "c1")], [ev("opened", 30, "c1")])
    assert out[1]["java/3.9"] == (0, 0, True)
    assert out[2] == {}
    assert out[3]["java/3.9"] == (1, 0, False)


def test_an_open_older_than_an_unknown_close_stays_out() -> None:
    _, out = run([ev("closed", 20, "c1")], [ev("opened", 10, "c1")])
    assert out == [{}, {}]


def test_a_close_older_than_the_open_is_stale() -> None:
    state, out = run([ev("opened", 10, "c1")], [ev("closed", 5, "c1")])
    assert out[1] == {}
    assert len(state.conns) == 1


def test_close_markers_expire_after_the_retention_in_event_time() -> None:
    config = GaugeConfig(closed_retention_ms=100)
    state, _ = run([ev("closed", 1000, "c1"), ev("closed", 1050, "c2")], [ev("opened", 1120, "c3")],
                   config=config)
    assert sorted(state.markers) == ["c2"]
    assert state.clock_ms == 1120


def test_lease_drops_silent_connections_logs_and_counts(caplog: pytest.LogCaptureFixture) -> None:
    config = GaugeConfig(ttl_ms=500)
    s0 = advance(GaugeState.empty(), frame(ev("opened", 1, "c1", inst="i1"), ev("opened", 2, "c2")), NOW,
                 config).state
    assert s0.next_expiry_ms(config) == NOW + 500
    # c2 shows it is alive at NOW+300 (any event of the connection refreshes the lease).
    s1 = advance(s0, frame(ev("config_push", 3, "c2")), NOW + 300, config).state
    assert s1.next_expiry_ms(config) == NOW + 500
    t = advance(s1, frame(), NOW + 499, config)
    assert t.expired == 0 and t.gauges.empty
    with caplog.at_level("WARNING", logger="udfs.gauges"):
        t = advance(t.state, frame(), NOW + 500, config)
    assert t.expired == 1 and t.state.expired_total == 1
    assert "dropped 1 connection" in caplog.text
    got = {r.key: (r.connections, r.client_instances, r.removed, r.expired) for r in t.gauges.itertuples()}
    assert got == {"java/3.9": (1, 0, False, 1)}
    assert t.state.next_expiry_ms(config) == NOW + 800
    t = advance(t.state, frame(), NOW + 800, config)
    got = {r.key: (r.connections, r.removed, r.expired) for r in t.gauges.itertuples()}
    assert got == {"java/3.9": (0, True, 1)}
    assert t.state.expired_total == 2 and t.state.next_expiry_ms(config) is None
    # A redelivered open of a dropped connection stays out; a new open counts again.
    t = advance(t.state, frame(ev("opened", 1, "c1")), NOW + 900, config)
    assert t.gauges.empty
    t = advance(t.state, frame(ev("opened", 50, "c1")), NOW + 901, config)
    assert rows(t.gauges)["java/3.9"] == (1, 0, False)


def test_without_a_lease_nothing_expires() -> None:
    s = advance(GaugeState.empty(), frame(ev("opened", 1, "c1")), NOW).state
    t = advance(s, frame(), NOW + 10**9)
    assert t.gauges.empty and len(t.state.conns) == 1
    assert t.state.next_expiry_ms(GaugeConfig()) is None


def test_totals_fold_deltas_and_count_instances_by_reference() -> None:
    tls, plain = "SASL_SSL/SCRAM-SHA-512", "PLAINTEXT"
    d = [Delta("java", "3.9", "i1", +1, security=tls), Delta("java", "3.9", "i1", +1, security=tls),
         Delta("java", "3.9", None, +1, security=plain)]
    totals, refs, row = apply_deltas("java", "3.9", Totals(), {}, d, NOW)
    assert (totals, refs) == (Totals(3, 1, '{"PLAINTEXT":1,"SASL_SSL/SCRAM-SHA-512":2}'), {"i1": 2})
    assert row is not None and (row["connections"], row["client_instances"], row["removed"]) == (3, 1, False)
    assert row["connections_by_security"] == {plain: 1, tls: 2}
    totals, refs, row = apply_deltas("java", "3.9", totals, refs, [Delta("java", "3.9", "i1", -1, security=tls)], NOW)
    assert (totals, refs, row is not None) == (Totals(2, 1, '{"PLAINTEXT":1,"SASL_SSL/SCRAM-SHA-512":1}'),
                                               {"i1": 1}, True)
    totals, _, row = apply_deltas("java", "3.9", totals, refs, [Delta("java", "3.9", "i1", -1, True, security=tls),
                                                                Delta("java", "3.9", None, -1, security=plain)], NOW)
    assert totals == Totals(0, 0) and row is not None and row["removed"] and row["expired"] == 1
    assert row["connections_by_security"] == {}  # a posture with no connection left is dropped
    assert apply_deltas("java", "3.9", Totals(1, 0, '{"unknown":1}'), {},
                        [Delta("java", "3.9", None, +1), Delta("java", "3.9", None, -1)], NOW)[2] is None


def test_connections_count_under_the_posture_of_their_open() -> None:
    opened = [{**ev("opened", 1, "c1"), "security": "SASL_SSL/SCRAM-SHA-512"},
              {**ev("opened", 2, "c2"), "security": "PLAINTEXT"}, ev("opened", 3, "c3")]
    t = advance(GaugeState.empty(), frame(*opened), NOW)
    assert t.gauges.iloc[-1]["connections_by_security"] == {"PLAINTEXT": 1, "SASL_SSL/SCRAM-SHA-512": 1,
                                                             "unknown": 1}
    closed = {**ev("closed", 4, "c1"), "security": "PLAINTEXT"}  # a close counts off its open's posture
    t = advance(t.state, frame(closed), NOW)
    assert t.gauges.iloc[-1]["connections_by_security"] == {"PLAINTEXT": 1, "unknown": 1}


def test_rows_without_connection_id_never_touch_state() -> None:
    t = advance(GaugeState.empty(), frame(ev("opened", 1, None)), NOW)  # type: ignore[arg-type]
    assert t.gauges.empty and len(t.state.conns) == 0


def _order(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(events, key=lambda e: (e["timestamp_ms"], e["partition"], e["offset"]))


def _reference(ordered: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """The contract's semantics applied one event at a time, in the given order, with plain dicts."""
    open_: dict[str, tuple[str, str | None, int]] = {}
    closed: dict[str, int] = {}
    for e in ordered:
        cid, ts = e["connection_id"], e["timestamp_ms"]
        if cid in open_:
            if ts >= open_[cid][2] and e["event"] == "connection_closed":
                del open_[cid]
                closed[cid] = ts
        elif e["event"] == "connection_closed":
            closed[cid] = max(closed.get(cid, ts), ts)
        elif e["event"] == "connection_opened" and ts > closed.get(cid, -1):
            key = f"{e['client_software_name'] or 'unknown'}/{e['client_software_version'] or 'unknown'}"
            open_[cid] = (key, e["client_instance_id"], ts)
    out: dict[str, tuple[int, int]] = {}
    for key in {k for k, _, _ in open_.values()}:
        members = [i for k, i, _ in open_.values() if k == key]
        out[key] = (len(members), len({i for i in members if i}))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_any_batching_of_a_random_stream_ends_at_the_reference_gauges(seed: int) -> None:
    rng = random.Random(seed)
    versions = [("java", "3.9"), ("java", "4.0"), (None, None), ("go", "1.2")]
    events = []
    for offset in range(1, 401):
        cid = f"c{rng.randrange(60)}"
        name, version = rng.choice(versions)
        kind = rng.choice(["opened", "opened", "closed", "config_push"])
        events.append(ev(kind, rng.randrange(1000), cid, name, version, inst=rng.choice([None, "i1", "i2", "i3"]),
                         partition=0, offset=offset))
    # Arrival order is offset order; the job cuts it into micro-batches at random points.
    cuts = sorted(rng.sample(range(1, len(events)), 6))
    batches = [events[a:b] for a, b in zip([0, *cuts], [*cuts, len(events)], strict=True)]
    state, outs = GaugeState.empty(), {}
    for i, batch in enumerate(batches):
        t = advance(state, frame(*batch), NOW + i)
        state = t.state
        for r in t.gauges.itertuples():
            outs[r.key] = None if r.removed else (r.connections, r.client_instances)
    final = {k: v for k, v in outs.items() if v is not None}
    # One batch holding everything is exactly the reference in pure event order.
    single = advance(GaugeState.empty(), frame(*events), NOW)
    assert {r.key: (r.connections, r.client_instances) for r in single.gauges.itertuples()} \
        == _reference(_order(events))
    # Across batches, each batch applies in event order after the ones before it.
    assert final == _reference([e for b in batches for e in _order(b)])
    assert final  # the random stream leaves something open, so the comparison is not vacuous


class _Counting:
    """A dict state that records every map call (each is a round trip in Spark)."""

    def __new__(cls) -> Any:
        from udfs.memory import _DictState

        class Counting(_DictState):
            def __init__(self) -> None:
                super().__init__()
                self.calls: list[tuple[str, str, tuple[str, ...]]] = []
                self.appends = 0

            def map_get(self, name: str, key: tuple[str, ...]) -> tuple[Any, ...] | None:
                self.calls.append(("get", name, key))
                return super().map_get(name, key)

            def map_put(self, name: str, key: tuple[str, ...], value: tuple[Any, ...]) -> None:
                self.calls.append(("put", name, key))
                super().map_put(name, key, value)

            def map_remove(self, name: str, key: tuple[str, ...]) -> None:
                self.calls.append(("remove", name, key))
                super().map_remove(name, key)

            def append_rows(self, name: str, rows: list[tuple[Any, ...]]) -> None:
                self.appends += 1
                super().append_rows(name, rows)

        state = Counting()
        state.key = "conn"
        return state


def test_the_connection_step_reads_only_what_may_be_stored_and_keeps_short_connections_in_one_row() -> None:
    from udfs.memory import _DictState
    from udfs.steps import keyed_step

    state, key, config = _Counting(), SecretStr("k" * 32), GaugeConfig()

    def step(*events: dict[str, Any]) -> list[tuple[str, str, tuple[str, ...]]]:
        state.calls.clear()
        list(keyed_step("conn", frame(*events), state, key, config, NOW))
        return sorted(c for c in state.calls if c[1] == "entries")

    def stored(cid: str) -> tuple[Any, ...] | None:
        return _DictState.map_get(state, "entries", (cid,))

    # New ids: no read. c1 comes and goes within the batch: its marker goes to the batch's row of ``recent``.
    assert step(ev("opened", 1, "c1"), ev("closed", 2, "c1"), ev("opened", 3, "c2")) == [
        ("put", "entries", ("c2",))]
    assert stored("c1") is None and state.appends == 1 and stored("c2")[:2] == ("java", "3.9")  # type: ignore[index]
    # c2 closes: one read, its entry overwritten by its marker. A redelivered open of c1 is found in ``recent``
    # (read whole, no map call) and stays out.
    assert step(ev("closed", 4, "c2"), ev("opened", 1, "c1")) == [("get", "entries", ("c2",)),
                                                                   ("put", "entries", ("c2",))]
    assert stored("c2") == (None,) * len(Conn._fields) + (4,) and stored("c1") is None
    # c1 reopens after its close (a newer open): it is stored now.
    assert step(ev("opened", 5, "c1")) == [("put", "entries", ("c1",))]
    assert stored("c1")[:2] == ("java", "3.9")  # type: ignore[index]


def test_a_connection_opened_and_closed_within_a_batch_gives_no_deltas_unless_it_carries_usage() -> None:
    from udfs.gauges import sorted_events, step_connections

    def deltas(*events: dict[str, Any]) -> list[tuple[str, int]]:
        step = step_connections(sorted_events(frame(*events)), {}, {}, 0, NOW, GaugeConfig())
        return [(d.instance or "", d.change) for d in step.deltas]

    # c1 comes and goes (its +1 and -1 cancel); c2 stays; c3 reopens after its close and stays.
    assert deltas(ev("opened", 1, "c1", inst="i1"), ev("closed", 2, "c1"), ev("opened", 3, "c2", inst="i2"),
                  ev("opened", 4, "c3"), ev("closed", 5, "c3"), ev("opened", 6, "c3", inst="i3")) == [
        ("i2", +1), ("i3", +1)]
    used = frame(ev("opened", 1, "c1", inst="i1"), ev("closed", 2, "c1")).assign(
        usage=[None, "usage-of-c1"])
    step = step_connections(sorted_events(used), {}, {}, 0, NOW, GaugeConfig())
    assert [(d.change, d.usage) for d in step.deltas] == [(+1, None), (-1, "usage-of-c1")]
    assert step.markers == {"c1": 2} and step.conns == {}


@pytest.mark.parametrize("seed", [7, 8])
def test_the_keyed_step_keeps_what_the_in_memory_transition_keeps(seed: int) -> None:
    from udfs.gauge_store import Clock, recent_markers
    from udfs.memory import _DictState
    from udfs.steps import expire_step, keyed_step

    rng = random.Random(seed)
    config = GaugeConfig(ttl_ms=40, closed_retention_ms=150)
    events = [ev(rng.choice(["opened", "opened", "closed", "config_push"]), offset // 3 + rng.randrange(40),
                 f"c{rng.randrange(3000)}", inst=rng.choice([None, "i1", "i2"]), offset=offset)
              for offset in range(1, 6001)]  # enough closes for the amortised marker sweep to run
    state, memory, key = _DictState(), GaugeState.empty(), SecretStr("k" * 32)
    state.key = "conn"
    for i in range(0, len(events), 150):
        now = NOW + i
        list(keyed_step("conn", frame(*events[i:i + 150]), state, key, config, now))
        list(expire_step(state, config, now))
        memory = advance(memory, frame(*events[i:i + 150]), now, config).state
    horizon = memory.clock_ms - config.closed_retention_ms
    entries = state.maps[("conn", "entries")]
    width = len(Conn._fields)
    conns = {c[0]: v[:width] for c, v in entries.items() if v[0] is not None}
    marks = {c[0]: v[width] for c, v in entries.items() if v[width] is not None}
    for cid, ms in recent_markers(state.rows("recent")).items():  # markers of connections never stored
        marks[cid] = max(ms, marks.get(cid, ms))
    assert conns == {c: tuple(v) for c, v in memory.conns.items()} and conns
    assert {c: m for c, m in marks.items() if m >= horizon} == {c: m for c, m in memory.markers.items()
                                                                if m >= horizon}
    clock = Clock.read(state)
    assert clock.entries_live > 0  # the amortised sweep ran (it sets what it left)
    # Without the sweeps nearly every connection would keep a marker (a close, or a lease drop).
    assert len(marks) < len({e["connection_id"] for e in events}) // 2
    assert memory.expired_total > 0 and clock.expired_total == memory.expired_total

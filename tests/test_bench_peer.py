"""Figure 3's per-batch work (``bench.fig_peer.process_batch``) on in-memory records, without Kafka or Spark.

The GX suite is off here because importing it takes seconds. The peer's outputs
are checked against what the project computes in other ways: alert ids from
``udfs.rules.detect.detect_with_state``, gauges counted by hand
(``bench.gauge_workload.expected_gauges``), and the quarantine keyed by the
malformed records' coordinates.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from bench.fig_peer import ARROW_BATCH_ROWS, BatchOutput, PeerConfig, PeerState, kafka_batches, process_batch
from bench.gauge_workload import expected_gauges
from bench.workload import workload_records
from configwatch.records import Event
from configwatch.secrets import SecretStr
from sinks.base import SinkRecord
from udfs.decode import decode_values
from udfs.gauges import GaugeConfig
from udfs.rules.stateful import detect_with_state

KEY = SecretStr("peer-test-key")
TOPIC = "workload"
NOW_MS = 1_700_000_000_000
BAD = (b"{not json", b'["a", "list"]', b'{"schema_version": 1, "event": "config_push"}')


class Rec(NamedTuple):
    """The fields of a kafka-python ConsumerRecord that the peer reads."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    value: bytes


def _records() -> list[Rec]:
    """About 300 workload records over 3 partitions, every other close dropped (so connections stay open),
    and three malformed records."""
    values: list[bytes] = []
    closes = 0
    for r in workload_records(330, KEY, start_ms=NOW_MS - 3_600_000):
        if r.event == "invalid":
            continue  # only the three below are malformed
        if r.event == "connection_closed":
            closes += 1
            if closes % 2:
                continue
        values.append(r.value)
    for i, bad in enumerate(BAD):
        values.insert(50 + 100 * i, bad)
    offsets = [0, 0, 0]
    out = []
    for i, value in enumerate(values):
        partition = i % 3
        out.append(Rec(TOPIC, partition, offsets[partition], NOW_MS - 1000 + i, value))
        offsets[partition] += 1
    return out


@pytest.fixture(scope="module")
def records() -> list[Rec]:
    return _records()


@pytest.fixture(scope="module")
def config() -> PeerConfig:
    return PeerConfig(KEY, expectations=False, gauges=GaugeConfig(fingerprint_key=KEY))


@pytest.fixture(scope="module")
def whole(records: list[Rec], config: PeerConfig) -> tuple[BatchOutput, PeerState]:
    """Every record in one micro-batch, from an empty state."""
    state = PeerState(config)
    return process_batch(kafka_batches(records), state, config, now_ms=NOW_MS), state


def _fold(gauges: list[SinkRecord]) -> dict[str, tuple[int, int]]:
    """The gauges a compacted topic would hold: the last record per key, a tombstone deletes."""
    current: dict[str, tuple[int, int]] = {}
    for g in gauges:
        assert g.key is not None
        if g.tombstone:
            current.pop(g.key, None)
        else:
            current[g.key] = (g.value["connections"], g.value["client_instances"])
    return current


def test_batches_are_the_kafka_source_columns_per_partition() -> None:
    recs = [Rec(TOPIC, p, o, NOW_MS, b"{}") for o in range(ARROW_BATCH_ROWS + 5) for p in (1, 0)]
    batches = kafka_batches(recs)
    assert [(b.column("partition")[0].as_py(), b.num_rows) for b in batches] == [
        (0, ARROW_BATCH_ROWS), (0, 5), (1, ARROW_BATCH_ROWS), (1, 5)]
    assert batches[0].schema.names == ["value", "topic", "partition", "offset", "timestamp"]
    assert batches[0].column("timestamp")[0].as_py().timestamp() * 1000 == NOW_MS
    assert batches[1].column("offset").to_pylist() == list(range(ARROW_BATCH_ROWS, ARROW_BATCH_ROWS + 5))


def test_one_batch_gives_the_quarantine_the_findings_and_the_gauges(
        records: list[Rec], whole: tuple[BatchOutput, PeerState]) -> None:
    out, state = whole

    bad = {f"{r.topic}/{r.partition}/{r.offset}" for r in records if r.value in BAD}
    assert {q.key for q in out.quarantine} == bad
    for q in out.quarantine:
        assert q.value["schema_version"] == 1 and q.value["reason"] and q.value["quarantined_at_ms"] == NOW_MS
        assert set(q.value) == {"schema_version", "reason", "detail", "source", "size_bytes", "quarantined_at_ms"}
        assert f"{q.value['source']['topic']}/{q.value['source']['partition']}/{q.value['source']['offset']}" == q.key

    good = [r for r in records if r.value not in BAD]
    decoded, _ = decode_values(pa.array([r.value for r in good], pa.binary()))
    pushes = decoded.filter(pc.equal(decoded["event"], "config_push"))
    expected, _ = detect_with_state(pushes, KEY, NOW_MS)
    assert expected.num_rows > 0
    assert {a.key for a in out.alerts} == set(expected.column("alert_id").to_pylist())
    for a in out.alerts:
        assert a.key == a.value["alert_id"] and isinstance(a.value["evidence"], dict)
    # The stateful rules ran (their state exists); this fleet's tunings are common, so no outlier fires.
    assert any(k.startswith("fleet|") for k, name in _detection(state))

    events = [Event.from_json(r.value) for r in good]
    counted = expected_gauges(events)
    assert counted and _fold(out.gauges) == counted
    json.dumps([g.value for g in out.gauges])  # plain JSON values


def _detection(state: PeerState) -> list[tuple[str, Any]]:
    """The detection state variables of the peer's keyed step: (state key, JSON)."""
    lists = state.pipeline._state.lists
    return [(k, v) for (k, name), v in lists.items() if name == "detect"]


def test_state_carries_over_between_batches(records: list[Rec], config: PeerConfig,
                                            whole: tuple[BatchOutput, PeerState]) -> None:
    all_at_once = whole[0]
    state = PeerState(config)
    half = len(records) // 2
    first = process_batch(kafka_batches(records[:half]), state, config, now_ms=NOW_MS)
    kept: dict[Any, Any] = dict(_detection(state))
    second = process_batch(kafka_batches(records[half:]), state, config, now_ms=NOW_MS)
    assert kept and dict(_detection(state)) != kept  # summaries grew with the second batch
    assert _fold(first.gauges + second.gauges) == _fold(all_at_once.gauges)
    assert {q.key for q in first.quarantine + second.quarantine} == {q.key for q in all_at_once.quarantine}
    stateless = {a.key for a in all_at_once.alerts if a.value["rule"] not in
                 ("fleet-outlier", "group-protocol-drift", "group-assignment-drift")}
    assert stateless and stateless <= {a.key for a in first.alerts + second.alerts}

"""The stateful rules' pure parts: fleet outliers (mergeable summaries) and consumer-group drift."""

from __future__ import annotations

import numpy as np
import pandas as pd

from configwatch.secrets import fingerprint
from tests.rules_helpers import JAVA, KEY, RDKAFKA, by_rule, push, rules_of, stateful_findings
from udfs.rules.detect import DetectionState
from udfs.rules.fleet import MIN_PEERS, NumericSummary, score_group
from udfs.rules.groups import GroupState, canonical_strategy


def producers(n: int, linger: str = "5") -> list[dict[str, object]]:
    return [push({"acks": "all", "linger.ms": linger, "batch.size": "16384"}) for _ in range(n)]


# --- fleet outliers ---------------------------------------------------------------------------------

def test_summary_is_mergeable_and_serializable() -> None:
    rng = np.random.default_rng(5)
    a, b, c = (rng.lognormal(3, 1, 200) for _ in range(3))
    left = NumericSummary().add(a).merge(NumericSummary().add(b)).merge(NumericSummary().add(c))
    right = NumericSummary().add(a).merge(NumericSummary().add(b).merge(NumericSummary().add(c)))
    assert left == right == NumericSummary().add(np.concatenate([a, b, c]))
    assert NumericSummary.from_json(left.to_json()) == left
    assert left.count == 600
    assert abs(left.median_log() - np.median(np.log10(1 + np.concatenate([a, b, c])))) < 0.02


def test_summary_stays_small() -> None:
    summary = NumericSummary().add(np.random.default_rng(1).uniform(1, 1e12, 20_000))
    assert len(summary.buckets) <= 512 and summary.count == 20_000
    assert len(summary.to_json()) < 10_000


def test_outlier_needs_distance_and_enough_peers() -> None:
    obs = pd.DataFrame({"value": [5.0] * 30 + [7.0] * 5 + [1000.0]})
    raw, summary = score_group("apache-kafka-java/producer", "linger.ms", obs, NumericSummary())
    assert summary.count == 36
    assert raw["row"].tolist() == [35]  # 7 is close to 5; 1000 is two orders of magnitude away
    assert raw["evidence"][0]["peers"] == 36 and raw["evidence"][0]["peer_median"] == 5
    few = pd.DataFrame({"value": [5.0] * (MIN_PEERS - 2) + [1000.0]})
    raw, _ = score_group("apache-kafka-java/producer", "linger.ms", few, NumericSummary())
    assert raw.empty


def test_spread_fleet_tolerates_a_wide_but_ordinary_value() -> None:
    rng = np.random.default_rng(3)
    obs = pd.DataFrame({"value": np.concatenate([rng.lognormal(np.log(1000), 1.5, 200), [30_000.0]])})
    raw, _ = score_group("librdkafka/consumer", "fetch.wait.max.ms", obs, NumericSummary())
    assert 200 not in raw["row"].tolist()


def test_fleet_outlier_end_to_end_with_state_across_batches() -> None:
    rows, state = stateful_findings(*producers(12))
    assert "fleet-outlier" not in rules_of(rows)
    rows, state = stateful_findings(push({"acks": "all", "linger.ms": "5000", "batch.size": "16384"}), state=state)
    [hit] = by_rule(rows, "fleet-outlier")
    assert hit["keys"] == ["linger.ms"] and hit["evidence"]["peer_group"] == "apache-kafka-java/producer"
    assert hit["evidence"]["peers"] == 13 and hit["evidence"]["value"] == 5000
    assert state.fleet[("apache-kafka-java/producer", "linger.ms")].count == 13


def test_fleet_peers_are_per_family_and_role() -> None:
    rdk = [push({"linger.ms": "5000"}, RDKAFKA) for _ in range(12)]
    rows, _ = stateful_findings(*producers(12), *rdk)
    assert "fleet-outlier" not in rules_of(rows)  # librdkafka's peers all use 5000


def test_fleet_ignores_sentinels_and_sensitive_keys() -> None:
    pushes = [*producers(12), push({"acks": "all", "metadata.max.age.ms": "-1",
                                    "sasl.login.refresh.buffer.seconds": "1"})]
    rows, state = stateful_findings(*pushes)
    assert "fleet-outlier" not in rules_of(rows)
    assert ("apache-kafka-java/producer", "sasl.login.refresh.buffer.seconds") not in state.fleet


# --- consumer-group drift ---------------------------------------------------------------------------

RANGE = "org.apache.kafka.clients.consumer.RangeAssignor"
COOP = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"


def consumer(group: str, **configs: str) -> dict[str, object]:
    return push({"group.id": group, "auto.offset.reset": "earliest", **configs})


def test_canonical_strategy_names_builtins_and_fingerprints_custom_classes() -> None:
    assert canonical_strategy(f"{RANGE}, {COOP}", KEY) == "range,cooperative-sticky"
    assert canonical_strategy("com.acme.SecretAssignor", KEY) == f"custom:{fingerprint('com.acme.SecretAssignor', KEY)}"


def test_group_state_merges_latest_per_member_and_is_bounded() -> None:
    a = GroupState({"m1": ("classic", "range", 10), "m2": ("classic", "range", 10)})
    b = GroupState({"m1": ("consumer", None, 20)})
    assert a.merge(b).members["m1"] == ("consumer", None, 20)
    assert b.merge(a).members["m1"] == ("consumer", None, 20)
    assert GroupState.from_json(a.merge(b).to_json()) == a.merge(b)
    assert set(a.observe("m3", "classic", "range", 10**12).bounded(10**12).members) == {"m3"}


def test_assignment_drift_across_batches() -> None:
    rows, state = stateful_findings(consumer("orders"), consumer("orders"))
    assert "group-assignment-drift" not in rules_of(rows)  # both use the Java default
    rows, state = stateful_findings(consumer("orders", **{"partition.assignment.strategy": RANGE}), state=state)
    [hit] = by_rule(rows, "group-assignment-drift")
    assert hit["evidence"]["strategies"] == {"range": 1, "range,cooperative-sticky": 2}
    assert hit["evidence"]["common"] == ["range"] and hit["evidence"]["group"] == "orders"
    assert len(state.groups) == 1 and fingerprint("orders", KEY) in state.groups


def test_assignment_drift_with_no_common_strategy_and_mixed_clients() -> None:
    rdk = push({"group.id": "pay", "partition.assignment.strategy": "roundrobin"}, RDKAFKA)
    rows, _ = stateful_findings(consumer("pay", **{"partition.assignment.strategy": COOP}), rdk)
    hits = by_rule(rows, "group-assignment-drift")
    assert len(hits) == 2 and all(h["evidence"]["common"] == [] for h in hits)
    assert "joins fail" in hits[0]["message"]


def test_other_groups_and_consumer_protocol_members_do_not_drift() -> None:
    rows, _ = stateful_findings(consumer("a"), consumer("b", **{"partition.assignment.strategy": RANGE}))
    assert "group-assignment-drift" not in rules_of(rows)
    rows, _ = stateful_findings(consumer("c", **{"group.protocol": "consumer"}),
                                consumer("c", **{"group.protocol": "consumer", "partition.assignment.strategy": RANGE}))
    assert "group-assignment-drift" not in rules_of(rows)


def test_protocol_drift() -> None:
    rows, _ = stateful_findings(consumer("m"), consumer("m", **{"group.protocol": "consumer"}))
    hits = by_rule(rows, "group-protocol-drift")
    assert len(hits) == 2 and hits[0]["evidence"]["protocols"] == {"classic": 1, "consumer": 1}
    rows, _ = stateful_findings(consumer("n"), consumer("n", **{"group.protocol": "classic"}))
    assert "group-protocol-drift" not in rules_of(rows)


def test_the_same_member_pushing_again_is_one_member() -> None:
    first = consumer("solo")
    again = dict(first, timestamp_ms=int(str(first["timestamp_ms"])) + 10,
                 configs=consumer("solo", **{"partition.assignment.strategy": RANGE})["configs"])
    rows, state = stateful_findings(first)
    rows, state = stateful_findings(again, state=state)
    assert "group-assignment-drift" not in rules_of(rows)  # it changed its mind; nobody disagrees
    assert len(next(iter(state.groups.values())).members) == 1


def test_empty_state_object() -> None:
    assert DetectionState().fleet == {} and DetectionState().groups == {}
    assert JAVA[0] == "apache-kafka-java"


# --- the Spark-facing pair: prepare (per batch) and step (per state key) ----------------------------

def test_prepare_and_step_give_what_detect_with_state_gives() -> None:
    import json

    from tests.rules_helpers import NOW_MS, table
    from udfs.rules.stateful import prepare, step

    pushes = [*producers(12), push({"acks": "all", "linger.ms": "9000", "batch.size": "16384"}),
              consumer("k"), consumer("k", **{"group.protocol": "consumer"}), push({"acks": "0"})]
    rows = prepare(table(*pushes), KEY, NOW_MS).to_pandas()
    found, states = [], {}
    for state_key, part in rows.groupby("state_key"):
        out, state = step(str(state_key), part, None, KEY, NOW_MS)
        found += out.to_pylist()
        states[state_key] = state
    expected, _ = stateful_findings(*pushes)
    assert sorted(r["alert_id"] for r in found) == sorted(r["alert_id"] for r in expected)
    assert all(v is None for k, v in states.items() if str(k).startswith("pass|"))
    assert all(json.loads(v) for k, v in states.items() if not str(k).startswith("pass|"))

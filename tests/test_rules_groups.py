"""Consumer-group drift (``udfs.rules.groups``): assignors across a group's members, bounded state."""

from __future__ import annotations

from configwatch.secrets import fingerprint
from tests.rules_helpers import JAVA, KEY, RDKAFKA, by_rule, consumer, push, rules_of, stateful_findings
from udfs.rules.groups import GroupState, canonical_strategy
from udfs.rules.stateful import DetectionState

RANGE = "org.apache.kafka.clients.consumer.RangeAssignor"
COOP = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"


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


def test_rolling_move_to_cooperative_sticky_is_one_info_finding_for_the_group() -> None:
    # KIP-429 step 1: members on range, then members on range,cooperative-sticky (the Java default).
    rows, state = stateful_findings(*[consumer("orders", **{"partition.assignment.strategy": RANGE})
                                      for _ in range(3)])
    assert not [r for r in rows if r["rule"].startswith("group-")]
    rows, state = stateful_findings(consumer("orders"), consumer("orders"), state=state)
    assert "group-assignment-drift" not in rules_of(rows)
    [hit] = by_rule(rows, "group-assignment-transition")
    assert hit["severity"] == "info" and hit["evidence"]["common"] == ["range"]
    assert hit["evidence"]["strategies"] == {"range": 3, "range,cooperative-sticky": 2}
    assert hit["evidence"]["selected"] == "range" and hit["evidence"]["group"] == "orders"
    members = hit["evidence"]["members"]
    assert sorted(len(v) for v in members.values()) == [2, 3]
    assert all(len(fp) == 16 and "client" not in fp for v in members.values() for fp in v)
    assert hit["client_id"] is None and hit["client_instance_id"] is None
    assert len(state.groups) == 1 and fingerprint("orders", KEY) in state.groups
    # A further member on a list already seen: nothing new. Step 2 (cooperative-sticky first): the same id.
    rows, state = stateful_findings(consumer("orders"), state=state)
    assert not [r for r in rows if r["rule"].startswith("group-")]
    rows, state = stateful_findings(consumer("orders", **{"partition.assignment.strategy": f"{COOP},{RANGE}"}),
                                    state=state)
    [again] = by_rule(rows, "group-assignment-transition")
    assert again["alert_id"] == hit["alert_id"] and again["evidence"]["common"] == ["range"]


def test_no_common_assignor_is_one_drift_alert_per_group() -> None:
    rdk = push({"group.id": "pay", "partition.assignment.strategy": "roundrobin"}, RDKAFKA)
    rows, state = stateful_findings(consumer("pay", **{"partition.assignment.strategy": COOP}),
                                    consumer("pay", **{"partition.assignment.strategy": COOP}), rdk)
    [hit] = by_rule(rows, "group-assignment-drift")
    assert hit["evidence"]["common"] == [] and "INCONSISTENT_GROUP_PROTOCOL" in hit["message"]
    assert hit["evidence"]["strategies"] == {"cooperative-sticky": 2, "roundrobin": 1}
    assert "group-assignment-transition" not in rules_of(rows)
    # Another member joining the drifting group on a known list: no new alert; on a new list: the same id.
    rows, state = stateful_findings(consumer("pay", **{"partition.assignment.strategy": COOP}), state=state)
    assert "group-assignment-drift" not in rules_of(rows)
    rows, _ = stateful_findings(consumer("pay", **{"partition.assignment.strategy": "sticky"}), state=state)
    [again] = by_rule(rows, "group-assignment-drift")
    assert again["alert_id"] == hit["alert_id"] and again["evidence"]["strategies"]["sticky"] == 1


def test_group_alert_id_depends_on_rule_and_group_only() -> None:
    from udfs.rules.findings import alert_id
    from udfs.rules.groups import group_subject

    rows, _ = stateful_findings(consumer("x", **{"partition.assignment.strategy": COOP}),
                                consumer("x", **{"partition.assignment.strategy": RANGE}))
    [hit] = by_rule(rows, "group-assignment-drift")
    expected = alert_id("anomaly", "group-assignment-drift", group_subject(fingerprint("x", KEY)),
                        ("group.id", "partition.assignment.strategy"), KEY)
    assert hit["alert_id"] == expected


def test_evidence_lists_a_bounded_number_of_members() -> None:
    from udfs.rules.groups import EVIDENCE_MEMBERS

    many = [consumer("big") for _ in range(EVIDENCE_MEMBERS + 5)]
    rows, _ = stateful_findings(*many, consumer("big", **{"partition.assignment.strategy": RANGE}))
    [hit] = by_rule(rows, "group-assignment-transition")
    assert [len(v) for v in hit["evidence"]["members"].values()] == [1, EVIDENCE_MEMBERS]


def test_other_groups_and_consumer_protocol_members_do_not_drift() -> None:
    rows, _ = stateful_findings(consumer("a"), consumer("b", **{"partition.assignment.strategy": RANGE}))
    assert not [r for r in rows if r["rule"].startswith("group-")]
    rows, _ = stateful_findings(consumer("c", **{"group.protocol": "consumer"}),
                                consumer("c", **{"group.protocol": "consumer", "partition.assignment.strategy": RANGE}))
    assert not [r for r in rows if r["rule"].startswith("group-assignment")]


def test_classic_to_consumer_is_a_migration_and_other_mixes_drift() -> None:
    rows, _ = stateful_findings(consumer("m"), consumer("m"), consumer("m", **{"group.protocol": "consumer"}))
    assert "group-protocol-drift" not in rules_of(rows)
    [hit] = by_rule(rows, "group-protocol-migration")
    assert hit["severity"] == "info" and hit["evidence"]["protocols"] == {"classic": 2, "consumer": 1}
    rows, _ = stateful_findings(consumer("n"), consumer("n", **{"group.protocol": "classic"}))
    assert not [r for r in rows if r["rule"].startswith("group-protocol")]
    rows, _ = stateful_findings(consumer("s"), consumer("s", **{"group.protocol": "streams"}))
    [hit] = by_rule(rows, "group-protocol-drift")
    assert hit["evidence"]["protocols"] == {"classic": 1, "streams": 1}
    assert "group-protocol-migration" not in rules_of(rows)


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

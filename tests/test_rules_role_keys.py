"""key-of-other-role: a producer's consumer key (or the reverse) that the user set, for the families that ignore it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.rules_helpers import JAVA, KAFKA_PYTHON, RDKAFKA, by_rule, entry, findings, push

RULE = "key-of-other-role"
PRODUCER = {"acks": "all", "linger.ms": "5", "batch.size": "65536"}
CONSUMER = {"group.id": "orders", "auto.offset.reset": "earliest", "enable.auto.commit": "false"}

CASES: list[tuple[str, tuple[str, str], dict[str, str] | list[dict[str, Any]], tuple[str, ...]]] = [
    ("librdkafka producer with consumer keys", RDKAFKA, {**PRODUCER, "group.id": "g", "auto.offset.reset": "earliest"},
     ("auto.offset.reset", "group.id")),
    ("librdkafka consumer with a producer key under its alias", RDKAFKA, {**CONSUMER, "linger.ms": "5"},
     ("linger.ms",)),
    ("Java producer with group.id", JAVA, {**PRODUCER, "group.id": "g"}, ("group.id",)),
    ("Java consumer with acks", JAVA, {**CONSUMER, "acks": "all"}, ("acks",)),
    ("keys of both roles' sets only", RDKAFKA, {**PRODUCER, "client.id": "a", "socket.timeout.ms": "30000"}, ()),
    ("a default is not the user's", JAVA, [*(entry(k, v) for k, v in PRODUCER.items()),
                                           entry("group.id", "g", default=True)], ()),
    ("kafka-python refuses another role's keyword", KAFKA_PYTHON, {"acks": "all", "group_id": "g"}, ()),
    ("Streams carries both roles' keys", JAVA, {"application.id": "app", "acks": "all", "group.id": "g"}, ()),
]


@pytest.mark.parametrize(("case", "software", "configs", "keys"), CASES, ids=[c[0] for c in CASES])
def test_keys_of_the_other_role(case: str, software: tuple[str, str], configs: Any, keys: tuple[str, ...]) -> None:
    rows = by_rule(findings(push(configs, software)), RULE)
    assert sorted(k for r in rows for k in r["keys"]) == sorted(keys), case


def test_the_finding_names_the_role_and_the_key() -> None:
    [row] = by_rule(findings(push({**PRODUCER, "group.id": "g"}, RDKAFKA)), RULE)
    assert row["severity"] == "low" and row["kind"] == "anomaly"
    assert row["message"] == "group.id is a consumer setting: this producer ignores it."
    assert row["evidence"] == {"role": "producer"}

"""Sensitive-leak findings: the KIP's rules (from udfs.sensitivity), custom keys, redactions, secrets."""

from __future__ import annotations

from typing import Any

import pytest

from configwatch.secrets import fingerprint
from tests.rules_helpers import (
    JAVA,
    KAFKA_PYTHON,
    KEY,
    PY_RDKAFKA,
    RDKAFKA,
    by_rule,
    entry,
    findings,
    push,
    rules_of,
)
from udfs.sensitivity import RULE_CUSTOM, RULE_INFIX, RULE_PREFIX, RULE_SUFFIX, RULE_TYPE

PRODUCER = [entry("acks", "all"), entry("linger.ms", "5", "LONG")]
STREAMS_CLIENT_ID = "inventory-join-app-f7c89e69-381d-4b11-aac3-c708b5e527bd-StreamThread-1-consumer"

CASES: list[tuple[str, tuple[str, str], list[dict[str, Any]], bool]] = [
    (RULE_TYPE, JAVA, [entry("ssl.key.password", "hunter2", "PASSWORD")], True),
    (RULE_TYPE, JAVA, [entry("partitioner.class", "com.acme.Partitioner", "CLASS")], True),
    (RULE_TYPE, JAVA, [entry("ssl.key.password", None, "PASSWORD", redacted=True, fingerprint="x")], False),
    (RULE_PREFIX, JAVA, [entry("sasl.mechanism", "PLAIN")], True),
    (RULE_PREFIX, JAVA, [entry("linger.ms", "5", "LONG")], False),
    (RULE_INFIX, JAVA, [entry("producer.ssl.endpoint.identification.algorithm", "https")], True),
    (RULE_INFIX, JAVA, [entry("myssl.thing", "x")], False),
    (RULE_SUFFIX, JAVA, [entry("metric.reporters.class", "com.acme.Reporter")], True),
    (RULE_SUFFIX, JAVA, [entry("classic.thing", "x")], False),
    (RULE_CUSTOM, JAVA, [*PRODUCER, entry("app.feature.flags", "a,b")], True),
    (RULE_CUSTOM, JAVA, PRODUCER, False),
    (RULE_CUSTOM, RDKAFKA, [entry("queue.buffering.max.ms", "5"), entry("my.custom", "x")], True),
    (RULE_CUSTOM, PY_RDKAFKA, [entry("linger.ms", "5"), entry("statistics.interval.ms", "0")], False),
    (RULE_CUSTOM, KAFKA_PYTHON, [entry("app.feature.flags", "a,b")], True),  # custom for kafka-python too
    (RULE_CUSTOM, JAVA, [entry("application.id", "app"), entry("producer.linger.ms", "5"),
                         entry("main.consumer.max.poll.records", "10"), entry("topic.retention.ms", "1")], False),
    (RULE_CUSTOM, JAVA, [entry("application.id", "app"), entry("producer.lingerz", "5")], True),
    ("policy-redacted", JAVA, [entry("sasl.jaas.config", None, "PASSWORD", redacted=True, fingerprint="9f")], True),
    ("policy-redacted", JAVA, PRODUCER, False),
    ("secret-aws-access-key", JAVA, [*PRODUCER, entry("app.s3", "s3://bucket?key=AKIAIOSFODNN7EXAMPLE")], True),
    ("secret-url-credentials", JAVA, [entry("bootstrap.servers", "alice:pw1234@b1:9092,b2:9092", "LIST")], True),
    ("secret-url-credentials", JAVA, [entry("bootstrap.servers", "b1.example.com:9092,b2.example.com:9092",
                                            "LIST")], False),
    ("secret-high-entropy", JAVA, [entry("client.id", "Zx9Kq2Lm8Pw4Rt7Yb3Nc")], True),
    ("secret-high-entropy", JAVA, [entry("client.id", "123e4567-e89b-12d3-a456-426614174000")], False),
    ("secret-high-entropy", JAVA, [entry("client.id", STREAMS_CLIENT_ID)], False),
    ("secret-high-entropy", JAVA, [entry("client.id", "orders-app-Zx9Kq2Lm8Pw4Rt7Yb3Nc-StreamThread-1-consumer")],
     True),
]


@pytest.mark.parametrize(("rule", "software", "configs", "expected"), CASES,
                         ids=[f"{c[0]}-{i}-{'pos' if c[3] else 'neg'}" for i, c in enumerate(CASES)])
def test_rule(rule: str, software: tuple[str, str], configs: list[dict[str, Any]], expected: bool) -> None:
    rows = findings(push(configs, software))
    assert (rule in rules_of(rows)) is expected, [(r["rule"], r["keys"]) for r in rows]


def test_kip_rules_report_the_first_rule_per_entry_and_group_keys_per_push() -> None:
    rows = findings(push([entry("ssl.key.password", "p1", "PASSWORD"), entry("ssl.keystore.password", "p2",
                                                                            "PASSWORD"),
                          entry("security.protocol", "SASL_SSL")]))
    [typed] = by_rule(rows, RULE_TYPE)
    assert typed["keys"] == ["ssl.key.password", "ssl.keystore.password"]
    assert typed["kind"] == "sensitive_leak" and typed["severity"] == "high"
    [prefixed] = by_rule(rows, RULE_PREFIX)
    assert prefixed["keys"] == ["security.protocol"]  # the PASSWORD entries are not repeated under prefix


def test_evidence_holds_fingerprints_of_values_never_values() -> None:
    rows = findings(push([entry("ssl.key.password", "hunter2", "PASSWORD")]))
    [row] = by_rule(rows, RULE_TYPE)
    assert row["evidence"] == {"entries": [{"key": "ssl.key.password", "type": "PASSWORD", "location": "value",
                                            "fingerprint": fingerprint("hunter2", KEY)}]}
    assert "hunter2" not in str(row)


def test_policy_redacted_carries_the_policy_fingerprint() -> None:
    [row] = by_rule(findings(push([entry("sasl.jaas.config", None, "PASSWORD", redacted=True,
                                         fingerprint="0123456789abcdef")])), "policy-redacted")
    assert row["severity"] == "low"
    assert row["evidence"]["entries"][0]["fingerprint"] == "0123456789abcdef"


def test_a_secret_in_a_key_name_is_replaced_by_its_marker_everywhere() -> None:
    secret_key = "AKIAIOSFODNN7EXAMPLE"
    rows = findings(push([*PRODUCER, entry(secret_key, "x")]))
    marker = f"redacted:{fingerprint(secret_key, KEY)}"
    [hit] = by_rule(rows, "secret-aws-access-key")
    assert hit["keys"] == [marker] and hit["evidence"]["entries"][0]["location"] == "key"
    assert marker in by_rule(rows, RULE_CUSTOM)[0]["keys"]
    assert all(secret_key not in str(r) for r in rows)


def test_secrets_in_identity_fields() -> None:
    secret = "ghp_" + "Q" * 18 + "r" * 18
    rows = findings(push(PRODUCER, client_id=secret, principal="User:" + "AKIAIOSFODNN7EXAMPLE"))
    [hit] = by_rule(rows, "secret-in-identity")
    assert hit["keys"] == ["client.id", "principal"] and hit["severity"] == "critical"
    assert {f["field"]: f["kind"] for f in hit["evidence"]["fields"]} == {
        "client_id": "secret-github-token", "principal": "secret-aws-access-key"}
    assert hit["client_id"] == f"redacted:{fingerprint(secret, KEY)}"
    assert all(secret not in str(r) and "AKIAIOSFODNN7EXAMPLE" not in str(r) for r in rows)


def test_clean_identity_fields_are_copied_unchanged() -> None:
    rows = findings(push([*PRODUCER, entry("app.flag", "on")], client_id="orders-producer", principal="User:app"))
    assert rows and all(r["client_id"] == "orders-producer" and r["principal"] == "User:app" for r in rows)
    assert "secret-in-identity" not in rules_of(rows)


def test_conventional_identity_fields_are_not_secrets() -> None:
    principal = "User:CN=inventory-join-app-f7c89e69-381d-4b11-aac3-c708b5e527bd,OU=Streams"
    rows = findings(push([*PRODUCER, entry("client.id", STREAMS_CLIENT_ID), entry("app.flag", "on")],
                         client_id=STREAMS_CLIENT_ID, principal=principal))
    assert rows and all(r["client_id"] == STREAMS_CLIENT_ID and r["principal"] == principal for r in rows)
    assert not {"secret-in-identity", "secret-high-entropy"} & rules_of(rows)


def test_a_tls_principal_is_not_a_secret_but_a_token_in_its_dn_is() -> None:
    dn = "User:CN=orders-join-app-7.prod.svc,OU=platform,O=Example Corp,C=DE"
    rows = findings(push([*PRODUCER, entry("app.flag", "on")], principal=dn))
    assert rows and all(r["principal"] == dn for r in rows) and "secret-in-identity" not in rules_of(rows)
    leaked = "User:CN=orders-Zx9Kq2Lm8Pw4Rt7Yb3NcV5hJ.prod.svc,OU=platform"
    [hit] = by_rule(findings(push(PRODUCER, principal=leaked)), "secret-in-identity")
    assert hit["keys"] == ["principal"] and hit["principal"] == f"redacted:{fingerprint(leaked, KEY)}"


def test_a_token_in_a_streams_client_id_is_still_a_secret_in_identity() -> None:
    client_id = "inventory-join-app-Zx9Kq2Lm8Pw4Rt7Yb3NcV5hJ-StreamThread-1-consumer"
    [hit] = by_rule(findings(push(PRODUCER, client_id=client_id)), "secret-in-identity")
    assert hit["evidence"]["fields"] == [{"field": "client_id", "kind": "secret-high-entropy",
                                          "fingerprint": fingerprint(client_id, KEY)}]
    assert hit["client_id"] == f"redacted:{fingerprint(client_id, KEY)}"

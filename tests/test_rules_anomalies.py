"""Stateless anomaly rules: a positive and a negative case per rule, judged like each client judges."""

from __future__ import annotations

from typing import Any

import pytest

from tests.rules_helpers import (
    FRANZ_GO,
    JAVA,
    JAVA_2,
    JAVA_3,
    KAFKA_PYTHON,
    RDKAFKA,
    SARAMA,
    by_rule,
    entry,
    findings,
    push,
    rules_of,
)

G = {"group.id": "orders"}  # makes a Java push a consumer's

CASES: list[tuple[str, tuple[str, str], dict[str, str] | list[dict[str, Any]], bool]] = [
    ("idempotence-acks", JAVA, {"enable.idempotence": "true", "acks": "1"}, True),
    ("idempotence-acks", RDKAFKA, {"enable.idempotence": "true", "acks": "0"}, True),
    ("idempotence-acks", JAVA, {"enable.idempotence": "true", "acks": "all"}, False),
    ("idempotence-acks", JAVA, {"acks": "1"}, False),  # default idempotence: the Java client turns it off
    ("idempotence-acks", RDKAFKA, {"enable.idempotence": "true"}, False),  # librdkafka adjusts acks itself
    ("idempotence-acks", JAVA_2, {"enable.idempotence": "true"}, False),  # so does Java: default acks 1 -> all
    ("idempotence-acks", JAVA_2, {"enable.idempotence": "true", "acks": "1"}, True),
    ("idempotence-acks", SARAMA, {"Producer.Idempotent": "true"}, True),  # sarama's RequiredAcks default is 1
    ("idempotence-acks", SARAMA, {"Producer.Idempotent": "true", "Producer.RequiredAcks": "-1"}, False),
    ("idempotence-max-in-flight", JAVA, {"enable.idempotence": "true",
                                         "max.in.flight.requests.per.connection": "6"}, True),
    ("idempotence-max-in-flight", RDKAFKA, {"enable.idempotence": "true",
                                            "max.in.flight.requests.per.connection": "10"}, True),
    ("idempotence-max-in-flight", JAVA, {"enable.idempotence": "true",
                                         "max.in.flight.requests.per.connection": "5"}, False),
    ("idempotence-max-in-flight", RDKAFKA, {"enable.idempotence": "true"}, False),  # default 1000000 is adjusted
    ("idempotence-retries", JAVA, {"enable.idempotence": "true", "retries": "0"}, True),
    ("idempotence-retries", JAVA, {"enable.idempotence": "true", "retries": "3"}, False),
    ("idempotence-retries", SARAMA, {"Producer.Idempotent": "true", "Producer.RequiredAcks": "-1",
                                     "Producer.Retry.Max": "0"}, True),
    ("idempotence-implicitly-disabled", JAVA, {"acks": "1"}, True),
    ("idempotence-implicitly-disabled", JAVA, {"max.in.flight.requests.per.connection": "10"}, True),
    ("idempotence-implicitly-disabled", JAVA, {"acks": "all"}, False),
    ("idempotence-implicitly-disabled", JAVA, {"enable.idempotence": "false", "acks": "1"}, False),
    # The client pushes its post-processed value (false) for a key the user did not set (KIP: IsDefault).
    ("idempotence-implicitly-disabled", JAVA, [entry("acks", "1"), entry("enable.idempotence", "false",
                                                                        "BOOLEAN", default=True)], True),
    ("idempotence-implicitly-disabled", JAVA_2, [entry("acks", "1"), entry("enable.idempotence", "false",
                                                                          "BOOLEAN", default=True)], False),
    ("idempotence-implicitly-disabled", RDKAFKA, {"acks": "1"}, False),  # librdkafka's default is off
    ("transactional-without-idempotence", JAVA, {"transactional.id": "tx-1", "enable.idempotence": "false"}, True),
    ("transactional-without-idempotence", JAVA, {"transactional.id": "tx-1"}, False),
    ("transactional-without-idempotence", SARAMA, {"Producer.Transaction.ID": "tx-1"}, True),  # Idempotent false
    ("transactional-without-idempotence", SARAMA, {"Producer.Transaction.ID": "tx-1", "Producer.Idempotent": "true",
                                                   "Producer.RequiredAcks": "-1", "Net.MaxOpenRequests": "1"}, False),
    ("batching-disabled", JAVA, {"batch.size": "0"}, True),
    ("batching-disabled", RDKAFKA, {"batch.size": "0"}, True),
    ("batching-disabled", JAVA, {"batch.size": "16384"}, False),
    ("batching-disabled", JAVA, {**G, "auto.offset.reset": "earliest", "batch.size": "0"}, False),  # a consumer
    ("acks-all-retries-zero", JAVA, {"acks": "all", "retries": "0"}, True),
    ("acks-all-retries-zero", JAVA, {"acks": "-1", "retries": "0", "enable.idempotence": "true"}, False),  # its own
    ("acks-all-retries-zero", JAVA, {"acks": "1", "retries": "0"}, False),
    ("acks-all-retries-zero", JAVA_2, {"acks": "all"}, False),  # retries defaults to Integer.MAX_VALUE from 2.1
    ("acks-all-retries-zero", ("apache-kafka-java", "2.0.1"), {"acks": "all"}, True),  # ... and to 0 before
    ("bootstrap-servers-malformed", JAVA, {"bootstrap.servers": "http://b1:9092"}, True),
    ("bootstrap-servers-malformed", JAVA, {"bootstrap.servers": "SSL://b1:9093,b2:9093"}, True),
    ("bootstrap-servers-malformed", RDKAFKA, {"bootstrap.servers": "b1:9092,,b2:9092"}, True),
    ("bootstrap-servers-malformed", JAVA, {"bootstrap.servers": "b1:9092,"}, True),
    ("bootstrap-servers-malformed", JAVA, {"bootstrap.servers": "b1:9092, b2:9092"}, False),
    ("bootstrap-servers-malformed", JAVA, {"bootstrap.servers": "PLAINTEXT://localhost:60111"}, False),
    ("bootstrap-servers-malformed", RDKAFKA, {"bootstrap.servers": "b1:9092, plaintext://b2:9092"}, False),
    ("bootstrap-servers-malformed", JAVA, {"bootstrap.servers": "PLAINTEXT://b1:9092,http://b2:9092"}, True),
    ("buffer-memory-too-small", JAVA, {"buffer.memory": "10000"}, True),
    ("buffer-memory-too-small", JAVA, {"buffer.memory": "16777216"}, False),
    ("buffer-memory-too-small", RDKAFKA, {"queue.buffering.max.kbytes": "100"}, False),  # not the same measure
    ("max-block-unbounded", JAVA, {"max.block.ms": "9223372036854775807"}, True),
    ("max-block-unbounded", JAVA, {"max.block.ms": "300000"}, False),
    # Kafka Connect's Worker overrides on a task producer whose client id does not name it (before 2.3)
    ("max-block-unbounded", JAVA_2, {"max.block.ms": "9223372036854775807", "request.timeout.ms": "2147483647",
                                     "acks": "all", "max.in.flight.requests.per.connection": "1"}, False),
    ("max-block-unbounded", JAVA_2, {"max.block.ms": "9223372036854775807", "request.timeout.ms": "2147483647",
                                     "acks": "all"}, True),  # not all of them: not Connect's
    ("max-block-unbounded", JAVA, {**G, "auto.offset.reset": "earliest", "max.block.ms": "9223372036854775807"},
     False),  # a consumer
    ("max-block-too-short", JAVA, {"max.block.ms": "2000"}, True),
    ("max-block-too-short", JAVA, {"max.block.ms": "60000"}, False),
    ("max-block-too-short", JAVA, {"max.block.ms": "10000"}, False),  # fails fast, after a KRaft failover
    ("max-block-too-short", JAVA, {**G, "auto.offset.reset": "earliest", "max.block.ms": "2000"}, False),  # consumer
    ("idempotence-off-reordering", RDKAFKA, {"enable.idempotence": "false", "acks": "all", "retries": "5"}, True),
    ("idempotence-off-reordering", RDKAFKA, {"enable.idempotence": "false"}, True),  # the rest: defaults
    ("idempotence-off-reordering", RDKAFKA, {"enable.idempotence": "false", "acks": "1"}, False),  # no idempotence
    ("idempotence-off-reordering", RDKAFKA, {"enable.idempotence": "false", "max.in.flight": "1"}, False),  # ordered
    ("idempotence-off-reordering", RDKAFKA, {"enable.idempotence": "false", "retries": "0"}, False),
    ("idempotence-off-reordering", RDKAFKA, {"enable.idempotence": "false", "acks": "0"}, False),  # acks-zero
    ("idempotence-off-reordering", RDKAFKA, {"acks": "all"}, False),  # false by default: not the user's choice
    ("idempotence-off-reordering", JAVA, {"enable.idempotence": "false", "acks": "all"}, True),
    ("idempotence-off-reordering", JAVA, {"acks": "1", "enable.idempotence": "false"}, False),  # acks 1: coherent
    ("idempotence-off-reordering", JAVA, {"enable.idempotence": "false", "transactional.id": "tx-1"}, False),
    ("idempotence-off-reordering", JAVA_2, [entry("enable.idempotence", "false", "BOOLEAN", default=True)], False),
    ("queued-min-messages-tiny", RDKAFKA, {**G, "queued.min.messages": "5"}, True),
    ("queued-min-messages-tiny", RDKAFKA, {**G, "queued.min.messages": "10000"}, False),
    ("queued-min-messages-tiny", RDKAFKA, {**G, "fetch.wait.max.ms": "100"}, False),  # the default, 100000
    ("bootstrap-public-address", JAVA, {"bootstrap.servers": "kafka-1:9092,54.196.138.162:8080"}, True),
    ("bootstrap-public-address", RDKAFKA, {"bootstrap.servers": "[2600:1f18::10]:9092"}, True),
    ("bootstrap-public-address", JAVA, {"bootstrap.servers": "10.0.0.5:9092,172.16.4.2:9092,100.64.0.9:9092"}, False),
    ("bootstrap-public-address", JAVA, {"bootstrap.servers": "127.0.0.1:9092,[fd00::1]:9092"}, False),
    ("bootstrap-public-address", JAVA, {"bootstrap.servers": "pkc-4r297.europe-west1.gcp.confluent.cloud:9092"}, False),
    ("retries-limited", JAVA, {"retries": "3", "acks": "all"}, True),  # 3 x 1 s of backoff at most: below 120 s
    ("retries-limited", JAVA, {"retries": "1", "transactional.id": "tx-1", "enable.idempotence": "true"}, True),
    ("retries-limited", JAVA, {"retries": "200", "acks": "all"}, False),  # 200 x 1 s of backoff: above 120 s
    ("retries-limited", JAVA, {"retries": "0", "acks": "1"}, False),  # 0: the acks/idempotence rules say it
    ("retries-limited", ("apache-kafka-java", "2.0.1"), {"retries": "3", "acks": "all"},
     False),  # 2.0 has no delivery.timeout.ms: retries is the bound
    ("retries-limited", RDKAFKA, {"retries": "3", "acks": "all"}, False),  # Java only (docs/detection.md)
    ("retries-limited", KAFKA_PYTHON, {"retries": "3"}, False),  # no delivery timeout bounds its retries
    ("request-timeout-below-replica-lag", JAVA, {"acks": "all", "request.timeout.ms": "2000"}, True),
    ("request-timeout-below-replica-lag", RDKAFKA, {"request.timeout.ms": "5000"}, True),  # acks default all
    ("request-timeout-below-replica-lag", JAVA, {"acks": "1", "request.timeout.ms": "2000"}, False),
    ("request-timeout-below-replica-lag", JAVA, {"acks": "all", "request.timeout.ms": "15000"}, False),
    ("request-timeout-below-replica-lag", ("librdkafka", "1.5.0"), {"acks": "all"}, False),  # its default 5000
    ("socket-timeout-below-request-timeout", RDKAFKA, {"socket.timeout.ms": "5000", "request.timeout.ms": "10000"},
     True),
    ("socket-timeout-below-request-timeout", RDKAFKA, {"socket.timeout.ms": "10000", "linger.ms": "5"},
     True),  # request.timeout.ms default 30000
    ("socket-timeout-below-request-timeout", RDKAFKA, {"socket.timeout.ms": "30000", "acks": "1"}, False),
    ("socket-timeout-below-request-timeout", RDKAFKA, {"request.timeout.ms": "20000"}, False),  # socket 60000
    ("acks-leader-only", RDKAFKA, {"acks": "1"}, True),
    ("acks-leader-only", RDKAFKA, {"request.required.acks": "1"}, True),  # its alias
    ("acks-leader-only", RDKAFKA, {"acks": "1", "enable.idempotence": "false"}, True),
    ("acks-leader-only", RDKAFKA, {"acks": "1", "enable.idempotence": "true"}, False),  # idempotence-acks
    ("acks-leader-only", RDKAFKA, {"acks": "all"}, False),
    ("acks-leader-only", RDKAFKA, {"linger.ms": "5"}, False),  # the default, all
    ("acks-leader-only", ("apache-kafka-java", "2.8.1"), {"acks": "1"}, False),  # Java: its default then
    ("acks-leader-only", JAVA, {"acks": "1"}, False),  # Java from 3.0: idempotence-implicitly-disabled
    ("transactional-id-random", RDKAFKA, {"transactional.id": "orders-3f2b8c1e-9a4d-4e1f-8b2a-0c6d5e7f9a11"}, True),
    ("transactional-id-random", JAVA, {"transactional.id": "3f2b8c1e9a4d4e1f8b2a0c6d5e7f9a11"}, True),
    ("transactional-id-random", JAVA, {"transactional.id": "orders-tx-7"}, False),
    ("batch-size-above-request-size", JAVA, {"batch.size": "2097152"}, True),  # max.request.size 1048576
    ("batch-size-above-request-size", RDKAFKA, {"batch.size": "100000000"}, True),  # message.max.bytes 1000000
    ("batch-size-above-request-size", JAVA, {"batch.size": "2097152", "max.request.size": "4194304"}, False),
    ("batch-size-above-request-size", JAVA, {"max.request.size": "10000"}, False),  # default batch.size: no choice
    ("delivery-timeout-unbounded", JAVA, {"delivery.timeout.ms": "2147483647"}, True),
    ("delivery-timeout-unbounded", JAVA, {"delivery.timeout.ms": "600000"}, False),
    ("delivery-timeout-unbounded", JAVA, {"delivery.timeout.ms": "2147483647", "transactional.id": "tx-1",
                                          "enable.idempotence": "true"}, False),  # transaction.timeout.ms bounds it
    ("delivery-timeout-unbounded", RDKAFKA, {"message.timeout.ms": "0"}, True),  # librdkafka: 0 is infinite
    ("delivery-timeout-unbounded", RDKAFKA, {"delivery.timeout.ms": "0"}, True),  # its alias
    ("delivery-timeout-unbounded", RDKAFKA, {"message.timeout.ms": "300000"}, False),
    ("max-poll-records-out-of-range", JAVA, {**G, "max.poll.records": "2147483647"}, True),
    ("max-poll-records-out-of-range", JAVA, {**G, "max.poll.records": "5000"}, False),
    # A release's own default is its behaviour, not the user's choice (0.10.0: Integer.MAX_VALUE, until KIP-62).
    ("max-poll-records-out-of-range", JAVA, [entry("group.id", "orders"),
                                             entry("max.poll.records", "2147483647", "INT", default=True)], False),
    ("bootstrap-servers-malformed", JAVA, {"acks": "all"}, False),  # not sent: never judged by its default
    ("fetch-size-out-of-range", JAVA, {**G, "max.partition.fetch.bytes": "2147483647"}, True),
    ("fetch-size-out-of-range", JAVA, {**G, "fetch.max.bytes": "104857600"}, False),
    ("exactly-once-single-replica", JAVA, {"application.id": "app", "processing.guarantee": "exactly_once_v2",
                                           "replication.factor": "1"}, True),
    ("exactly-once-single-replica", JAVA, {"application.id": "app", "processing.guarantee": "exactly_once_v2",
                                           "replication.factor": "3"}, False),
    ("exactly-once-single-replica", JAVA, {"application.id": "app", "processing.guarantee": "at_least_once",
                                           "replication.factor": "1"}, False),
    ("exactly-once-single-replica", JAVA_2, {"application.id": "app", "processing.guarantee": "exactly_once"},
     True),  # replication.factor defaults to 1 before 3.0
    ("acks-zero", JAVA, {"acks": "0"}, True),
    ("acks-zero", KAFKA_PYTHON, {"acks": "0"}, True),  # no key set: sent keys still count
    ("acks-zero", JAVA, {"acks": "1"}, False),
    ("acks-zero", JAVA, {**G, "auto.offset.reset": "earliest", "acks": "0"}, False),  # a consumer ignores acks
    ("acks-zero", JAVA, {**G, "acks": "0"}, True),  # one key each way: role unknown, both rule sets apply
    ("acks-zero", SARAMA, {"Producer.RequiredAcks": "0"}, True),  # NoResponse
    ("acks-zero", SARAMA, {"Producer.RequiredAcks": "NoResponse"}, True),
    ("acks-zero", SARAMA, {"Producer.RequiredAcks": "1"}, False),  # WaitForLocal
    ("acks-zero", SARAMA, {"Producer.RequiredAcks": "WaitForAll"}, False),
    ("acks-zero", FRANZ_GO, {"RequiredAcks": "kgo.NoAck()"}, True),
    ("acks-zero", FRANZ_GO, {"RequiredAcks": "AllISRAcks"}, False),
    ("acks-zero", FRANZ_GO, {"ProducerLinger": "0"}, False),  # a bare 0 under another key is no acks
    ("delivery-timeout-too-short", JAVA, {"delivery.timeout.ms": "1000", "request.timeout.ms": "30000"}, True),
    ("delivery-timeout-too-short", RDKAFKA, {"delivery.timeout.ms": "1000"}, True),  # alias of message.timeout.ms
    ("delivery-timeout-too-short", JAVA, {"linger.ms": "100000"}, False),  # a default delivery timeout is raised
    ("delivery-timeout-too-short", RDKAFKA, {"message.timeout.ms": "0"}, False),  # 0 is infinite
    ("delivery-timeout-too-short", JAVA_3, {"delivery.timeout.ms": "30004"}, False),  # linger.ms default 0 in 3.9
    ("delivery-timeout-too-short", JAVA, {"delivery.timeout.ms": "30004"}, True),  # linger.ms default 5 in 4.x
    ("delivery-timeout-too-short", JAVA, {"delivery.timeout.ms": "5000", "request.timeout.ms": "500"}, True),  # < 9 s
    ("delivery-timeout-too-short", JAVA, {"delivery.timeout.ms": "10000", "request.timeout.ms": "500"}, False),
    ("buffer-below-batch", JAVA, {"buffer.memory": "1000", "batch.size": "16384"}, True),
    ("buffer-below-batch", JAVA, {"batch.size": "16384"}, False),
    ("reconnect-backoff-inverted", JAVA, {"reconnect.backoff.ms": "500", "reconnect.backoff.max.ms": "100"}, True),
    ("reconnect-backoff-inverted", RDKAFKA, {"reconnect.backoff.ms": "20000"}, True),  # default max 10000
    ("reconnect-backoff-inverted", JAVA, {"reconnect.backoff.ms": "5000"}, False),  # Java makes it the max
    ("retry-backoff-inverted", JAVA, {"retry.backoff.ms": "5000"}, True),  # default max 1000
    ("retry-backoff-inverted", JAVA, {"retry.backoff.ms": "500"}, False),
    ("socket-setup-timeout-inverted", JAVA, {"socket.connection.setup.timeout.ms": "60000"}, True),
    ("socket-setup-timeout-inverted", JAVA, {"socket.connection.setup.timeout.ms": "5000"}, False),
    ("heartbeat-not-below-session", JAVA, {**G, "heartbeat.interval.ms": "50000"}, True),  # session default 45000
    ("heartbeat-not-below-session", JAVA, {**G, "heartbeat.interval.ms": "3000"}, False),
    ("heartbeat-not-below-session", JAVA, {**G, "group.protocol": "consumer", "heartbeat.interval.ms": "50000"},
     False),
    ("heartbeat-above-third", JAVA, {**G, "heartbeat.interval.ms": "20000"}, True),
    ("heartbeat-above-third", JAVA, {**G, "heartbeat.interval.ms": "15000"}, False),
    ("heartbeat-above-third", SARAMA, {"Consumer.Group.Session.Timeout": "9s",
                                       "Consumer.Group.Heartbeat.Interval": "4s"}, True),
    ("heartbeat-above-third", SARAMA, {"Consumer.Group.Heartbeat.Interval": "4s"}, True),  # session default 10s
    ("heartbeat-above-third", SARAMA, {"Consumer.Group.Session.Timeout": "9s"}, False),  # heartbeat default 3s
    ("heartbeat-above-third", FRANZ_GO, {"SessionTimeout": "1m30s", "HeartbeatInterval": "31s"}, True),
    ("heartbeat-above-third", FRANZ_GO, {"SessionTimeout": "45s", "HeartbeatInterval": "3s"}, False),
    ("heartbeat-above-third", FRANZ_GO, {"SessionTimeout": "9000", "HeartbeatInterval": "4000"}, False),  # no unit
    ("session-timeout-out-of-bounds", JAVA, {**G, "session.timeout.ms": "2000000"}, True),
    ("session-timeout-out-of-bounds", RDKAFKA, {**G, "session.timeout.ms": "5000"}, True),
    ("session-timeout-out-of-bounds", JAVA, {**G, "session.timeout.ms": "45000"}, False),
    ("session-timeout-out-of-bounds", FRANZ_GO, {"SessionTimeout": "500ms", "HeartbeatInterval": "100ms"}, True),
    ("session-timeout-out-of-bounds", SARAMA, {"Consumer.Group.Session.Timeout": "1h"}, True),
    ("session-timeout-out-of-bounds", SARAMA, {"Consumer.Group.Session.Timeout": "30m"}, False),  # 1800000: the max
    ("session-timeout-out-of-bounds", JAVA, {"acks": "all", "linger.ms": "5", "session.timeout.ms": "100"},
     False),  # a producer ignores it
    ("fetch-wait-not-below-request-timeout", JAVA, {**G, "fetch.max.wait.ms": "30000"}, True),
    ("fetch-wait-not-below-request-timeout", JAVA, {**G, "fetch.max.wait.ms": "500"}, False),
    ("fetch-wait-not-below-request-timeout", SARAMA, {"Consumer.MaxWaitTime": "1m"}, False),  # no request timeout
    ("consumer-protocol-ignores-classic-keys", JAVA, {**G, "group.protocol": "consumer",
                                                      "session.timeout.ms": "30000"}, True),
    ("consumer-protocol-ignores-classic-keys", JAVA,
     [entry("group.id", "orders"), entry("group.protocol", "consumer"),
      entry("session.timeout.ms", "45000", "INT", default=True)], False),  # a default, not set by the user
]


@pytest.mark.parametrize(("rule", "software", "configs", "expected"), CASES,
                         ids=[f"{c[0]}-{i}-{'pos' if c[3] else 'neg'}" for i, c in enumerate(CASES)])
def test_rule(rule: str, software: tuple[str, str], configs: Any, expected: bool) -> None:
    rows = findings(push(configs, software))
    assert (rule in rules_of(rows)) is expected, [r["message"] for r in rows]


def test_every_stateless_anomaly_has_a_positive_and_a_negative_case() -> None:
    from udfs.rules.anomalies import STATELESS_ANOMALIES

    for rule in STATELESS_ANOMALIES:
        outcomes = {expected for r, _, _, expected in CASES if r == rule.id}
        assert outcomes == {True, False}, rule.id


def test_a_streams_producer_may_hold_its_process_uuid_in_its_transactional_id() -> None:
    streams_id = "orders-3f2b8c1e-9a4d-4e1f-8b2a-0c6d5e7f9a11"
    configs = {"acks": "all", "transactional.id": f"{streams_id}-1"}
    assert "transactional-id-random" not in rules_of(findings(push(
        configs, client_id=f"{streams_id}-StreamThread-1-producer")))
    assert "transactional-id-random" in rules_of(findings(push(configs, client_id="orders-producer")))


def test_finding_names_keys_values_and_defaults() -> None:
    [row] = by_rule(findings(push({"enable.idempotence": "true", "acks": "1"})), "idempotence-acks")
    assert row["kind"] == "anomaly" and row["severity"] == "high"
    assert row["keys"] == ["acks", "enable.idempotence"]
    assert row["message"] == "enable.idempotence=true with acks=1: idempotence needs acks=all."
    assert row["evidence"] == {"values": {"enable.idempotence": True, "acks": 1}, "defaulted": []}


def test_defaulted_keys_are_reported_as_such() -> None:
    [row] = by_rule(findings(push({**G, "heartbeat.interval.ms": "50000"})), "heartbeat-not-below-session")
    assert row["evidence"]["defaulted"] == ["session.timeout.ms"]
    assert row["evidence"]["values"]["session.timeout.ms"] == 45000


def test_redacted_values_are_unknown_not_defaulted() -> None:
    configs = [entry("group.id", "g"), entry("session.timeout.ms", None, "INT", redacted=True, fingerprint="f")]
    rows = findings(push([*configs, entry("heartbeat.interval.ms", "50000", "INT")]))
    assert "heartbeat-not-below-session" not in rules_of(rows)


def test_one_batch_judges_each_push_by_its_own_profile() -> None:
    rows = findings(push({"delivery.timeout.ms": "30004"}, JAVA_3), push({"delivery.timeout.ms": "30004"}, JAVA))
    hits = by_rule(rows, "delivery-timeout-too-short")
    assert [r["client_software_version"] for r in hits] == [JAVA[1]]


def test_go_clients_are_judged_under_the_java_names_in_milliseconds() -> None:
    rows = findings(push({"Consumer.Group.Session.Timeout": "9s", "Consumer.Group.Heartbeat.Interval": "4s",
                          "Producer.RequiredAcks": "0"}, SARAMA))
    [third] = by_rule(rows, "heartbeat-above-third")
    assert third["keys"] == ["heartbeat.interval.ms", "session.timeout.ms"]
    assert third["message"] == "heartbeat.interval.ms=4000 is above a third of session.timeout.ms=9000."
    assert third["evidence"] == {"values": {"heartbeat.interval.ms": 4000, "session.timeout.ms": 9000},
                                 "defaulted": []}
    [acks] = by_rule(rows, "acks-zero")
    assert acks["evidence"]["values"] == {"acks": 0}


def test_go_defaults_are_durations_too() -> None:
    [row] = by_rule(findings(push({"Consumer.Group.Heartbeat.Interval": "5s"}, SARAMA)), "heartbeat-above-third")
    assert row["evidence"] == {"values": {"heartbeat.interval.ms": 5000, "session.timeout.ms": 10000},
                               "defaulted": ["session.timeout.ms"]}


@pytest.mark.parametrize(("rule", "key", "value"),
                         [("max-block-unbounded", "max.block.ms", "9223372036854775807"),
                          ("delivery-timeout-unbounded", "delivery.timeout.ms", "2147483647")])
def test_unbounded_waits_spare_the_producers_kafka_connect_configures(rule: str, key: str, value: str) -> None:
    """Connect sets max.block.ms to Long.MAX_VALUE and delivery.timeout.ms to Integer.MAX_VALUE on its tasks'
    producers, and delivery.timeout.ms on the producers of its internal topics, on purpose."""
    unbounded = {key: value}
    for connect in ("connector-producer-orders-0", "connector-dlq-producer-s3-1", "connect-cluster-offsets",
                    "B-mm2-B->A-offsets", "connect-statuses", "connect-configs", "connect-configs-leader"):
        assert rule not in rules_of(findings(push(unbounded, client_id=connect))), connect
    for other in ("orders-connector-producer", "offsets-writer", "payments"):
        assert rule in rules_of(findings(push(unbounded, client_id=other))), other

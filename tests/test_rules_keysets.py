"""Known key sets: data files, families, versions, roles, aliases, and the typo rule built on them."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pyarrow as pa
import pytest

from configwatch.contract import CONFIG_TYPES
from tests.rules_helpers import JAVA, by_rule, entry, findings, push, rules_of
from udfs.rules.generate_keysets import LINES
from udfs.rules.keysets import family_of, key_set_file, profile, resolve_profiles
from udfs.rules.typos import edit_distance, nearest_known
from udfs.sensitivity import RULE_CUSTOM

DATA = resources.files("udfs.rules").joinpath("data")
FILES = [*(f"apache-kafka-java-{line}.json" for line in LINES), "librdkafka-2.15.json"]


@pytest.mark.parametrize("file", FILES)
def test_data_files_hold_types_and_defaults(file: str) -> None:
    doc = json.loads(DATA.joinpath(file).read_text())
    assert doc["source"] and doc["version"]
    for body in doc["roles"].values():
        assert len(body["keys"]) > 30 or (file == "apache-kafka-java-0.10.2.json" and not body["keys"])  # no admin
        for name, spec in body["keys"].items():
            assert spec["type"] in CONFIG_TYPES, name
            assert spec["default"] is None or isinstance(spec["default"], str), name


def test_documented_facts() -> None:
    producer = profile("apache-kafka-java-4.3.json", "producer")
    assert producer.keys["linger.ms"].type == "LONG" and producer.default("linger.ms") == "5"
    assert profile("apache-kafka-java-3.9.json", "producer").default("linger.ms") == "0"
    assert producer.keys["ssl.key.password"].type == "PASSWORD"
    assert producer.keys["key.serializer"].required
    consumer = profile("apache-kafka-java-4.3.json", "consumer")
    assert consumer.default("session.timeout.ms") == "45000" and consumer.default("group.protocol") == "classic"
    assert consumer.default("partition.assignment.strategy") == (
        "org.apache.kafka.clients.consumer.RangeAssignor,org.apache.kafka.clients.consumer.CooperativeStickyAssignor")
    assert profile("apache-kafka-java-4.3.json", "admin").default("enable.metrics.push") == "false"
    assert profile("apache-kafka-java-4.3.json", "streams").default("request.timeout.ms") == "40000"
    rdk = profile("librdkafka-2.15.json", "producer")
    assert rdk.canonical("linger.ms") == "queue.buffering.max.ms" and rdk.default("linger.ms") == "5"
    assert rdk.sources("delivery.timeout.ms") == ("delivery.timeout.ms", "message.timeout.ms")
    assert profile("librdkafka-2.15.json", "consumer").sources("fetch.max.wait.ms") == ("fetch.wait.max.ms",)
    assert rdk.default("enable.idempotence") == "false"


def test_go_families_map_the_java_keys_the_rules_read_to_their_own() -> None:
    sarama = profile("sarama-1.60.json", "unknown")
    assert sarama.durations == "go" and profile("librdkafka-2.15.json", "producer").durations == "number"
    assert sarama.sources("acks") == ("Producer.RequiredAcks",) and sarama.default("acks") == "1"
    assert sarama.sources("session.timeout.ms") == ("Consumer.Group.Session.Timeout",)
    assert sarama.default("session.timeout.ms") == "10s" and sarama.default("heartbeat.interval.ms") == "3s"
    assert sarama.sources("max.in.flight.requests.per.connection") == ("Net.MaxOpenRequests",)
    assert sarama.sources("request.timeout.ms") == () and sarama.sources("group.id") == ()  # no such field
    franz = profile("franz-go-1.21.json", "unknown")
    assert franz.sources("heartbeat.interval.ms") == ("HeartbeatInterval",) and franz.durations == "go"
    assert franz.sources("group.id") == ("ConsumerGroup",)
    assert franz.sources("group.protocol") == () and franz.sources("enable.idempotence") == ()


@pytest.mark.parametrize("file", ["kafka-python-2.0.json", "kafka-python-2.2.json", "kafka-python-3.0.json",
                                  "librdkafka-2.15.json", "sarama-1.60.json", "franz-go-1.21.json"])
def test_java_equivalents_name_rule_keys_and_known_keys(file: str) -> None:
    from udfs.rules.effective import RULE_KEYS

    doc = json.loads(DATA.joinpath(file).read_text())
    known = set().union(*(set(body["keys"]) for body in doc["roles"].values()))
    aliases = doc.get("aliases", {})
    for rule_key, own in doc.get("java_equivalents", {}).items():
        assert rule_key in RULE_KEYS, (file, rule_key)
        assert aliases.get(own, own) in known, (file, own)


@pytest.mark.parametrize(("name", "family"), [
    ("apache-kafka-java", "apache-kafka-java"), ("librdkafka", "librdkafka"),
    ("confluent-kafka-python", "librdkafka"), ("confluent-kafka-rust", "librdkafka"),
    ("kafka-python", "kafka-python"), ("sarama", "sarama"), ("kgo", "franz-go"), ("mystery", None), (None, None),
])
def test_families(name: str | None, family: str | None) -> None:
    fam = family_of(name)
    assert (fam["family"] if fam else None) == family


@pytest.mark.parametrize(("name", "version", "file"), [
    ("apache-kafka-java", "3.7.1", "apache-kafka-java-3.7.json"),
    ("apache-kafka-java", "4.0.0", "apache-kafka-java-4.0.json"),
    ("apache-kafka-java", "4.3.1-SNAPSHOT", "apache-kafka-java-4.3.json"),
    ("apache-kafka-java", "trunk", "apache-kafka-java-4.4.json"),  # unparseable: the newest line
    ("apache-kafka-java", "0.10.2.1", "apache-kafka-java-0.10.2.json"),
    ("apache-kafka-java", "0.9.0.1", "apache-kafka-java-0.10.2.json"),  # below every line: the oldest
    ("apache-kafka-java", "2.9.0", "apache-kafka-java-2.8.json"),  # between lines: the nearest lower one
    ("apache-kafka-java", "7.9.0-ccs", "apache-kafka-java-3.9.json"),  # Confluent Platform 7.9 ships Kafka 3.9
    ("apache-kafka-java", "6.2.1-ce", "apache-kafka-java-2.8.json"),
    ("apache-kafka-java", "8.1.0-ccs", "apache-kafka-java-4.1.json"),
    ("confluent-kafka-python", "2.6.0-rdkafka-2.6.0", "librdkafka-2.6.json"),  # the librdkafka it embeds
    ("karafka", "v2.4.1-rdkafka-ruby-v0.16.0-librdkafka-v2.3.0", "librdkafka-2.3.json"),
    ("confluent-kafka-go", "2.10.1", "librdkafka-2.10.json"),  # bindings reporting librdkafka's version as theirs
    ("confluent-kafka-dotnet", "1.5.0", "librdkafka-1.5.json"),
    ("librdkafka", "1.5.2", "librdkafka-1.5.2.json"),  # 1.5.2 changed two defaults within its line
    ("librdkafka", "2.9.0", "librdkafka-2.8.json"),
    ("librdkafka", "1.3.0", "librdkafka-1.4.json"),  # before KIP-511: the oldest
    ("confluent-kafka-javascript", "1.2.0", "librdkafka-2.15.json"),  # a binding's own version: the newest
    ("kafka-python", "2.0.2", "kafka-python-2.0.json"),
        ("sarama", "1.45.0", "sarama-1.60.json"),
])
def test_version_selects_key_set(name: str, version: str, file: str | None) -> None:
    assert key_set_file(name, version) == file


def test_roles_are_inferred_from_role_exclusive_keys() -> None:
    keys = ["acks", "linger.ms", "group.id", "auto.offset.reset", "application.id", "acks", "client.id",
            "group.id", "acks", "bootstrap.controllers"]
    rows = np.array([0, 0, 1, 1, 2, 2, 3, 4, 4, 5])
    ids, registry = resolve_profiles([JAVA[0]] * 6, [JAVA[1]] * 6, rows, pa.array(keys))
    assert [registry[i].role for i in ids] == ["producer", "consumer", "streams", "admin", "unknown", "admin"]
    unknown = registry[ids[4]]
    assert unknown.default("reconnect.backoff.ms") == "50"  # all roles agree
    assert unknown.default("request.timeout.ms") is None    # Streams says 40000, clients 30000


def test_edit_distance_is_bounded_damerau() -> None:
    assert edit_distance("linger.ms", "lingre.ms") == 1  # a transposition
    assert edit_distance("batch.sise", "batch.size") == 1
    assert edit_distance("abc", "abcdef") == 3 and edit_distance("a" * 10, "b" * 10) == 3


def test_nearest_known() -> None:
    assert nearest_known("apache-kafka-java-4.3/producer", "lingr.ms") == ("linger.ms", 1)
    assert nearest_known("apache-kafka-java-4.3/producer", "linger.ms") is None  # known, not a typo
    assert nearest_known("apache-kafka-java-4.3/producer", "schema.registry.url") is None
    assert nearest_known("apache-kafka-java-4.3/streams", "producer.lingr.ms") == ("producer.linger.ms", 1)
    assert nearest_known("apache-kafka-java-4.3/producer", "ack") == ("acks", 1)
    assert nearest_known("apache-kafka-java-4.3/producer", "aXks9") is None  # short keys: distance 1 only


def test_typo_rule() -> None:
    rows = findings(push([entry("acks", "all"), entry("batch.sise", "32768")]))
    [typo] = by_rule(rows, "unknown-key-typo")
    assert typo["keys"] == ["batch.sise"] and typo["evidence"] == {"suggestion": "batch.size", "distance": 1}
    assert "custom" not in typo["message"]
    assert "unknown-key-typo" not in rules_of(findings(push([entry("acks", "all"), entry("my.app.url", "u")])))
    secret_key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert "unknown-key-typo" not in rules_of(findings(push([entry("acks", "all"), entry(secret_key, "1")])))


@pytest.mark.parametrize(("version", "key", "custom"), [
    ("2.7.2", "internal.auto.downgrade.txn.commit", False),  # internal: the 2.6 to 2.8 producers define it
    ("7.0.1-ccs", "internal.auto.downgrade.txn.commit", True),  # Confluent 7.0 ships Kafka 3.0, which dropped it
    ("3.6.1", "auto.include.jmx.reporter", False),  # deprecated in 3.4, removed in 4.0
    ("4.0.0", "auto.include.jmx.reporter", True),
    ("2.3.0", "internal.leave.group.on.close", False),
    ("7.4.0-ce", "confluent.proxy.protocol.client.version", False),  # Confluent Server's clients define confluent.*
    ("7.4.0-ccs", "confluent.proxy.protocol.client.version", True),  # the community build is Apache's
    ("3.4.0", "confluent.proxy.protocol.client.version", True),
])
def test_a_key_the_clients_own_release_defines_is_never_custom(version: str, key: str, custom: bool) -> None:
    rows = findings(push({key: "true", "acks": "all", "linger.ms": "5"}, ("apache-kafka-java", version)))
    assert (key in {k for r in by_rule(rows, RULE_CUSTOM) for k in r["keys"]}) is custom

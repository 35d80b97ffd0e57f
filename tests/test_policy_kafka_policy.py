"""The policy API and KafkaTopicPolicy: redaction with the shared rules, publishing, never blocking."""

from __future__ import annotations

import logging
import socket
from typing import Any

import pytest

from configwatch.records import ConfigEntry
from configwatch.secrets import SecretStr, fingerprint
from policy import ClientConfig, ClientConfigData, ClientConfigPolicy, KafkaTopicPolicy, RequestContext
from policy.exceptions import PolicyConfigError
from policy.loader import load_policy_class
from policy.publisher import EventPublisher
from policy.redaction import redact, violation_message
from tests.conftest import eventually
from tests.gateway_helpers import TEST_KEY, create_topic, read_events

KEY = SecretStr("unit-key")
CONTEXT = RequestContext(connection_id="127.0.0.1:9192-10.0.0.7:5000-1", client_address="10.0.0.7",
                         client_id="app", client_instance_id="0b6c3f8e-8d4e-4a53-9d9b-1f2a3b4c5d6e",
                         client_software_name="apache-kafka-java", client_software_version="4.4.0", broker_id=3)


@pytest.mark.parametrize("key, type_name, rule", [
    ("sasl.jaas.config", "STRING", "kip-sensitive-prefix"),
    ("security.providers", "STRING", "kip-sensitive-prefix"),
    ("ssl.keystore.location", "STRING", "kip-sensitive-prefix"),
    ("producer.ssl.key.password", "STRING", "kip-sensitive-infix"),
    ("admin.sasl.kerberos.service.name", "STRING", "kip-sensitive-infix"),
    ("consumer.security.protocol", "STRING", "kip-sensitive-infix"),
    ("partitioner.class", "STRING", "kip-sensitive-suffix"),
    ("interceptor.classes", "LIST", "kip-sensitive-suffix"),
    ("my_password", "PASSWORD", "kip-sensitive-type"),
    ("key.serializer", "CLASS", "kip-sensitive-type"),
])
def test_each_kip_rule_redacts_with_a_fingerprint(key: str, type_name: str, rule: str) -> None:
    out = redact([ClientConfig(key, "secret-value", type_name, False), ClientConfig("acks", "all", "STRING", True)],
                 KEY)
    assert out.sensitive == ((key, rule),)
    assert out.entries == (ConfigEntry(key, None, type_name, False, True, fingerprint("secret-value", KEY)),
                           ConfigEntry("acks", "all", "STRING", True))
    message = violation_message(out.sensitive, redacted=True)
    assert f"{key} ({rule})" in message and "secret-value" not in message


def test_redaction_off_keeps_values_but_still_reports() -> None:
    out = redact([ClientConfig("ssl.key.password", "pw", "PASSWORD", False)], KEY, enabled=False)
    assert out.entries == (ConfigEntry("ssl.key.password", "pw", "PASSWORD", False),)
    assert out.sensitive == (("ssl.key.password", "kip-sensitive-type"),)


def test_same_secret_same_fingerprint_across_clients() -> None:
    a = redact([ClientConfig("sasl.jaas.config", "x", "STRING", False)], KEY).entries[0]
    b = redact([ClientConfig("producer.sasl.jaas.config", "x", "STRING", True)], KEY).entries[0]
    assert a.fingerprint == b.fingerprint and a.fingerprint is not None and len(a.fingerprint) == 16


def test_client_config_data_json_round_trip() -> None:
    data = ClientConfigData((ClientConfig("acks", "all", "STRING", True),), 1_790_000_000_123, 57)
    assert ClientConfigData.from_json(data.to_json()) == data


def test_policy_class_loading() -> None:
    assert load_policy_class("policy.kafka_policy.KafkaTopicPolicy") is KafkaTopicPolicy
    assert load_policy_class("none") is None and load_policy_class("") is None
    with pytest.raises(PolicyConfigError, match="not a dotted path"):
        load_policy_class("KafkaTopicPolicy")
    with pytest.raises(PolicyConfigError, match="cannot import"):
        load_policy_class("no.such.module.Policy")
    with pytest.raises(PolicyConfigError, match="not a ClientConfigPolicy"):
        load_policy_class("configwatch.records.Event")
    assert issubclass(KafkaTopicPolicy, ClientConfigPolicy)


def test_policy_needs_its_settings() -> None:
    with pytest.raises(PolicyConfigError, match="fingerprint_key"):
        KafkaTopicPolicy().configure({"bootstrap_servers": "127.0.0.1:1"})
    with pytest.raises(PolicyConfigError, match="bootstrap_servers"):
        KafkaTopicPolicy().configure({"fingerprint_key": KEY})
    with pytest.raises(PolicyConfigError, match="before configure"):
        KafkaTopicPolicy().process(CONTEXT, ClientConfigData((), 1))


@pytest.mark.kafka
def test_standalone_policy_publishes_redacted_push_with_contract_key(kafka_bootstrap: str, topic_name: Any) -> None:
    topic = topic_name("policy")
    create_topic(kafka_bootstrap, topic)
    policy = KafkaTopicPolicy()
    policy.configure({"bootstrap_servers": kafka_bootstrap, "input_topic": topic, "fingerprint_key": TEST_KEY})
    data = ClientConfigData((ClientConfig("acks", "all", "STRING", False),
                             ClientConfig("sasl.jaas.config", "user=a password=b", "STRING", False)),
                            1_790_000_000_000, 120)
    with policy:
        first = policy.process(CONTEXT, data)
        policy.reconfigure({"redact_sensitive": False})
        second = policy.process(CONTEXT, data)
    assert first == ("sensitive configuration must not be pushed: sasl.jaas.config (kip-sensitive-prefix); "
                     "their values were redacted")
    assert second == ("sensitive configuration must not be pushed: sasl.jaas.config (kip-sensitive-prefix); "
                      "they were recorded as sent")
    events = read_events(kafka_bootstrap, topic)
    assert [key for key, _ in events] == [b"0b6c3f8e-8d4e-4a53-9d9b-1f2a3b4c5d6e"] * 2
    redacted, raw = (e for _, e in events)
    assert redacted.to_dict() == {
        "schema_version": 1, "event": "config_push", "timestamp_ms": 1_790_000_000_000, "broker_id": 3,
        "connection_id": CONTEXT.connection_id, "client_instance_id": CONTEXT.client_instance_id,
        "client_software_name": "apache-kafka-java", "client_software_version": "4.4.0", "client_id": "app",
        "principal": "User:ANONYMOUS", "listener": "PLAINTEXT", "security_protocol": "PLAINTEXT",
        "client_address": "10.0.0.7", "request_size_bytes": 120,
        "configs": [{"key": "acks", "value": "all", "type": "STRING", "is_default": False},
                    {"key": "sasl.jaas.config", "value": None, "type": "STRING", "is_default": False,
                     "redacted": True, "fingerprint": fingerprint("user=a password=b", TEST_KEY)}],
    }
    assert raw.configs is not None and raw.configs[1].value == "user=a password=b"  # redaction switched off


@pytest.mark.kafka
def test_full_buffer_drops_and_counts_instead_of_blocking(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="policy.publisher")
    with socket.socket() as probe:  # a port nobody listens on: the producer can never connect
        probe.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{probe.getsockname()[1]}"
    policy = KafkaTopicPolicy()
    policy.configure({"bootstrap_servers": dead, "input_topic": "nowhere", "fingerprint_key": KEY,
                      "policy_buffer_size": 2})
    data = ClientConfigData((ClientConfig("acks", "all", "STRING", False),), 1, 10)
    results = [policy.process(CONTEXT, data) for _ in range(5)]  # returns at once although nothing can be sent
    publisher = policy.publisher
    assert results == [None] * 5 and isinstance(publisher, EventPublisher)
    stats = publisher.stats()
    assert (stats.total("offered"), stats.total("dropped"), stats.buffered) == (5, 3, 2)
    assert caplog.text.count("publish buffer full (2)") == 3
    policy.close()  # flushes what it can: the two buffered events cannot reach Kafka and are counted as failed
    final = publisher.stats()
    assert (final.total("published"), final.total("dropped"), final.total("failed")) == (0, 3, 2)
    eventually(lambda: "not sent before close" in caplog.text or None, timeout_s=5)

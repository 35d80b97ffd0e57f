"""The policy API and KafkaTopicPolicy: redaction with the shared rules, publishing, never blocking."""

from __future__ import annotations

import logging
import socket
from typing import Any

import pytest

from configwatch.records import ConfigEntry, Event
from configwatch.secrets import SecretStr, fingerprint
from policy import ClientConfig, ClientConfigData, ClientConfigPolicy, KafkaTopicPolicy, RequestContext
from policy.exceptions import PolicyConfigError, PolicyUnavailableError
from policy.loader import load_policy_class
from policy.publisher import EventPublisher
from policy.redaction import Redaction, redact, redact_all, violation_message
from policy.simulator import FleetSpec, fleet_pushes, generate_fleet
from tests.conftest import eventually
from tests.gateway_helpers import TEST_KEY, ListSink, create_topic, read_events
from udfs.sensitivity import mask_identity

KEY = SecretStr("unit-key")
CONTEXT = RequestContext(connection_id="127.0.0.1:9192-10.0.0.7:5000-1", client_address="10.0.0.7",
                         client_id="app", client_instance_id="0b6c3f8e-8d4e-4a53-9d9b-1f2a3b4c5d6e",
                         client_software_name="apache-kafka-java", client_software_version="4.4.0", broker_id=3)


def _redact(configs: list[ClientConfig], *, context: RequestContext = CONTEXT, enabled: bool = True) -> Redaction:
    return redact(context, ClientConfigData(tuple(configs), 1_790_000_000_000), KEY, enabled=enabled)


# The security probe: credentials under each client family's own key names, typed STRING, from every
# family the simulator knows, a family it does not, and a client that names no software at all.
_PROBE_CLIENTS = [("apache-kafka-java", "3.9.1"), ("librdkafka", "2.6.1"), ("kafka-python", "2.0.2"),
                  ("kgo", "v1.17.1"), ("sarama", "1.43.3"), ("some-new-client", "0.1"), (None, None)]
_PROBE_KEYS = ["sasl_plain_password", "Net.SASL.Password", "SASLPlainPassword", "database.password",
               "basic.auth.user.info", "SASL.JAAS.CONFIG", " sasl.jaas.config", "sasl.jaas\u200b.config",
               "datadog.api.key", "app.owner.email", "schema.registry.url"]


@pytest.mark.parametrize(("name", "version"), _PROBE_CLIENTS)
def test_no_client_family_gets_a_secret_past_the_edge(name: str | None, version: str | None) -> None:
    context = RequestContext(connection_id="c-1", client_software_name=name, client_software_version=version)
    secret = "Probe-Secret-Value-1"
    keys = [k.encode().decode("unicode_escape") for k in _PROBE_KEYS]
    out = _redact([ClientConfig(k, f"{secret}-{i}", "STRING", False) for i, k in enumerate(keys)], context=context)
    published = out.event.to_json()
    assert secret not in published
    assert {k for k, _ in out.sensitive} == set(keys)
    assert all(e.redacted and e.value is None and e.fingerprint for e in out.event.configs)


def test_a_secret_value_under_a_plain_key_is_redacted_and_plain_entries_pass() -> None:
    out = _redact([ClientConfig("client.id", "AKIAABCDEFGHIJKLMNOP", "STRING", False),
                   ClientConfig("linger.ms", "5", "LONG", False)])
    assert out.sensitive == (("client.id", "secret-aws-access-key"),)
    assert out.event.configs[1] == ConfigEntry("linger.ms", "5", "LONG", False)
    assert "AKIAABCDEFGHIJKLMNOP" not in out.event.to_json()


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
    out = _redact([ClientConfig(key, "secret-value", type_name, False), ClientConfig("acks", "all", "STRING", True)])
    assert out.sensitive == ((key, rule),)
    assert out.event.configs == (ConfigEntry(key, None, type_name, False, True, fingerprint("secret-value", KEY)),
                                 ConfigEntry("acks", "all", "STRING", True))
    message = violation_message(out.sensitive, redacted=True)
    assert f"{key} ({rule})" in message and "secret-value" not in message


def test_redaction_off_keeps_values_but_still_reports() -> None:
    out = _redact([ClientConfig("ssl.key.password", "pw", "PASSWORD", False)], enabled=False)
    assert out.event.configs == (ConfigEntry("ssl.key.password", "pw", "PASSWORD", False),)
    assert out.sensitive == (("ssl.key.password", "kip-sensitive-type"),)


def test_same_secret_same_fingerprint_across_clients() -> None:
    a = _redact([ClientConfig("sasl.jaas.config", "x", "STRING", False)]).event.configs[0]
    b = _redact([ClientConfig("producer.sasl.jaas.config", "x", "STRING", True)]).event.configs[0]
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
    assert isinstance(policy.publisher, EventPublisher) and policy.publisher.wait_connected(30)
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
def test_pushes_are_refused_not_accepted_while_the_publisher_cannot_deliver(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="policy.publisher")
    with socket.socket() as probe:  # a port nobody listens on: the producer can never connect
        probe.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{probe.getsockname()[1]}"
    policy = KafkaTopicPolicy()
    policy.configure({"bootstrap_servers": dead, "input_topic": "nowhere", "fingerprint_key": KEY,
                      "policy_buffer_size": 2})
    publisher = policy.publisher
    assert isinstance(publisher, EventPublisher)
    data = ClientConfigData((ClientConfig("acks", "all", "STRING", False),), 1, 10)
    for _ in range(5):  # returns at once although nothing can be sent, and never says "recorded"
        with pytest.raises(PolicyUnavailableError, match="not connected"):
            policy.process(CONTEXT, data)
    # Connection events still wait in the bounded buffer (they are published once Kafka is back) ...
    opened = Event(event="connection_opened", timestamp_ms=1, connection_id="c-1")
    assert [publisher.offer(opened) for _ in range(4)] == [True, True, False, False]
    stats = publisher.stats()
    assert (stats.total("offered"), stats.total("dropped"), stats.buffered, stats.connected) == (4, 2, 2, False)
    assert stats.buffered_bytes > 0
    assert caplog.text.count("publish buffer full (2 events") == 2
    policy.close()  # ... and what is still buffered at close is counted as failed, never lost silently
    final = publisher.stats()
    assert (final.total("published"), final.total("dropped"), final.total("failed")) == (0, 2, 2)
    eventually(lambda: "not sent before close" in caplog.text or None, timeout_s=5)


def test_the_buffer_is_bounded_by_bytes() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{probe.getsockname()[1]}"
    publisher = EventPublisher(dead, "nowhere", buffer_size=10_000, buffer_bytes=1_000_000)
    try:
        big = Event(event="config_push", timestamp_ms=1, connection_id="c-1",
                    configs=tuple(ConfigEntry(f"k{i}", "", "STRING", False) for i in range(1900)))
        accepted = sum(publisher.offer(big) for _ in range(100))
        stats = publisher.stats()
        assert 0 < accepted < 100 and stats.buffered == accepted
        assert stats.buffered_bytes <= 1_000_000 and stats.total("dropped") == 100 - accepted
    finally:
        publisher.close(timeout_s=5)


def test_pushes_redacted_together_come_out_as_each_alone() -> None:
    """The gateway's bursts (``redact_all``) judge and redact every push exactly as one call per push would."""
    fleet = generate_fleet(FleetSpec(clients=120, seed=5))
    requests = [*fleet_pushes(fleet), (CONTEXT, ClientConfigData((), 1_790_000_000_000))]
    together = redact_all(requests, KEY)
    assert together == [redact(context, data, KEY) for context, data in requests]
    assert sum(bool(r.sensitive) for r in together) >= 10  # the fleet sends secrets: the comparison covers them


class _ShortSink(ListSink):
    """Takes ``room`` events, then refuses."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    def offer(self, event: Event) -> bool:
        return len(self.events) < self.room and super().offer(event)


def test_process_all_gives_each_push_its_own_outcome() -> None:
    policy = KafkaTopicPolicy()
    policy.attach_publisher(_ShortSink(room=2))
    policy.configure({"fingerprint_key": KEY})
    plain = ClientConfigData((ClientConfig("acks", "all", "STRING", False),), 1_790_000_000_000)
    secret = ClientConfigData((ClientConfig("sasl.jaas.config", "pw", "PASSWORD", False),), 1_790_000_000_000)
    plain_out, secret_out, full = policy.process_all([(CONTEXT, plain), (CONTEXT, secret), (CONTEXT, plain)])
    assert plain_out is None
    assert secret_out == violation_message([("sasl.jaas.config", "kip-sensitive-type")], redacted=True)
    assert isinstance(full, PolicyUnavailableError) and "buffer is full" in str(full)
    with pytest.raises(PolicyUnavailableError):
        policy.process(CONTEXT, plain)  # one push alone: its outcome raised, as the KIP's process() does


@pytest.mark.kafka
def test_the_publisher_masks_identity_secrets_in_batches_and_keeps_the_order(kafka_bootstrap: str,
                                                                             topic_name: Any) -> None:
    topic = topic_name("masked")
    create_topic(kafka_bootstrap, topic, partitions=1)
    token = "AKIAIOSFODNN7EXAMPLE"
    publisher = EventPublisher(kafka_bootstrap, topic, identity_key=TEST_KEY)
    offered = [Event(event="connection_opened", timestamp_ms=1_790_000_000_000 + i, connection_id=f"c-{i}",
                     client_id=token if i % 3 == 0 else f"app-{i}",
                     client_instance_id=token if i == 9 else None) for i in range(600)]
    try:
        assert publisher.wait_connected(30)
        assert all(publisher.offer(e) for e in offered)  # more than one of the worker's batches
        eventually(lambda: publisher.settled() or None)
    finally:
        publisher.close()
    events = read_events(kafka_bootstrap, topic)
    assert [e.connection_id for _, e in events] == [e.connection_id for e in offered]
    marker = mask_identity(offered[0], TEST_KEY).client_id
    assert marker is not None and marker.startswith("redacted:")
    assert [e.client_id for _, e in events] == [marker if i % 3 == 0 else f"app-{i}" for i in range(600)]
    assert events[9][0] == marker.encode() and events[10][0] == b"c-10"  # the key: the marker, not the token
    assert all(token.encode() not in (key or b"") + e.to_json().encode() for key, e in events)

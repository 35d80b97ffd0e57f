"""The fleet simulator: a reproducible realistic workload, and 500 clients through the real gateway."""

from __future__ import annotations

import json
import logging
from collections import Counter
from typing import Any

import pytest

from configwatch.contract import is_valid_software
from configwatch.records import validate_event
from configwatch.secrets import SecretStr
from policy import KafkaTopicPolicy
from policy.simulator import (
    FleetSpec,
    RunOptions,
    fleet_events,
    fleet_pushes,
    generate_fleet,
    run_direct,
    run_gateway_and_simulator,
)
from tests.gateway_helpers import TEST_KEY, create_topic, gateway_settings, read_events
from tests.kafka_helpers import read_all


def test_same_seed_same_fleet_other_seed_other_fleet() -> None:
    a, b = generate_fleet(FleetSpec(clients=60, seed=11)), generate_fleet(FleetSpec(clients=60, seed=11))
    assert a == b
    assert generate_fleet(FleetSpec(clients=60, seed=12)) != a


def test_fleet_is_realistic_and_has_the_configured_shares() -> None:
    fleet = generate_fleet(FleetSpec(clients=2000, seed=5, misconfigured_share=0.25, leaking_share=0.1))
    assert set(Counter(c.family for c in fleet)) == {"apache-kafka-java", "librdkafka", "kafka-python", "franz-go",
                                                     "sarama"}
    java = {c.kind for c in fleet if c.family == "apache-kafka-java"}
    assert java == {"producer", "consumer", "admin", "streams"}
    assert len({c.identity.software_version for c in fleet if c.family == "apache-kafka-java"}) >= 4
    assert 0.22 < sum(1 for c in fleet if c.misconfigurations) / 2000 < 0.28
    assert 0.08 < sum(1 for c in fleet if c.leaks) / 2000 < 0.12
    misconfigs = Counter(m for c in fleet for m in c.misconfigurations)
    assert {"acks0_idempotent", "heartbeat_ge_session", "typo_linger", "inflight_idempotent"} <= set(misconfigs)
    leaks = Counter(k for c in fleet for k in c.leaks)
    assert set(leaks) == {"password_in_sensitive_key", "aws_key_in_custom_key", "jwt_in_client_id"}
    typo = next(c for c in fleet if "typo_linger" in c.misconfigurations and c.family == "apache-kafka-java")
    assert "linger.msec" in {e.key for e in typo.configs} and "linger.ms" not in {e.key for e in typo.configs}
    bad = next(c for c in fleet if "acks0_idempotent" in c.misconfigurations and c.family == "apache-kafka-java")
    values = {e.key: e.value for e in bad.configs}
    assert (values["acks"], values["enable.idempotence"]) == ("0", "true")
    leaky = next(c for c in fleet if "password_in_sensitive_key" in c.leaks and c.family == "apache-kafka-java")
    jaas = {e.key: e for e in leaky.configs}["sasl.jaas.config"]
    assert jaas.type == "STRING" and 'password="' in (jaas.value or "") and not leaky.compliant
    aws = next(c for c in fleet if "aws_key_in_custom_key" in c.leaks)
    assert {e.key: e.value for e in aws.configs}["app.s3.access.key.id"].startswith("AKIA")  # type: ignore[union-attr]


def test_pushes_without_network_have_the_benchmark_shape() -> None:
    fleet = generate_fleet(FleetSpec(clients=500, seed=9))
    pushes = list(fleet_pushes(fleet))
    assert len(pushes) > 250
    assert all(24 <= len(data.configs) <= 56 for _, data in pushes)
    sizes = [data.size_bytes or 0 for _, data in pushes]
    assert min(sizes) > 500 and max(sizes) <= 10240 and 800 < sum(sizes) / len(sizes) < 2048
    events = list(fleet_events(fleet, SecretStr("bench")))
    for event in events:
        validate_event(event.to_dict())
    secrets = {v for c in fleet for v in c.redactable_values()}
    assert secrets  # the fleet does push values the KIP rules flag...
    # ...and none survives in a published config entry (identity fields, such as the request header's
    # client id, are masked downstream: udfs.rules.batch)
    dumped = "\n".join(json.dumps([c.to_dict() for c in e.configs or ()]) for e in events)
    assert not [s for s in secrets if s in dumped]
    names = {e.client_software_name for e in events if e.client_software_name}
    assert all(is_valid_software(n) for n in names)


@pytest.mark.kafka
def test_500_concurrent_clients_every_push_accounted_for(kafka_bootstrap: str, topic_name: Any,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="policy")
    caplog.set_level(logging.INFO, logger="kafka")
    topic = topic_name("fleet")
    create_topic(kafka_bootstrap, topic)
    spec = FleetSpec(clients=500, seed=21, misconfigured_share=0.3, leaking_share=0.3, oversize_share=0.02,
                     invalid_software_share=0.02, hold_ms_max=300)
    result = run_gateway_and_simulator(gateway_settings(topic, policy_buffer_size=64), kafka_bootstrap, spec=spec,
                                       options=RunOptions(concurrency=500, timeout_s=60))
    report = result.report
    assert len(report.outcomes) == 500
    assert report.count("failed") == 0 and report.count("connection_failed") == 0
    assert report.count("rejected") >= 2 and report.count("violation") >= 5 and report.count("accepted") > 100

    events = [e for _, e in read_events(kafka_bootstrap, topic)]
    published = [e for e in events if e.event == "config_push"]
    # Every attempted push is in the topic, refused by the gateway, or counted as dropped at the edge.
    assert len(published) + report.count("rejected") + result.pushes_dropped == report.attempted
    assert len(published) == result.pushes_published
    assert result.pushes_failed_to_publish == 0
    delivered = {c.identity.client_instance_id for c in generate_fleet(spec)
                 if report.outcomes[c.index] in ("accepted", "violation")}
    assert {e.client_instance_id for e in published} <= delivered
    assert len({e.client_instance_id for e in published}) == len(published)  # each push once

    opened = Counter(e.connection_id for e in events if e.event == "connection_opened")
    closed = Counter(e.connection_id for e in events if e.event == "connection_closed")
    dropped_connection_events = (result.publisher.total("dropped") - result.pushes_dropped)
    assert sum(opened.values()) + sum(closed.values()) + dropped_connection_events == (
        result.publisher.total("offered") - result.publisher.total("offered", "config_push"))

    secrets = {v for c in generate_fleet(spec) for v in c.redactable_values()}
    assert len(secrets) > 10
    raw = b"\n".join(v or b"" for _, v, _, _ in read_all(kafka_bootstrap, topic)).decode()
    logs = caplog.text
    assert not [s for s in secrets if s in raw or s in logs]
    redacted = [c for e in published for c in e.configs or () if c.redacted]
    assert redacted and all(c.value is None and c.fingerprint for c in redacted)


@pytest.mark.kafka
def test_direct_mode_goes_straight_into_the_policy(kafka_bootstrap: str, topic_name: Any) -> None:
    topic = topic_name("direct")
    create_topic(kafka_bootstrap, topic)
    fleet = generate_fleet(FleetSpec(clients=80, seed=4))
    policy = KafkaTopicPolicy()
    policy.configure({"bootstrap_servers": kafka_bootstrap, "input_topic": topic, "fingerprint_key": TEST_KEY})
    with policy:
        report = run_direct(policy, fleet, broker_id=7)
    events = [e for _, e in read_events(kafka_bootstrap, topic)]
    assert {e.event for e in events} == {"config_push"}
    assert len(events) == report.count("accepted") + report.count("violation") == report.attempted
    assert {e.broker_id for e in events} == {7}
    assert json.loads(events[0].to_json())["schema_version"] == 1

"""The KIP handshake through the real gateway into the real broker: events, errors, fallbacks."""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from configwatch.contract import CONFIG_TYPES
from configwatch.records import ConfigEntry
from configwatch.secrets import fingerprint
from policy.api import ClientConfig, ClientConfigData, ClientConfigPolicy, RequestContext
from policy.client import ClientIdentity, PushOptions, push_config
from policy.exceptions import PolicyViolationError
from policy.protocol import (
    API_VERSIONS_KEY,
    CONFIG_TOO_LARGE,
    INVALID_REQUEST,
    PUSH_CONFIG_KEY,
    UNSUPPORTED_VERSION,
    ApiVersionsRequest,
    ApiVersionsResponse,
    PushConfigRequest,
    PushConfigResponse,
    encode_request,
)
from policy.session import PushSession
from tests.conftest import eventually
from tests.gateway_helpers import (
    TEST_KEY,
    gateway,
    metric,
    raw_connect,
    read_events,
    recv_frame,
    recv_until_closed,
    roundtrip,
)
from tests.kafka_helpers import read_all

pytestmark = pytest.mark.kafka

JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required username="orders" '
        'password="Zq9-hunter2-Xy7!";')
KEY_PASSWORD = "keystore-pass-4f1d9c"


def _configs() -> list[ClientConfig]:
    return [
        ClientConfig("acks", "all", "STRING", False),
        ClientConfig("linger.ms", "20", "LONG", False),
        ClientConfig("enable.idempotence", "true", "BOOLEAN", True),
        ClientConfig("batch.size", "65536", "INT", False),
        ClientConfig("sasl.jaas.config", JAAS, "STRING", False),
        ClientConfig("ssl.key.password", KEY_PASSWORD, "PASSWORD", False),
        ClientConfig("value.serializer", "org.apache.kafka.common.serialization.StringSerializer", "CLASS", True),
        ClientConfig("bootstrap.servers", "kafka-0:9092,kafka-1:9092", "LIST", False),
    ]


def test_handshake_publishes_exactly_the_contract_events(kafka_bootstrap: str, topic_name: Any,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    topic = topic_name("handshake")
    instance = str(uuid.uuid4())
    identity = ClientIdentity("apache-kafka-java", "4.4.0", "orders-app", instance)
    with gateway(kafka_bootstrap, topic) as gw:
        # A client that skips the KIP's own filter: the gateway must protect the stream.
        result = push_config(gw.bootstrap, _configs(), identity, PushOptions(filter_sensitive=False))
        port = gw.address[1]
    assert result.status == "violation" and result.error_code == 40
    assert result.error_message is not None
    assert "sasl.jaas.config (kip-sensitive-prefix)" in result.error_message
    assert "ssl.key.password" in result.error_message and "value.serializer" in result.error_message

    events = read_events(kafka_bootstrap, topic)
    assert [e.event for _, e in events] == ["connection_opened", "config_push", "connection_closed"]
    assert {key for key, _ in events} == {instance.encode()}
    conn_ids = {e.connection_id for _, e in events}
    assert len(conn_ids) == 1
    assert re.fullmatch(rf"127\.0\.0\.1:{port}-127\.0\.0\.1:\d+-\d+", conn_ids.pop() or "")
    for _, e in events:
        assert (e.schema_version, e.broker_id, e.client_instance_id, e.client_software_name,
                e.client_software_version, e.client_id, e.principal, e.listener, e.security_protocol,
                e.client_address) == (1, 0, instance, "apache-kafka-java", "4.4.0", "orders-app",
                                      "User:ANONYMOUS", "PLAINTEXT", "PLAINTEXT", "127.0.0.1")
    opened, push, closed = (e for _, e in events)
    assert opened.configs is None and closed.configs is None
    assert opened.timestamp_ms <= push.timestamp_ms <= closed.timestamp_ms
    assert push.request_size_bytes == result.request_size_bytes
    assert push.configs == (
        ConfigEntry("acks", "all", "STRING", False),
        ConfigEntry("linger.ms", "20", "LONG", False),
        ConfigEntry("enable.idempotence", "true", "BOOLEAN", True),
        ConfigEntry("batch.size", "65536", "INT", False),
        ConfigEntry("sasl.jaas.config", None, "STRING", False, True, fingerprint(JAAS, TEST_KEY)),
        ConfigEntry("ssl.key.password", None, "PASSWORD", False, True, fingerprint(KEY_PASSWORD, TEST_KEY)),
        ConfigEntry("value.serializer", None, "CLASS", True, True,
                    fingerprint("org.apache.kafka.common.serialization.StringSerializer", TEST_KEY)),
        ConfigEntry("bootstrap.servers", "kafka-0:9092,kafka-1:9092", "LIST", False),
    )

    raw = b"".join(v or b"" for _, v, _, _ in read_all(kafka_bootstrap, topic))
    logs = caplog.text + "".join(str(r.args) for r in caplog.records)
    for secret in (JAAS, "Zq9-hunter2-Xy7!", KEY_PASSWORD):
        assert secret.encode() not in raw
        assert secret not in logs
        assert secret not in (result.error_message or "")


def test_compliant_client_withholds_sensitive_keys_and_honours_allowed_keys(
        kafka_bootstrap: str, topic_name: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="policy.client")
    topic = topic_name("compliant")
    configs = [*_configs(), ClientConfig("config.push.allowed.keys", "acks,linger.ms,sasl.jaas.config", "LIST", False)]
    with gateway(kafka_bootstrap, topic) as gw:
        allowed = push_config(gw.bootstrap, configs, ClientIdentity(client_id="a"))
        default = push_config(gw.bootstrap, _configs(), ClientIdentity(client_id="b"))
        everything_sensitive = push_config(gw.bootstrap, [ClientConfig("ssl.truststore.password", "t", "PASSWORD",
                                                                       False)], ClientIdentity(client_id="c"))
        disabled = push_config(gw.bootstrap, [*_configs(), ClientConfig("enable.config.push", "false", "BOOLEAN",
                                                                        False)], ClientIdentity(client_id="d"))
    assert allowed.status == "accepted" and allowed.sent_keys == ("acks", "linger.ms")
    assert allowed.withheld_keys == ("sasl.jaas.config",)
    assert default.status == "accepted"
    assert default.withheld_keys == ("sasl.jaas.config", "ssl.key.password", "value.serializer")
    assert everything_sensitive.status == "nothing_to_send" and everything_sensitive.attempts == 0
    assert disabled.status == "skipped"
    assert "sasl.jaas.config (kip-sensitive-prefix)" in caplog.text and JAAS not in caplog.text

    events = [e for _, e in read_events(kafka_bootstrap, topic)]
    pushes = {e.client_id: e for e in events if e.event == "config_push"}
    assert set(pushes) == {"a", "b"}
    assert [c.key for c in pushes["a"].configs or ()] == ["acks", "linger.ms"]
    assert all(not c.redacted for c in pushes["b"].configs or ())
    # enable.config.push=false skips the whole handshake: no connection at all.
    assert "d" not in {e.client_id for e in events}
    assert {e.client_id for e in events if e.event == "connection_opened"} == {"a", "b", "c"}


def test_oversize_push_gets_config_too_large_and_no_event(kafka_bootstrap: str, topic_name: Any) -> None:
    topic = topic_name("oversize")
    big = [ClientConfig(f"app.setting.{i}", "x" * 100, "STRING", False) for i in range(100)]
    with gateway(kafka_bootstrap, topic, client_config_max_bytes=4096) as gw:
        result = push_config(gw.bootstrap, big, ClientIdentity(client_id="big"))
        calls = metric(gw, "configwatch_client_config_process_calls_total")
        rejected = metric(gw, "configwatch_gateway_requests_total", api="PushConfig", outcome="config_too_large")
    assert result.status == "rejected" and result.error_code == CONFIG_TOO_LARGE
    assert result.attempts == 1  # CONFIG_TOO_LARGE is not retried
    assert result.error_message == (f"PushConfig request of {result.request_size_bytes} bytes exceeds "
                                    "client.config.max.bytes=4096")
    assert calls == 0 and rejected == 1
    assert [e.event for _, e in read_events(kafka_bootstrap, topic)] == ["connection_opened", "connection_closed"]


@pytest.mark.parametrize("name, version", [("acme kafka client", "1.0"), ("java", "4.0.0/beta"),
                                           ("-leading-dash", "1.0"), ("", "1.0")])
def test_invalid_software_name_gets_invalid_request_then_close_and_no_event(
        kafka_bootstrap: str, topic_name: Any, name: str, version: str) -> None:
    topic = topic_name("badname")
    with gateway(kafka_bootstrap, topic) as gw:
        with raw_connect(gw.address) as sock:
            payload = roundtrip(sock, ApiVersionsRequest(version=3, client_software_name=name,
                                                         client_software_version=version), 3)
            assert payload is not None
            response = ApiVersionsResponse.decode_any(payload, 3)
            assert response.error_code == INVALID_REQUEST
            assert recv_until_closed(sock) == b""  # the gateway closes after answering
        via_client = push_config(gw.bootstrap, _configs(), ClientIdentity(name, version, "bad"))
        # The client returns on reading the answer; the gateway counts the close just after writing it.
        eventually(lambda: metric(gw, "configwatch_gateway_connections_closed_total",
                                  reason="invalid_request") == 2 or None, timeout_s=10,
                   message="both connections closed as invalid_request")
    assert via_client.status == "rejected" and via_client.error_code == INVALID_REQUEST
    assert read_events(kafka_bootstrap, topic) == []


def test_unsupported_api_versions_version_gets_the_kip511_fallback_like_kafka(kafka_bootstrap: str,
                                                                              topic_name: Any) -> None:
    def fallback(address: tuple[str, int]) -> Any:
        with raw_connect(address) as sock:
            # Version 6 does not exist yet: encode v5's bytes, then claim v6 in the header.
            request = ApiVersionsRequest(version=5, client_software_name="future-client",
                                         client_software_version="9.9", client_instance_id=uuid.uuid4())
            frame = bytearray(encode_request(request, 5, 77, "future"))
            frame[6:8] = (6).to_bytes(2, "big")
            sock.sendall(bytes(frame))
            payload = recv_frame(sock)
            assert payload is not None
            return ApiVersionsResponse.decode_any(payload, 6)

    host, _, port = kafka_bootstrap.partition(":")
    real = fallback((host, int(port)))
    with gateway(kafka_bootstrap, topic_name("fallback")) as gw:
        ours = fallback(gw.address)
    for response in (real, ours):
        assert response.version == 0 and response.error_code == UNSUPPORTED_VERSION
        assert response.header.correlation_id == 77
        assert [k.api_key for k in response.api_keys] == [API_VERSIONS_KEY]
        assert response.api_keys[0].min_version == 0
    assert ours.api_keys[0].max_version == 5
    assert real.api_keys[0].max_version >= 3


def test_client_falls_back_against_the_real_broker_and_never_raises(kafka_bootstrap: str) -> None:
    # Kafka 4.3 knows ApiVersions up to v4 and no PushConfig: fallback, then "unsupported", no push.
    result = push_config(kafka_bootstrap, _configs(), ClientIdentity(client_id="real"), PushOptions(timeout_s=10))
    assert result.status == "unsupported" and result.attempts == 0
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    nobody = push_config(f"127.0.0.1:{port}", _configs(), options=PushOptions(timeout_s=1.0, retry_backoff_ms=50))
    assert nobody.status == "failed" and "ConnectionRefusedError" in (nobody.error_message or "")


def test_old_api_versions_have_no_software_fields(kafka_bootstrap: str, topic_name: Any) -> None:
    topic = topic_name("v0")
    with gateway(kafka_bootstrap, topic) as gw:
        for version in (0, 3, 4):
            result = push_config(gw.bootstrap, _configs()[:2],
                                 ClientIdentity("librdkafka", "2.6.1", f"v{version}", api_versions_version=version))
            assert result.status == "accepted"
    opened = {e.client_id: e for _, e in read_events(kafka_bootstrap, topic) if e.event == "connection_opened"}
    assert (opened["v0"].client_software_name, opened["v0"].client_instance_id) == (None, None)
    assert (opened["v3"].client_software_name, opened["v3"].client_instance_id) == ("librdkafka", None)
    assert opened["v4"].client_software_version == "2.6.1" and opened["v4"].client_instance_id is None


def test_every_config_type_id_survives_the_wire_and_unknown_ids_are_unknown(kafka_bootstrap: str,
                                                                              topic_name: Any) -> None:
    topic = topic_name("types")
    ids = [*range(10), 42, -3]
    with gateway(kafka_bootstrap, topic, redact_sensitive=False) as gw, raw_connect(gw.address) as sock:
        hello = roundtrip(sock, ApiVersionsRequest(version=3, client_software_name="raw",
                                                   client_software_version="1"), 3)
        assert hello is not None
        advertised = {k.api_key for k in ApiVersionsResponse.decode_any(hello, 3).api_keys}
        assert advertised == {API_VERSIONS_KEY, PUSH_CONFIG_KEY}
        entries = [PushConfigRequest.Config(config_key=f"k{i}", config_value=str(i), config_type=i, is_default=False)
                   for i in ids]
        answer = roundtrip(sock, PushConfigRequest(version=0, configs=entries), 0, correlation_id=2)
        assert answer is not None
        assert PushConfigResponse.decode(answer, version=0, header=True).error_code == 40  # CLASS, PASSWORD
    (push,) = [e for _, e in read_events(kafka_bootstrap, topic) if e.event == "config_push"]
    assert [c.type for c in push.configs or ()] == [*CONFIG_TYPES, "UNKNOWN", "UNKNOWN"]
    assert [c.value for c in push.configs or ()] == [str(i) for i in ids]  # redaction off: values as sent


def test_policy_disabled_advertises_no_push_and_closes_on_push(kafka_bootstrap: str, topic_name: Any) -> None:
    topic = topic_name("nopolicy")
    with gateway(kafka_bootstrap, topic, client_config_policy_class_name="none") as gw:
        result = push_config(gw.bootstrap, _configs(), ClientIdentity(client_id="np"))
        with raw_connect(gw.address) as sock:
            entries = [PushConfigRequest.Config(config_key="acks", config_value="1", config_type=2, is_default=True)]
            assert roundtrip(sock, PushConfigRequest(version=0, configs=entries), 0) is None
    assert result.status == "unsupported"
    assert [e.event for _, e in read_events(kafka_bootstrap, topic)] == ["connection_opened", "connection_closed"]


def test_throttled_push_waits_out_throttle_time_and_retries(kafka_bootstrap: str, topic_name: Any) -> None:
    topic = topic_name("throttle")
    with gateway(kafka_bootstrap, topic, gateway_push_rate_limit=2.0) as gw:
        # One client (one client id, the quota's key) pushing four times over four connections.
        results = [push_config(gw.bootstrap, _configs()[:3], ClientIdentity(client_id="t")) for _ in range(4)]
        throttled = metric(gw, "configwatch_gateway_requests_total", api="PushConfig", outcome="throttled")
    assert all(r.status == "accepted" for r in results)
    retried = [r for r in results if r.attempts > 1]
    assert retried and all(r.throttle_ms > 0 for r in retried)
    assert throttled == sum(r.attempts - 1 for r in results)
    pushes = [e for _, e in read_events(kafka_bootstrap, topic) if e.event == "config_push"]
    assert len(pushes) == 4 and len({e.connection_id for e in pushes}) == 4  # each push once, despite retries


def test_metrics_show_instances_connections_and_process_calls(kafka_bootstrap: str, topic_name: Any) -> None:
    with gateway(kafka_bootstrap, topic_name("metrics")) as gw:
        shared = str(uuid.uuid4())
        seen: dict[str, float] = {}

        async def scenario() -> None:
            # Two connections of one client instance and one of another: 2 unique ids, 3 connections.
            sessions = [await PushSession.open(gw.address, ClientIdentity("sarama", "1.46.0", client_instance_id=i))
                        for i in (shared, shared, str(uuid.uuid4()))]
            await sessions[0].push(_configs()[:2])
            seen["ids"] = metric(gw, "configwatch_client_config_client_instance_ids")
            seen["sarama"] = metric(gw, "configwatch_gateway_client_software_connections",
                                    client_software_name="sarama", client_software_version="1.46.0")
            await sessions[2].close()
            seen["after_one_close"] = float(eventually(
                lambda: metric(gw, "configwatch_client_config_client_instance_ids") == 1 or None))
            for s in sessions[:2]:
                await s.close()

        asyncio.run(scenario())
        assert seen == {"ids": 2, "sarama": 3, "after_one_close": 1}
        eventually(lambda: metric(gw, "configwatch_client_config_client_instance_ids") == 0 or None)
        assert metric(gw, "configwatch_client_config_process_calls_total") == 1
        assert metric(gw, "configwatch_client_config_process_latency_ms_count") == 1
        assert metric(gw, "configwatch_client_config_process_latency_max_ms") > 0
        assert metric(gw, "configwatch_client_config_process_errors_total") == 0


class RefusingPolicy(ClientConfigPolicy):
    """A third-party policy: refuses every push, and fails on a key named ``boom``."""

    def process(self, context: RequestContext, data: ClientConfigData) -> str | None:
        for c in data.configs:
            if c.key == "boom":
                raise RuntimeError(f"cannot handle {c.value}")  # a careless message holding a value
        raise PolicyViolationError("acks must be all in this cluster")


def test_a_custom_policy_class_by_dotted_path_refuses_and_fails_safely(
        kafka_bootstrap: str, topic_name: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="policy")
    topic = topic_name("custom")
    with gateway(kafka_bootstrap, topic,
                 client_config_policy_class_name="tests.test_gateway_handshake.RefusingPolicy") as gw:
        refused = push_config(gw.bootstrap, _configs()[:1], ClientIdentity(client_id="r"))
        failed = push_config(gw.bootstrap, [ClientConfig("boom", "value-7731", "STRING", False)],
                             ClientIdentity(client_id="f"))
        assert metric(gw, "configwatch_client_config_process_calls_total") == 2
        assert metric(gw, "configwatch_client_config_process_errors_total") == 1
    assert (refused.status, refused.error_code, refused.error_message) == (
        "violation", 40, "acks must be all in this cluster")
    assert (failed.status, failed.error_code, failed.error_message) == (
        "rejected", -1, "the client config policy failed")
    assert "ClientConfigPolicy.process_all() raised RuntimeError" in caplog.text
    assert "process_all() failed at:" in caplog.text and "test_gateway_handshake.py" in caplog.text
    assert "value-7731" not in caplog.text  # the exception's message quotes it: never logged
    events = [e.event for _, e in read_events(kafka_bootstrap, topic)]
    assert events.count("config_push") == 0 and events.count("connection_opened") == 2


def test_client_retries_network_failures_with_backoff_until_it_gets_through(kafka_bootstrap: str,
                                                                             topic_name: Any) -> None:
    topic = topic_name("retry")
    with gateway(kafka_bootstrap, topic, gateway_max_connections=1) as gw:
        blocker = raw_connect(gw.address)  # holds the only slot: the client's connections are cut at accept
        try:
            eventually(lambda: metric(gw, "configwatch_gateway_open_connections") == 1 or None)
            with ThreadPoolExecutor(1) as pool:
                future = pool.submit(push_config, gw.bootstrap, _configs()[:2], ClientIdentity(client_id="retry"),
                                     PushOptions(timeout_s=60, retry_backoff_ms=20, retry_backoff_max_ms=200))
                eventually(lambda: metric(gw, "configwatch_gateway_connections_closed_total",
                                          reason="connection_limit") >= 3 or None)
                blocker.close()  # the slot frees up; the next attempt gets through
                result = future.result(timeout=60)
        finally:
            blocker.close()
    assert result.status == "accepted" and result.attempts == 1  # one PushConfig sent, after reconnecting
    pushes = [e for _, e in read_events(kafka_bootstrap, topic) if e.event == "config_push"]
    assert [e.client_id for e in pushes] == ["retry"]

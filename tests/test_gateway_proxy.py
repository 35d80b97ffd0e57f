"""The gateway in proxy mode on the wire, against the real broker: what it forwards, answers and rewrites.

Requests are built and responses read with kafka-python's schema-driven message
classes; the broker is asked the same questions directly to know what to expect.
"""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import subprocess
import sys
import uuid
from dataclasses import replace
from typing import Any

import pytest
from kafka import KafkaProducer
from kafka.protocol.admin import DescribeClusterRequest, DescribeClusterResponse
from kafka.protocol.api_header import RequestHeader
from kafka.protocol.metadata import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    MetadataRequest,
    MetadataResponse,
)
from kafka.protocol.producer import ProduceRequest
from kafka.protocol.schemas.fields.codecs.types import Int32
from kafka.record import MemoryRecordsBuilder

from configwatch.contract import CONFIG_PUSH, CONNECTION_CLOSED, CONNECTION_OPENED
from policy.api import ClientConfig
from policy.client import ClientIdentity, push_config
from policy.gateway import running_gateway
from policy.protocol import (
    API_VERSIONS_KEY,
    PUSH_CONFIG_KEY,
    ApiVersionsRequest,
    ApiVersionsResponse,
    PushConfigRequest,
    PushConfigResponse,
    encode_request,
)
from tests.conftest import eventually, free_port
from tests.gateway_helpers import (
    create_topic,
    gateway,
    gateway_settings,
    metric,
    raw_connect,
    read_events,
    recv_frame,
    recv_until_closed,
    roundtrip,
)
from tests.kafka_helpers import read_all

pytestmark = pytest.mark.kafka

METADATA, FETCH, FIND_COORDINATOR, DESCRIBE_CLUSTER = 3, 1, 10, 60


def _address(bootstrap: str) -> tuple[str, int]:
    host, _, port = bootstrap.rpartition(":")
    return host, int(port)


def _broker_ranges(kafka_bootstrap: str) -> dict[int, tuple[int, int]]:
    """What the broker itself answers to ApiVersions v3."""
    with raw_connect(_address(kafka_bootstrap)) as sock:
        payload = roundtrip(sock, _api_versions(), 3)
    assert payload is not None
    response = ApiVersionsResponse.decode_any(payload, 3)
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


def _api_versions() -> Any:
    return ApiVersionsRequest(client_software_name="proxy-wire-test", client_software_version="1.0")


def _proxy(kafka_bootstrap: str, topic: str, **overrides: Any) -> Any:
    return gateway(kafka_bootstrap, topic, upstream=kafka_bootstrap, gateway_broker_port_base=0, **overrides)


@pytest.mark.parametrize("policy", ["policy.kafka_policy.KafkaTopicPolicy", "none"])
def test_api_versions_answers_with_the_brokers_ranges_capped_plus_push_config(kafka_bootstrap: str, topic_name: Any,
                                                                             policy: str) -> None:
    broker = _broker_ranges(kafka_bootstrap)
    with (_proxy(kafka_bootstrap, topic_name("events"), client_config_policy_class_name=policy) as gw,
          raw_connect(gw.address) as sock):
        payload = roundtrip(sock, _api_versions(), 3)
    assert payload is not None
    proxied = {k.api_key: (k.min_version, k.max_version)
               for k in ApiVersionsResponse.decode_any(payload, 3).api_keys}
    assert (PUSH_CONFIG_KEY in proxied) == (policy != "none")
    if PUSH_CONFIG_KEY in proxied:
        assert proxied.pop(PUSH_CONFIG_KEY) == (0, 0)
    assert proxied[FETCH] == (broker[FETCH][0], min(broker[FETCH][1], 15))  # v16+ names brokers in NodeEndpoints
    assert proxied[METADATA] == (broker[METADATA][0], min(broker[METADATA][1], MetadataResponse.max_version))
    assert not {78, 79} & set(proxied)  # ShareFetch/ShareAcknowledge carry endpoints the gateway cannot rewrite
    assert proxied[API_VERSIONS_KEY] == (broker[API_VERSIONS_KEY][0], 5)  # v5 is answered by the gateway
    assert proxied[17] == (1, broker[17][1])  # SaslHandshake v0's raw tokens cannot be relayed
    uncapped = {k: v for k, v in broker.items() if k not in (FETCH, METADATA, FIND_COORDINATOR, DESCRIBE_CLUSTER,
                                                            API_VERSIONS_KEY, 0, 17, 55, 78, 79)}
    assert {k: proxied[k] for k in uncapped} == uncapped
    assert len(broker) > 40  # a real broker's list, not the gateway's own two APIs


def _metadata(version: int) -> Any:
    return MetadataRequest(topics=None if version else [], allow_auto_topic_creation=False)


def _find_coordinator(version: int, group: str) -> Any:
    return FindCoordinatorRequest(key=group, key_type=0) if version < 4 else FindCoordinatorRequest(
        key_type=0, coordinator_keys=[group])


def _coordinator_endpoints(response: Any, version: int) -> list[tuple[int, str, int]] | None:
    if version < 4:
        return [(response.node_id, response.host, response.port)] if response.error_code == 0 else None
    found = [(c.node_id, c.host, c.port) for c in response.coordinators if c.error_code == 0]
    return found or None


def test_every_broker_endpoint_points_at_the_gateway_in_every_version(kafka_bootstrap: str, topic_name: Any) -> None:
    broker = _broker_ranges(kafka_bootstrap)
    broker_port = _address(kafka_bootstrap)[1]
    group = topic_name("group")
    seen: dict[tuple[str, int], set[tuple[str, int]]] = {}
    with _proxy(kafka_bootstrap, topic_name("events")) as gw, raw_connect(gw.address) as sock:
        host = gw.address[0]
        checks = [(METADATA, MetadataResponse, lambda v: _metadata(v),
                   lambda r, v: [(b.node_id, b.host, b.port) for b in r.brokers]),
                  (DESCRIBE_CLUSTER, DescribeClusterResponse, lambda v: DescribeClusterRequest(),
                   lambda r, v: [(b.broker_id, b.host, b.port) for b in r.brokers]),
                  (FIND_COORDINATOR, FindCoordinatorResponse, lambda v: _find_coordinator(v, group),
                   _coordinator_endpoints)]
        correlation = iter(range(1, 1000))
        for key, response_cls, request, endpoints in checks:
            low, high = broker[key][0], min(broker[key][1], response_cls.max_version)
            for version in range(low, high + 1):
                def ask(version: int = version, request: Any = request, endpoints: Any = endpoints,
                        response_cls: Any = response_cls) -> Any:
                    cid = next(correlation)
                    payload = roundtrip(sock, request(version), version, cid)
                    assert payload is not None
                    response = response_cls.decode(payload, version=version, header=True)
                    assert response.header.correlation_id == cid
                    return endpoints(response, version)

                found = eventually(ask, timeout_s=30, message=f"api {key} v{version} names a broker")
                seen[(response_cls.name, version)] = {(h, p) for _n, h, p in found}
        ports = gw.gateway.brokers.ports if gw.gateway.brokers else {}
    assert ports and broker_port not in ports.values()
    gateway_endpoints = {(host, p) for p in ports.values()}
    assert len(seen) >= 15, sorted(seen)
    for (name, version), addresses in seen.items():
        assert addresses == gateway_endpoints, (name, version, addresses)


def test_a_client_that_never_sends_api_versions_counts_as_unknown(kafka_bootstrap: str, topic_name: Any) -> None:
    topic = topic_name("events")
    with _proxy(kafka_bootstrap, topic) as gw, raw_connect(gw.address) as sock:
        payload = roundtrip(sock, _metadata(9), 9, 7, client_id="no-api-versions")
        assert payload is not None
        assert MetadataResponse.decode(payload, version=9, header=True).header.correlation_id == 7
        unknown = {"client_software_name": "unknown", "client_software_version": "unknown"}
        eventually(lambda: metric(gw, "configwatch_gateway_client_software_connections", **unknown) == 1 or None,
                   timeout_s=10)
    opened = [e for _k, e in read_events(kafka_bootstrap, topic) if e.event == CONNECTION_OPENED]
    assert [(e.client_software_name, e.client_software_version, e.client_id) for e in opened] == [
        (None, None, "no-api-versions")]


def _produce_acks0(topic: str) -> Any:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1024)
    builder.append(timestamp=None, key=b"k", value=b"acks-zero", headers=[])
    builder.close()
    data = ProduceRequest.TopicProduceData(name=topic, partition_data=[
        ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=builder.buffer())])
    return ProduceRequest(transactional_id=None, acks=0, timeout_ms=5000, topic_data=[data])


def test_pipelined_requests_are_answered_in_order_whoever_answers(kafka_bootstrap: str, topic_name: Any) -> None:
    """ApiVersions (forwarded), acks=0 Produce (no answer), Metadata (forwarded, rewritten), PushConfig (the
    gateway's), Metadata again: one write, four responses, in request order."""
    events, data = topic_name("events"), topic_name("data")
    create_topic(kafka_bootstrap, data, partitions=1)
    push = PushConfigRequest(configs=[PushConfigRequest.Config(config_key="acks", config_value="all", config_type=2,
                                                               is_default=False)])
    frames = [encode_request(ApiVersionsRequest(client_software_name="pipeline", client_software_version="1.0",
                                                client_instance_id=uuid.uuid4()), 5, 1, "pipe"),
              encode_request(_produce_acks0(data), 9, 2, "pipe"),
              encode_request(_metadata(12), 12, 3, "pipe"),
              encode_request(push, 0, 4, "pipe"),
              encode_request(_metadata(4), 4, 5, "pipe")]
    with _proxy(kafka_bootstrap, events) as gw, raw_connect(gw.address) as sock:
        sock.sendall(b"".join(frames))
        responses = [recv_frame(sock) for _ in range(4)]
    assert all(r is not None for r in responses)
    api_versions = ApiVersionsResponse.decode_any(responses[0], 5)
    assert api_versions.header.correlation_id == 1 and api_versions.error_code == 0
    assert {k.api_key for k in api_versions.api_keys} >= {API_VERSIONS_KEY, METADATA, PUSH_CONFIG_KEY}
    assert MetadataResponse.decode(responses[1], version=12, header=True).header.correlation_id == 3
    pushed = PushConfigResponse.decode(responses[2], version=0, header=True)
    assert (pushed.header.correlation_id, pushed.error_code) == (4, 0)
    assert MetadataResponse.decode(responses[3], version=4, header=True).header.correlation_id == 5
    assert [v for _k, v, _p, _o in eventually(lambda: read_all(kafka_bootstrap, data), timeout_s=30)] == [
        b"acks-zero"]


def test_push_config_is_answered_by_the_gateway_and_v5_identity_is_kept(kafka_bootstrap: str,
                                                                        topic_name: Any) -> None:
    topic = topic_name("events")
    instance = str(uuid.uuid4())
    with _proxy(kafka_bootstrap, topic) as gw:
        result = push_config(gw.bootstrap, [ClientConfig("linger.ms", "5", "LONG", False)],
                             ClientIdentity("apache-kafka-java", "4.4.0", "proxy-push", instance))
    assert result.status == "accepted", result
    events = [e for _k, e in read_events(kafka_bootstrap, topic)]
    assert [e.event for e in events if e.event == CONFIG_PUSH] == [CONFIG_PUSH]
    opened = [e for e in events if e.event == CONNECTION_OPENED]
    assert [(e.client_software_name, e.client_software_version, e.client_instance_id) for e in opened] == [
        ("apache-kafka-java", "4.4.0", instance)]


def test_an_unreachable_upstream_closes_clients_and_the_gateway_stays_up(kafka_bootstrap: str,
                                                                         topic_name: Any) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]  # nothing listens here once the probe is closed
    with gateway(kafka_bootstrap, topic_name("events"), upstream=f"127.0.0.1:{dead}",
                 gateway_broker_port_base=0) as gw:
        for attempt in (1, 2):
            with raw_connect(gw.address) as sock:
                sock.sendall(encode_request(_api_versions(), 3, 1, "dead-upstream"))
                assert recv_until_closed(sock) == b""
            eventually(lambda n=attempt: metric(gw, "configwatch_gateway_connections_closed_total",
                                                reason="upstream_unreachable") == n or None, timeout_s=15)


def test_configwatch_gateway_upstream_proxies_a_real_client(kafka_bootstrap: str, topic_name: Any) -> None:
    events, data = topic_name("events"), topic_name("cli-data")
    create_topic(kafka_bootstrap, events)
    env = {**os.environ, "CONFIGWATCH_FINGERPRINT_KEY": "proxy-cli-test-key"}
    cli = [sys.executable, "-m", "cli.main"]
    proc = subprocess.Popen([*cli, "gateway", "--bootstrap-servers", kafka_bootstrap, "--input-topic", events,
                             "--upstream", kafka_bootstrap, "--gateway-port", "0", "--gateway-metrics-port", "-1",
                             "--gateway-broker-port-base", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)  # the ready line, or EOF if it exited
        line = proc.stdout.readline() if ready else ""
        match = re.search(r"gateway listening on (\S+) \(PushConfig advertised\).*; proxying to (\S+)$", line)
        assert match and match.group(2) == kafka_bootstrap, (line, proc.poll())
        producer = KafkaProducer(bootstrap_servers=match.group(1), client_id="proxy-cli", acks="all")
        producer.send(data, value=b"through-the-cli").get(timeout=60)
        producer.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]
    assert [v for _k, v, _p, _o in read_all(kafka_bootstrap, data)] == [b"through-the-cli"]
    opened = [e for _k, e in read_events(kafka_bootstrap, events) if e.event == CONNECTION_OPENED]
    assert {(e.client_software_name, e.client_id) for e in opened} == {("kafka-python", "proxy-cli")}
    bad = subprocess.run([*cli, "gateway", "--upstream", "kafka-0"], capture_output=True, text=True, env=env,
                         timeout=60, check=False)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "configwatch gateway: error: --upstream: 'kafka-0' is not HOST:PORT (a port 1-65535)"]
    # Security settings that cannot work: one line each, naming the flag (tests/test_gateway_security_units.py
    # has every case; these go through the CLI).
    for flags, says in (
            (["--upstream", "SASL_SSL://kafka-0:9093"], "--gateway-security-protocol PLAINTEXT with a SASL_SSL"),
            (["--upstream", "kafka-0:9093", "--upstream-security-protocol", "SSL", "--upstream-ssl-cafile",
              "/nonexistent/ca.pem"], "--upstream-ssl-cafile /nonexistent/ca.pem: no such file"),
            (["--upstream", "kafka-0:9093", "--gateway-security-protocol", "SSL"],
             "--gateway-security-protocol SSL needs --gateway-ssl-certfile")):
        refused = subprocess.run([*cli, "gateway", *flags], capture_output=True, text=True, env=env, timeout=60,
                                 check=False)
        assert refused.returncode == 2
        line, = refused.stderr.strip().splitlines()
        assert line.startswith(f"configwatch gateway: error: {says}"), line


def test_clients_reconnect_after_a_gateway_restart(kafka_bootstrap: str, topic_name: Any) -> None:
    """Broker listeners start with the gateway, so a client holding cached broker addresses reconnects."""
    events, data = topic_name("events"), topic_name("restart-data")
    create_topic(kafka_bootstrap, events)
    port, broker_port = free_port(), free_port()
    settings = replace(gateway_settings(events), upstream=kafka_bootstrap, gateway_port=port,
                       gateway_broker_port_base=broker_port - 1)  # the test broker's node id is 1
    producer = None
    try:
        with running_gateway(settings, kafka_bootstrap) as gw:
            assert gw.gateway.brokers is not None and gw.gateway.brokers.ports == {1: broker_port}
            producer = KafkaProducer(bootstrap_servers=gw.bootstrap, client_id="restart", acks="all")
            producer.send(data, value=b"before").get(timeout=60)
        with running_gateway(settings, kafka_bootstrap):
            producer.send(data, value=b"after").get(timeout=60)
    finally:
        if producer is not None:
            producer.close()
    assert sorted(v for _k, v, _p, _o in read_all(kafka_bootstrap, data)) == [b"after", b"before"]
    opened = [e for _k, e in read_events(kafka_bootstrap, events) if e.event == CONNECTION_OPENED]
    assert len(opened) >= 2 and {e.client_software_name for e in opened} == {"kafka-python"}


def test_when_the_broker_closes_the_client_is_closed_and_the_close_published(kafka_bootstrap: str,
                                                                             topic_name: Any) -> None:
    """Kafka closes a connection that sends a request version it does not know; the gateway follows."""
    topic = topic_name("events")
    with _proxy(kafka_bootstrap, topic) as gw, raw_connect(gw.address) as sock:
        assert roundtrip(sock, _api_versions(), 3, 1, client_id="closed-by-broker") is not None
        # Metadata "v99": no broker serves it. A v1 body behind a header naming version 99.
        header = RequestHeader(request_api_key=METADATA, request_api_version=99, correlation_id=2,
                               client_id="closed-by-broker").encode(flexible=False)
        payload = bytes(header) + bytes(MetadataRequest(topics=[]).encode(version=1))
        sock.sendall(bytes(Int32.encode(len(payload))) + payload)
        assert recv_until_closed(sock) == b""
        eventually(lambda: metric(gw, "configwatch_gateway_connections_closed_total",
                                  reason="upstream_closed") == 1 or None, timeout_s=15)
    events = [e for _k, e in read_events(kafka_bootstrap, topic)]
    assert [(e.event, e.client_software_name) for e in events] == [
        (CONNECTION_OPENED, "proxy-wire-test"), (CONNECTION_CLOSED, "proxy-wire-test")]

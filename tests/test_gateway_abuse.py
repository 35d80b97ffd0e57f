"""The gateway under the security probe of issue 14: honest answers, bounded input, quotas per client."""

from __future__ import annotations

import re
import select
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from configwatch.localkafka import LocalKafka
from policy.api import ClientConfig
from policy.client import ClientIdentity, PushOptions, push_config
from policy.gateway import GatewayHandle, service
from policy.gateway.apis import CLIENT_ID_MAX_CHARS, MAX_PUSH_ENTRIES
from policy.gateway.metrics import MAX_SOFTWARE_SERIES, OTHER, bounded_series
from policy.gateway.service import running_gateway
from policy.protocol import (
    CONFIG_TOO_LARGE,
    INVALID_CONFIG,
    INVALID_REQUEST,
    NONE,
    THROTTLING_QUOTA_EXCEEDED,
    ApiVersionsRequest,
    ApiVersionsResponse,
    PushConfigRequest,
    PushConfigResponse,
    encode_request,
)
from tests.conftest import eventually, free_port
from tests.gateway_helpers import (
    gateway,
    gateway_settings,
    health,
    metric,
    raw_connect,
    read_events,
    recv_until_closed,
    roundtrip,
)

pytestmark = pytest.mark.kafka

CONFIGS = [ClientConfig("acks", "all", "STRING", False), ClientConfig("linger.ms", "5", "LONG", True)]


def _hello(sock: socket.socket, name: str = "probe", version: str = "1.0", client_id: str = "probe") -> int:
    answer = roundtrip(sock, ApiVersionsRequest(version=3, client_software_name=name, client_software_version=version),
                       3, client_id=client_id)
    assert answer is not None
    return int(ApiVersionsResponse.decode_any(answer, 3).error_code)


def _push(sock: socket.socket, entries: int = 1, correlation_id: int = 2, empty: bool = False,
          client_id: str = "probe") -> PushConfigResponse:
    configs = [PushConfigRequest.Config(config_key="" if empty else f"k{i}", config_value="", config_type=2,
                                        is_default=True) for i in range(entries)]
    answer = roundtrip(sock, PushConfigRequest(version=0, configs=configs), 0, correlation_id=correlation_id,
                       client_id=client_id)
    assert answer is not None
    return PushConfigResponse.decode(answer, version=0, header=True)


def test_row1_pushes_get_a_retriable_error_while_kafka_is_unreachable(topic_name: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service, "PUBLISHER_CONNECT_WAIT_S", 0.5)
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{probe.getsockname()[1]}"
    with running_gateway(gateway_settings(topic_name("dead")), dead) as gw:
        result = push_config(gw.bootstrap, CONFIGS, ClientIdentity(client_id="unlucky"),
                             PushOptions(timeout_s=3, retry_backoff_ms=50, retry_backoff_max_ms=200))
        assert result.status == "failed" and not result.delivered, result  # retried, never "accepted"
        assert result.attempts >= 2 and result.throttle_ms >= 1000
        assert metric(gw, "configwatch_gateway_requests_total", api="PushConfig", outcome="unavailable") >= 2
        assert metric(gw, "configwatch_gateway_requests_total", api="PushConfig", outcome="ok") == 0
        assert metric(gw, "configwatch_publisher_connected") == 0
        status, doc = health(gw)
        assert status == 503 and doc["status"] == "unavailable" and "not connected" in doc["reason"], doc
        with raw_connect(gw.address) as sock:  # a normal client's handshake is still answered
            assert _hello(sock) == NONE


def test_row1_a_broker_outage_is_reported_and_pushes_are_accepted_again_after_it(topic_name: Any,
                                                                                  tmp_path: Path) -> None:
    broker = LocalKafka(tmp_path / "events-kafka", port=free_port(), heap="512m")
    bootstrap = broker.start().bootstrap_servers
    topic = topic_name("outage")
    options = PushOptions(timeout_s=3, retry_backoff_ms=50, retry_backoff_max_ms=200)
    try:
        with gateway(bootstrap, topic) as gw:
            assert push_config(gw.bootstrap, CONFIGS, ClientIdentity(client_id="before")).status == "accepted"
            assert health(gw)[0] == 200 and health(gw)[1]["publisher"]["connected"] is True

            # Idle first: the "before" connection's events all acknowledged, so the outage below is
            # noticed as a lost connection, not as an event in flight that Kafka never acknowledged.
            eventually(lambda: _all_acknowledged(gw) or None, timeout_s=30, message="the push's events acknowledged")
            broker.stop()  # noticed while idle: nothing is being published now
            eventually(lambda: health(gw)[0] == 503 or None, timeout_s=30, message="the outage on /healthz")
            assert "no connection to Kafka" in health(gw)[1]["reason"]
            assert metric(gw, "configwatch_publisher_connected") == 0
            during = push_config(gw.bootstrap, CONFIGS, ClientIdentity(client_id="during"), options)
            assert during.status == "failed" and not during.delivered and during.throttle_ms >= 1000, during
            with raw_connect(gw.address) as sock:  # handshakes are served (their events wait in the buffer)
                assert _hello(sock, client_id="handshake-during") == NONE
            held = eventually(lambda: health(gw)[1]["publisher"] if health(gw)[1]["publisher"]["buffered"] >= 2
                              else None, timeout_s=30, message="the handshake's events held in the buffer")
            assert held["failed"] == 0, held  # waiting for Kafka, not failed in the producer

            broker.start()
            eventually(lambda: health(gw)[0] == 200 or None, timeout_s=60, message="recovery on /healthz")
            assert metric(gw, "configwatch_publisher_connected") == 1
            assert push_config(gw.bootstrap, CONFIGS, ClientIdentity(client_id="after")).status == "accepted"
        events = [e for _, e in read_events(bootstrap, topic)]
    finally:
        broker.stop()
    pushes = [e.client_id for e in events if e.event == "config_push"]
    assert sorted(pushes) == ["after", "before"]  # the refused push was never published; nothing accepted was lost
    assert {e.event for e in events if e.client_id == "handshake-during"} == {"connection_opened",
                                                                           "connection_closed"}


def _all_acknowledged(gw: GatewayHandle) -> bool:
    """Every connection the gateway saw has closed, and all their events are acknowledged by Kafka."""
    opened, closed = (metric(gw, "configwatch_publisher_events", event=e, outcome="published")
                      for e in ("connection_opened", "connection_closed"))
    publisher = health(gw)[1]["publisher"]
    return (opened >= 1 and closed == opened and publisher["buffered"] == 0
            and publisher["oldest_unacked_age_seconds"] == 0)


def test_row2_the_publish_buffer_is_bounded_by_bytes(topic_name: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service, "PUBLISHER_CONNECT_WAIT_S", 0.5)
    with socket.socket() as probe:  # Kafka unreachable: every event stays buffered
        probe.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{probe.getsockname()[1]}"
    budget = 20_000
    with running_gateway(gateway_settings(topic_name("bytes"), policy_buffer_bytes=budget), dead) as gw:
        for n in range(60):  # each connection buffers a connection_opened and, on close, a connection_closed
            with raw_connect(gw.address) as sock:
                assert _hello(sock, "n" * 128, "1.0", client_id=f"c{n}") == NONE
        assert metric(gw, "configwatch_publisher_buffered_bytes") <= budget
        assert metric(gw, "configwatch_publisher_events", event="connection_opened", outcome="dropped") > 0
        with raw_connect(gw.address) as sock:  # a normal client is still served
            assert _hello(sock) == NONE


def test_row1_publisher_health_is_on_metrics_when_connected(kafka_bootstrap: str, topic_name: Any) -> None:
    with gateway(kafka_bootstrap, topic_name("health")) as gw:
        assert push_config(gw.bootstrap, CONFIGS, ClientIdentity(client_id="fine")).status == "accepted"
        assert metric(gw, "configwatch_publisher_connected") == 1
        eventually(lambda: metric(gw, "configwatch_publisher_oldest_unacked_age_seconds") == 0 or None,
                   timeout_s=20, message="every published event acknowledged")


@pytest.mark.parametrize(("name", "version"), [("kafka\n", "1.0"), ("kafka", "1.0\n"),
                                               ("k" * 1_000_000, "1.0"), ("kafka", "1" * 129)])
def test_rows4_and_7_software_names_fullmatch_the_pattern_within_a_length(kafka_bootstrap: str, topic_name: Any,
                                                                          name: str, version: str) -> None:
    topic = topic_name("names")
    with gateway(kafka_bootstrap, topic, gateway_max_frame_bytes=2 * 1024 * 1024) as gw:
        with raw_connect(gw.address) as sock, raw_connect(gw.address) as bystander:
            assert _hello(sock, name, version) == INVALID_REQUEST
            assert _hello(bystander, "kafka", "1.0") == NONE  # a normal client is served during
            assert recv_until_closed(sock) == b""
        with raw_connect(gw.address) as after:
            assert _hello(after, "kafka", "1.0") == NONE  # and after
    assert [e.client_software_name for _, e in read_events(kafka_bootstrap, topic)] == ["kafka"] * 4


def test_row4_long_client_ids_and_too_many_entries_are_refused(kafka_bootstrap: str, topic_name: Any) -> None:
    with gateway(kafka_bootstrap, topic_name("caps")) as gw:
        with raw_connect(gw.address) as sock:
            sock.sendall(encode_request(ApiVersionsRequest(version=0), 0, 1, "c" * (CLIENT_ID_MAX_CHARS + 1)))
            assert recv_until_closed(sock) == b""
        assert metric(gw, "configwatch_gateway_connections_closed_total", reason="client_id_too_long") == 1
        with raw_connect(gw.address) as sock:
            assert _hello(sock) == NONE
            answer = _push(sock, entries=MAX_PUSH_ENTRIES + 900, empty=True)  # 1,900 empty entries: 9.5 KB
            assert answer.error_code == CONFIG_TOO_LARGE and "entries" in answer.error_message
            assert _push(sock, entries=3, correlation_id=3).error_code in (NONE, INVALID_CONFIG)  # recorded


def test_row4_metric_series_are_bounded() -> None:
    counts = {(f"client-{i}", "1.0"): 1 + i % 7 for i in range(MAX_SOFTWARE_SERIES * 3)}
    series = bounded_series(counts)
    assert len(series) == MAX_SOFTWARE_SERIES
    assert sum(n for _, n in series) == sum(counts.values())
    assert series[-1][0] == (OTHER, OTHER)
    small = {("a", "1"): 2, ("b", "2"): 1}
    assert bounded_series(small) == sorted(small.items())


def test_row6_quotas_are_per_client_and_a_throttled_channel_is_muted(kafka_bootstrap: str, topic_name: Any) -> None:
    with gateway(kafka_bootstrap, topic_name("quota"), gateway_push_rate_limit=5) as gw:
        with raw_connect(gw.address) as noisy:
            assert _hello(noisy, client_id="noisy") == NONE
            codes = [_push(noisy, correlation_id=10 + i, client_id="noisy").error_code for i in range(8)]
            assert THROTTLING_QUOTA_EXCEEDED in codes
            # A throttled answer comes at once; the next one only after the throttle time (the channel is muted).
            while (first := _push(noisy, correlation_id=30, client_id="noisy")).error_code != \
                    THROTTLING_QUOTA_EXCEEDED:
                pass
            started = time.monotonic()
            _push(noisy, correlation_id=31, client_id="noisy")
            assert time.monotonic() - started >= first.throttle_time_ms / 1000.0 * 0.9
            polite = [push_config(gw.bootstrap, CONFIGS, ClientIdentity(client_id=f"polite-{i}")) for i in range(6)]
        assert [p.status for p in polite] == ["accepted"] * 6
        assert all(p.throttle_ms == 0 for p in polite), [p.throttle_ms for p in polite]


def test_row8_a_second_identity_on_one_connection_is_refused(kafka_bootstrap: str, topic_name: Any) -> None:
    topic = topic_name("identity")
    with gateway(kafka_bootstrap, topic) as gw:
        with raw_connect(gw.address) as sock:
            assert _hello(sock, "first-client", "1.0") == NONE
            assert _hello(sock, "first-client", "1.0") == NONE  # the same identity again is fine
            assert _hello(sock, "other-client", "9.9") == INVALID_REQUEST
            assert recv_until_closed(sock) == b""
        assert metric(gw, "configwatch_gateway_connections_closed_total", reason="identity_changed") == 1
        assert push_config(gw.bootstrap, CONFIGS, ClientIdentity(client_id="normal")).status == "accepted"
    events = [e for _, e in read_events(kafka_bootstrap, topic)]
    assert [(e.event, e.client_software_name) for e in events if e.client_id != "normal"] == [
        ("connection_opened", "first-client"), ("connection_closed", "first-client")]


def test_row8_a_push_under_another_client_id_closes_the_connection(kafka_bootstrap: str, topic_name: Any) -> None:
    topic = topic_name("clientid")
    with gateway(kafka_bootstrap, topic) as gw:
        with raw_connect(gw.address) as sock:
            assert _hello(sock, "first-client", "1.0", client_id="a") == NONE
            push = PushConfigRequest(version=0, configs=[PushConfigRequest.Config(
                config_key="acks", config_value="all", config_type=2, is_default=False)])
            assert roundtrip(sock, push, 0, correlation_id=2, client_id="") is not None  # empty: no change
            # The same connection, another client id: no fresh identity, no fresh quota bucket, closed.
            sock.sendall(encode_request(push, 0, 3, "b"))
            assert recv_until_closed(sock) == b""
        assert metric(gw, "configwatch_gateway_connections_closed_total", reason="identity_changed") == 1
        assert metric(gw, "configwatch_gateway_requests_total", api="PushConfig", outcome="identity_changed") == 1
        assert push_config(gw.bootstrap, CONFIGS, ClientIdentity(client_id="normal")).status == "accepted"
    events = [e for _, e in read_events(kafka_bootstrap, topic)]
    assert [(e.event, e.client_id) for e in events if e.client_software_name == "first-client"] == [
        ("connection_opened", "a"), ("config_push", "a"), ("connection_closed", "a")]
    assert not [e for e in events if e.client_id == "b"]
    assert ("config_push", "normal") in [(e.event, e.client_id) for e in events]


def test_row10_a_client_that_never_reads_is_closed_as_a_write_timeout(kafka_bootstrap: str, topic_name: Any) -> None:
    with gateway(kafka_bootstrap, topic_name("noread"), gateway_frame_timeout_s=1.0) as gw:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(gw.address)
        sock.settimeout(0.5)
        request = encode_request(ApiVersionsRequest(version=0), 0, 1, "never-reads")
        try:
            sock.sendall(request * 50)
            with raw_connect(gw.address) as other:  # while the flood is on: another client is served
                served_during = _hello(other) == NONE
            # Requests until the gateway's responses fill both socket buffers and its write times out. A send
            # that times out part way resumes where it stopped: a restarted frame would be a bad request.
            # The metric is read at most every half second: a scrape costs the gateway's process CPU.
            deadline = time.monotonic() + 120
            pending, next_check = b"", 0.0
            while time.monotonic() < deadline:
                if time.monotonic() >= next_check:
                    if metric(gw, "configwatch_gateway_connections_closed_total", reason="write_timeout"):
                        break
                    next_check = time.monotonic() + 0.5
                pending = pending or request * 500
                try:
                    pending = pending[sock.send(pending):]
                except TimeoutError:
                    select.select([], [sock], [], 0.2)  # our send buffer is full too: until it drains, or 0.2 s
                except OSError:
                    break  # closed: the metrics below say why
        finally:
            sock.close()
        closed = {r: metric(gw, "configwatch_gateway_connections_closed_total", reason=r)
                  for r in ("write_timeout", "bad_request", "frame_timeout", "frame_too_large", "reset")}
        assert closed["write_timeout"] == 1, closed
        assert metric(gw, "configwatch_gateway_connections_closed_total", reason="idle_timeout") == 0
        assert served_during
        with raw_connect(gw.address) as other:
            assert _hello(other) == NONE


def _kernel_buffers(local_port: int, peer_port: int) -> tuple[int, int]:
    """(send, receive) buffer bytes the kernel gives the socket local_port -> peer_port, from ``ss -m``."""
    selector = f"( sport = :{local_port} and dport = :{peer_port} )"
    shown = subprocess.run(["ss", "-tmnH", "state", "established", selector], capture_output=True, text=True,
                           check=True).stdout
    tb, rb = re.search(r"\btb(\d+)", shown), re.search(r"\brb(\d+)", shown)
    assert tb and rb, shown
    return int(tb.group(1)), int(rb.group(1))


def test_each_client_connection_gets_the_configured_socket_buffers(kafka_bootstrap: str, topic_name: Any) -> None:
    # As a broker's socket.send/receive.buffer.bytes; Linux doubles what SO_SNDBUF/SO_RCVBUF ask for.
    with gateway(kafka_bootstrap, topic_name("bufs"), gateway_socket_send_buffer_bytes=65536,
                 gateway_socket_receive_buffer_bytes=32768) as gw, raw_connect(gw.address) as sock:
        assert _hello(sock) == NONE  # served, so accepted and sized
        assert _kernel_buffers(gw.address[1], sock.getsockname()[1]) == (2 * 65536, 2 * 32768)


def test_unfinished_large_frames_stay_within_the_gateway_wide_budget(kafka_bootstrap: str, topic_name: Any) -> None:
    budget = 4 * 1024 * 1024
    with gateway(kafka_bootstrap, topic_name("frames"), gateway_max_queued_request_bytes=budget) as gw:
        attackers = [raw_connect(gw.address) for _ in range(12)]
        try:
            for sock in attackers:  # a 1,000,000-byte frame announced, half of it sent, never finished
                sock.sendall((1_000_000).to_bytes(4, "big") + b"\0" * 500_000)
            eventually(lambda: metric(gw, "configwatch_gateway_queued_request_bytes") >= 4_000_000 or None,
                       timeout_s=30, message="four frames reading")
            assert metric(gw, "configwatch_gateway_queued_request_bytes") <= budget  # the other eight wait
            with raw_connect(gw.address) as normal:  # small frames never wait for the budget
                assert _hello(normal) == NONE
                assert _push(normal).error_code in (NONE, INVALID_CONFIG)  # answered (k0 is a custom key)
        finally:
            for sock in attackers:
                sock.close()
        eventually(lambda: metric(gw, "configwatch_gateway_queued_request_bytes") == 0 or None, timeout_s=30,
                   message="every reservation given back")
        assert push_config(gw.bootstrap, CONFIGS, ClientIdentity(client_id="after")).status == "accepted"

"""Hostile input on real sockets: the gateway ends the offending connection and keeps serving the rest."""

from __future__ import annotations

import random
import socket
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from kafka.protocol.metadata import MetadataRequest

from policy.api import ClientConfig
from policy.client import ClientIdentity, PushOptions, push_config
from policy.gateway import GatewayHandle
from policy.protocol import ApiVersionsRequest, encode_request
from tests.conftest import eventually
from tests.gateway_helpers import gateway, metric, raw_connect, recv_until_closed, roundtrip

pytestmark = pytest.mark.kafka

CONFIGS = [ClientConfig("acks", "all", "STRING", False), ClientConfig("linger.ms", "5", "LONG", True)]


@pytest.fixture
def hostile_gateway(kafka_bootstrap: str, topic_name: Any) -> Iterator[GatewayHandle]:
    with gateway(kafka_bootstrap, topic_name("hostile"), gateway_max_frame_bytes=64 * 1024,
                 gateway_frame_timeout_s=1.0, gateway_idle_timeout_s=60.0, gateway_max_connections=1500) as gw:
        yield gw


def _still_serves(gw: GatewayHandle, client_id: str) -> None:
    result = push_config(gw.bootstrap, CONFIGS, ClientIdentity(client_id=client_id), PushOptions(timeout_s=20))
    assert result.status == "accepted", result


def _header_only_request(api_key: int, version: int) -> bytes:
    # A frame whose header names an API; built from a real request so only the key/version differ.
    frame = bytearray(encode_request(ApiVersionsRequest(version=0), 0, 9, "hostile"))
    frame[4:6] = api_key.to_bytes(2, "big", signed=True)
    frame[6:8] = version.to_bytes(2, "big", signed=True)
    return bytes(frame)


_NOISE = random.Random(511).randbytes(200)

# name: (bytes sent, then EOF?, the close reasons it may be counted under)
HOSTILE: dict[str, tuple[bytes, bool, tuple[str, ...]]] = {
    "http_request": (b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", False, ("frame_too_large",)),
    "negative_length": (b"\xff\xff\xff\xf0" + b"\x00" * 16, False, ("frame_too_large",)),
    "zero_length": (b"\x00\x00\x00\x00", False, ("frame_too_large",)),
    "over_limit": ((64 * 1024 + 1).to_bytes(4, "big") + b"\x00" * 32, False, ("frame_too_large",)),
    "random_body": ((200).to_bytes(4, "big") + _NOISE, False, ("bad_request", "unknown_api")),
    "undecodable_header": ((6).to_bytes(4, "big") + b"\x00\x12\x00\x03\xff\xff", False, ("bad_request",)),
    "cut_by_eof": ((12).to_bytes(4, "big") + b"\x00\x12\x00\x03\xff", True, ("truncated_frame",)),
    "unknown_api_key": (_header_only_request(4242, 0), False, ("unknown_api",)),
    "negative_api_key": (_header_only_request(-7, 0), False, ("unknown_api",)),
    "push_config_v9": (_header_only_request(1000, 9), False, ("unsupported_version",)),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_frame_closes_only_that_connection(hostile_gateway: GatewayHandle, case: str) -> None:
    gw = hostile_gateway
    payload, then_eof, reasons = HOSTILE[case]
    with raw_connect(gw.address) as bystander, raw_connect(gw.address) as attacker:
        hello = ApiVersionsRequest(version=3, client_software_name="bystander", client_software_version="1.0")
        assert roundtrip(bystander, hello, 3) is not None  # registered before the attack
        attacker.sendall(payload)
        if then_eof:
            attacker.shutdown(socket.SHUT_WR)
        assert recv_until_closed(attacker) == b""
        _still_serves(gw, f"after-{case}")
        again = roundtrip(bystander, ApiVersionsRequest(version=0), 0, correlation_id=2)
        assert again is not None, "the bystander's connection must survive the attack"
    assert sum(metric(gw, "configwatch_gateway_connections_closed_total", reason=r) for r in reasons) == 1
    eventually(lambda: metric(gw, "configwatch_gateway_open_connections") == 0 or None, timeout_s=10)
    assert metric(gw, "configwatch_client_config_process_errors_total") == 0


def test_truncated_frame_times_out_without_blocking_others(hostile_gateway: GatewayHandle) -> None:
    gw = hostile_gateway
    with raw_connect(gw.address) as slow:
        frame = encode_request(ApiVersionsRequest(version=0), 0, 1, "slow")
        slow.sendall(frame[:-3])  # the last bytes never come
        _still_serves(gw, "while-truncated")
        assert recv_until_closed(slow) == b""  # closed by the 1 s frame timeout
    assert metric(gw, "configwatch_gateway_connections_closed_total", reason="frame_timeout") == 1


def test_real_kafka_request_for_an_api_we_do_not_serve_is_refused(hostile_gateway: GatewayHandle) -> None:
    gw = hostile_gateway
    with raw_connect(gw.address) as sock:
        request = MetadataRequest[0](topics=["t"])  # kafka-python's own Metadata v0 request
        request.with_header(correlation_id=3, client_id="kp")
        sock.sendall(bytes(request.encode(header=True, framed=True)))
        assert recv_until_closed(sock) == b""
    assert metric(gw, "configwatch_gateway_requests_total", api="3", outcome="unknown_api") == 1


def test_thousand_idle_connections_do_not_stop_service(hostile_gateway: GatewayHandle) -> None:
    gw = hostile_gateway
    with ExitStack() as stack:
        idle = [stack.enter_context(socket.create_connection(gw.address, timeout=30)) for _ in range(1000)]
        eventually(lambda: metric(gw, "configwatch_gateway_open_connections") >= 1000 or None, timeout_s=60)
        _still_serves(gw, "among-idle")
        assert len(idle) == 1000
    eventually(lambda: metric(gw, "configwatch_gateway_open_connections") == 0 or None, timeout_s=60)
    assert metric(gw, "configwatch_gateway_connections_closed_total", reason="eof") >= 1000
    # Idle connections never sent ApiVersions: they are not registered and publish nothing.
    assert gw.publisher.stats().offered == {"connection_opened": 1, "config_push": 1, "connection_closed": 1}


def test_connection_limit_and_idle_timeout(kafka_bootstrap: str, topic_name: Any) -> None:
    with gateway(kafka_bootstrap, topic_name("limits"), gateway_max_connections=3,
                 gateway_idle_timeout_s=1.0) as gw:
        held = [raw_connect(gw.address) for _ in range(3)]
        try:
            eventually(lambda: metric(gw, "configwatch_gateway_open_connections") == 3 or None)
            with raw_connect(gw.address) as refused:
                assert recv_until_closed(refused) == b""
            assert metric(gw, "configwatch_gateway_connections_closed_total", reason="connection_limit") == 1
            for sock in held:  # idle for more than 1 s: the gateway closes them
                assert recv_until_closed(sock) == b""
        finally:
            for sock in held:
                sock.close()
        assert metric(gw, "configwatch_gateway_connections_closed_total", reason="idle_timeout") == 3
        _still_serves(gw, "after-limits")

"""The dashboard's and the gateway's HTTP under the probe of issue 14: deadlines, caps, limits, headers."""

from __future__ import annotations

import logging
import socket
import struct
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from configwatch.httpserver import SECURITY_HEADERS
from configwatch.secrets import SecretStr
from policy.gateway import GatewayHandle
from sinks.dashboard.service import DashboardService
from sinks.dashboard.state import Topics
from tests.conftest import eventually
from tests.dashboard_helpers import create_topics, dashboard
from tests.gateway_helpers import gateway

pytestmark = pytest.mark.kafka

TOKEN = "http-bounds-token"


@pytest.fixture
def board(kafka_bootstrap: str, topic_name: Any) -> Iterator[DashboardService]:
    topics = Topics(gauges=topic_name("g"), alerts=topic_name("a"), configs=topic_name("c"))
    create_topics(kafka_bootstrap, topics)
    with dashboard(kafka_bootstrap, topics, token=SecretStr(TOKEN)) as service:
        yield service


@pytest.fixture
def gw(kafka_bootstrap: str, topic_name: Any) -> Iterator[GatewayHandle]:
    with gateway(kafka_bootstrap, topic_name("http")) as handle:
        yield handle


def _address(service: DashboardService) -> tuple[str, int]:
    assert service._server is not None
    return ("127.0.0.1", int(service._server.server_port))


def _metrics_address(handle: GatewayHandle) -> tuple[str, int]:
    assert handle.metrics_port is not None
    return (handle.address[0], handle.metrics_port)


def _exchange(address: tuple[str, int], raw: bytes, timeout_s: float = 30.0) -> bytes:
    """Send ``raw`` and read until the server closes (a socket timeout fails the test)."""
    with socket.create_connection(address, timeout=timeout_s) as sock:
        sock.sendall(raw)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _head(response: bytes) -> tuple[int, dict[str, str]]:
    head = response.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    headers = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(head[0].split()[1]), headers


def _served(address: tuple[str, int], path: str) -> bool:
    """A normal client's request is answered 200."""
    raw = (f"GET {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n"
           "Connection: close\r\n\r\n").encode()
    try:
        return _head(_exchange(address, raw, timeout_s=10))[0] == 200
    except (OSError, IndexError, ValueError):  # refused, reset or closed without an answer
        return False


@pytest.mark.parametrize("target", ["dashboard", "gateway"])
def test_row5_a_half_sent_request_is_closed_at_the_header_deadline(board: DashboardService, gw: GatewayHandle,
                                                                    target: str) -> None:
    address = _address(board) if target == "dashboard" else _metrics_address(gw)
    path = "/api/health" if target == "dashboard" else "/metrics"
    with ExitStack() as stack:  # a normal client is served while slow ones hold connections
        for _ in range(20):
            slow = stack.enter_context(socket.create_connection(address, timeout=30))
            slow.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        assert _served(address, path)
    # Headers never finished: without a deadline this read would wait forever (and time out the test).
    assert _exchange(address, b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nX-Slow: ") == b""
    assert _served(address, path)


@pytest.mark.parametrize("target", ["dashboard", "gateway"])
def test_row5_connections_beyond_the_cap_get_a_503_at_once(board: DashboardService, gw: GatewayHandle,
                                                           target: str) -> None:
    server = board._server if target == "dashboard" else gw.gateway.metrics._http
    assert server is not None
    address = _address(board) if target == "dashboard" else _metrics_address(gw)
    with ExitStack() as stack:
        for _ in range(server.max_connections):
            stack.enter_context(socket.create_connection(address, timeout=30))
        refused_before = server.refused
        answer = _exchange(address, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n", timeout_s=10)
        assert _head(answer)[0] == 503 and server.refused == refused_before + 1
    # Once the held connections go, a normal client is served again.
    path = "/api/health" if target == "dashboard" else "/metrics"
    eventually(lambda: _served(address, path), timeout_s=30, message="served after the cap")


@pytest.mark.parametrize("length", ["-1", "abc", "99999999"])
def test_row5_bad_content_lengths_are_answered_not_waited_on(board: DashboardService, length: str,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    raw = f"POST /login HTTP/1.1\r\nHost: localhost\r\nContent-Length: {length}\r\n\r\ntoken=x".encode()
    status, headers = _head(_exchange(_address(board), raw))
    assert status in (400, 413)
    assert all(headers.get(name.lower()) == value for name, value in SECURITY_HEADERS.items())
    assert "Traceback" not in caplog.text


def test_row9_the_backlog_is_not_five(board: DashboardService, gw: GatewayHandle) -> None:
    assert board._server is not None and board._server.request_queue_size >= 128
    assert gw.gateway.metrics._http.request_queue_size >= 128


@pytest.mark.parametrize("raw", [b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n",  # 414
                                 b"BREW /pot HTTP/1.1\r\nHost: localhost\r\n\r\n",                   # 501
                                 b"GET / HTTP/2.5\r\nHost: localhost\r\n\r\n"])                       # 505
def test_stdlib_error_pages_carry_the_security_headers(board: DashboardService, raw: bytes) -> None:
    status, headers = _head(_exchange(_address(board), raw))
    assert status in (414, 501, 505)
    assert all(headers.get(name.lower()) == value for name, value in SECURITY_HEADERS.items()), headers


def test_a_client_reset_prints_no_traceback(board: DashboardService, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    for _ in range(5):
        sock = socket.create_connection(_address(board), timeout=10)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = RST
        sock.sendall(f"GET /api/health HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
                     .encode())
        sock.close()
    answer = _exchange(_address(board), b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    assert _head(answer)[0] in (200, 503)  # still serving
    assert "Traceback" not in caplog.text

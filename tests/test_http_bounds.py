"""The dashboard's and the gateway's HTTP under the probe of issue 14: deadlines, caps, limits, headers."""

from __future__ import annotations

import http.client
import logging
import socket
import struct
import time
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
def test_row5_more_half_sent_requests_than_the_cap_cannot_lock_a_normal_client_out(
        board: DashboardService, gw: GatewayHandle, target: str) -> None:
    server = board._server if target == "dashboard" else gw.gateway.metrics._http
    assert server is not None
    address = _address(board) if target == "dashboard" else _metrics_address(gw)
    path = "/api/health" if target == "dashboard" else "/metrics"
    attackers = server.max_connections + 44  # 300 on the dashboard, as the probe sent
    with ExitStack() as stack:
        for n in range(attackers):  # headers that never end; on the dashboard, half a login body for half of them
            slow = stack.enter_context(socket.create_connection(address, timeout=30))
            slow.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: " if n % 2 or target == "gateway" else
                         b"POST /login HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\ntoken=")
        # During the attack: each connection beyond the cap took the slot of the oldest unfinished request.
        eventually(lambda: server.evicted >= attackers - server.max_connections or None, timeout_s=30,
                   message="the oldest unfinished requests evicted")
        assert server.open_connections <= server.max_connections
        assert all(_served(address, path) for _ in range(5))
        assert server.refused == 0
    assert _served(address, path)


def test_row5_when_every_slot_serves_a_stream_one_more_connection_gets_a_503(board: DashboardService) -> None:
    server = board._server
    assert server is not None
    address = _address(board)
    with ExitStack() as stack:
        for _ in range(server.max_connections):  # live event streams: responses being served, not evictable
            stream = stack.enter_context(socket.create_connection(address, timeout=30))
            stream.sendall(f"GET /events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n"
                           "\r\n".encode())
            assert stream.recv(12) == b"HTTP/1.1 200"
        answer = _exchange(address, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n", timeout_s=10)
        assert _head(answer)[0] == 503 and server.refused == 1
        headers = _head(answer)[1]
        assert headers.get("retry-after") == "1"
        assert all(headers.get(name.lower()) == value for name, value in SECURITY_HEADERS.items()), headers
    # Once the streams end, a normal client is served again.
    eventually(lambda: _served(address, "/api/health"), timeout_s=30, message="served after the cap")


@pytest.mark.parametrize("length", ["-1", "abc", "99999999"])
def test_row5_bad_content_lengths_are_answered_not_waited_on(board: DashboardService, length: str,
                                                             capfd: pytest.CaptureFixture[str]) -> None:
    raw = f"POST /login HTTP/1.1\r\nHost: localhost\r\nContent-Length: {length}\r\n\r\ntoken=x".encode()
    status, headers = _head(_exchange(_address(board), raw))
    assert status in (400, 413)
    assert all(headers.get(name.lower()) == value for name, value in SECURITY_HEADERS.items())
    # The handler's thread is done before it closes the connection: anything it printed is here now.
    assert "Traceback" not in capfd.readouterr().err


def test_row5_a_request_body_that_never_comes_is_closed_at_the_io_timeout(board: DashboardService) -> None:
    server = board._server
    assert server is not None
    server.io_timeout_s = 1.0  # for the connections accepted from now on
    started = time.monotonic()
    # 7 of the 100 bytes announced: without a socket timeout this read would wait forever.
    answer = _exchange(_address(board), b"POST /login HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n"
                                        b"token=x", timeout_s=30)
    elapsed = time.monotonic() - started
    assert answer == b"" and elapsed < server.header_timeout_s, (answer[:80], elapsed)
    assert _served(_address(board), "/api/health")


def test_row5_request_headers_are_bounded_in_bytes(board: DashboardService) -> None:
    address = _address(board)
    # Twelve lines of 8 KB: each under the stdlib's 65,536 bytes and far under its 100 lines, 96 KB in all.
    status, headers = _head(_exchange(address, _padded_request(12)))
    assert status == 431
    assert all(headers.get(name.lower()) == value for name, value in SECURITY_HEADERS.items()), headers
    assert headers.get("connection") == "close"  # and _exchange returned: the server closed it
    assert _head(_exchange(address, _padded_request(3)))[0] in (200, 503)  # 24 KB of headers is fine
    assert _served(address, "/api/health")


def _padded_request(lines: int) -> bytes:
    pad = "".join(f"X-Pad-{i}: {'p' * 8000}\r\n" for i in range(lines))
    return f"GET /healthz HTTP/1.1\r\nHost: localhost\r\n{pad}Connection: close\r\n\r\n".encode()


def test_row9_the_backlog_is_not_five(board: DashboardService, gw: GatewayHandle) -> None:
    assert board._server is not None and board._server.request_queue_size >= 128
    assert gw.gateway.metrics._http.request_queue_size >= 128
    # Behaviour: connections in a burst are all accepted at once; an overflowing backlog of 5 would drop
    # SYNs and make some connect() wait ~1 s for the retransmit.
    slowest = 0.0
    with ExitStack() as stack:
        for _ in range(200):
            started = time.monotonic()
            stack.enter_context(socket.create_connection(_address(board), timeout=10))
            slowest = max(slowest, time.monotonic() - started)
        assert _served(_address(board), "/api/health")  # during: 200 connections held
    assert slowest < 0.5, f"a connect() took {slowest:.3f}s"
    assert _served(_address(board), "/api/health")


@pytest.mark.parametrize("raw", [b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n",  # 414
                                 b"BREW /pot HTTP/1.1\r\nHost: localhost\r\n\r\n",                   # 501
                                 b"GET / HTTP/2.5\r\nHost: localhost\r\n\r\n",                       # 505
                                 _padded_request(12)])                                                  # 431
def test_stdlib_error_pages_carry_the_security_headers(board: DashboardService, raw: bytes) -> None:
    status, headers = _head(_exchange(_address(board), raw))
    assert status in (414, 431, 501, 505)
    assert all(headers.get(name.lower()) == value for name, value in SECURITY_HEADERS.items()), headers


def test_a_client_reset_prints_no_traceback(board: DashboardService, capfd: pytest.CaptureFixture[str],
                                            caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="configwatch.httpserver")
    server = board._server
    assert server is not None
    for _ in range(5):  # as a browser does: a request answered on a kept-alive connection, then a reset
        conn = http.client.HTTPConnection(*_address(board), timeout=10)
        conn.request("GET", "/api/health", headers={"Authorization": f"Bearer {TOKEN}"})
        assert conn.getresponse().read()
        assert conn.sock is not None
        conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = RST
        conn.close()  # the server's thread waits in its read of the next request: ConnectionResetError
    answer = _exchange(_address(board), b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    assert _head(answer)[0] in (200, 503)  # still serving
    eventually(lambda: server.open_connections == 0, timeout_s=30, message="every connection's thread done")
    # socketserver's default handle_error prints a traceback to stderr (not to a logger): look there.
    assert "Traceback" not in capfd.readouterr().err
    resets = [r for r in caplog.records if r.getMessage().endswith("ended: ConnectionResetError")]
    assert len(resets) == 5 and all(r.levelno == logging.DEBUG for r in resets), caplog.text  # one line each

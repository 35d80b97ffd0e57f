"""Helpers for the gateway tests: a gateway on the test broker, its events, raw sockets."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from configwatch.records import Event
from configwatch.secrets import SecretStr
from configwatch.settings import Settings
from policy.gateway import GatewayHandle, running_gateway
from tests.kafka_helpers import read_all

__all__ = [
    "TEST_KEY", "ListSink", "create_topic", "gateway", "gateway_settings",
    "health", "metric", "raw_connect", "read_events", "recv_frame",
    "recv_until_closed", "roundtrip",
]

TEST_KEY = SecretStr("configwatch-test-fingerprint-key")


class ListSink:
    """An ``EventSink`` that keeps what it is offered (a registry's events, without a publisher)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def offer(self, event: Event) -> bool:
        self.events.append(event)
        return True

    def unavailable(self) -> str | None:
        return None


def gateway_settings(topic: str, **overrides: Any) -> Settings:
    base = Settings.load(environ={})
    return replace(base, input_topic=topic, fingerprint_key=TEST_KEY, gateway_port=0, gateway_metrics_port=0,
                   **overrides)


def create_topic(bootstrap: str, topic: str, partitions: int = 3) -> None:
    """Create ``topic`` up front, so an empty topic proves that nothing was published."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
    finally:
        admin.close()


@contextmanager
def gateway(bootstrap: str, topic: str, **overrides: Any) -> Iterator[GatewayHandle]:
    """A gateway on a free port publishing to ``topic`` (created first); stopped and flushed on exit."""
    create_topic(bootstrap, topic)
    with running_gateway(gateway_settings(topic, **overrides), bootstrap) as handle:
        yield handle


def read_events(bootstrap: str, topic: str) -> list[tuple[bytes | None, Event]]:
    """Every record of ``topic`` as (key, validated contract event), in partition order."""
    rows = sorted(read_all(bootstrap, topic), key=lambda r: (r[2], r[3]))
    return [(key, Event.from_json(value)) for key, value, _p, _o in rows if value is not None]


def raw_connect(address: tuple[str, int], timeout_s: float = 10.0) -> socket.socket:
    sock = socket.create_connection(address, timeout=timeout_s)
    sock.settimeout(timeout_s)
    return sock


def recv_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (raises on timeout)."""
    chunks = []
    while True:
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def metric(handle: GatewayHandle, name: str, **labels: str) -> float:
    """One sample scraped over HTTP from the gateway's /metrics endpoint (0 when absent)."""
    assert handle.metrics_port is not None
    host = handle.address[0]
    text = urllib.request.urlopen(f"http://{host}:{handle.metrics_port}/metrics", timeout=10).read().decode()
    want = name + ("{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}" if labels else "")
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        series, _, value = line.rpartition(" ")
        if _normalise(series) == want:
            return float(value)
    return 0.0


def health(handle: GatewayHandle) -> tuple[int, dict[str, Any]]:
    """The gateway's ``/healthz``: HTTP status and document."""
    assert handle.metrics_port is not None
    url = f"http://{handle.address[0]}:{handle.metrics_port}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return int(answer.status), json.loads(answer.read())
    except urllib.error.HTTPError as err:  # 503: unavailable, with the same document
        return int(err.code), json.loads(err.read())


def _normalise(series: str) -> str:
    if "{" not in series:
        return series
    name, _, rest = series.partition("{")
    pairs = sorted(p for p in rest.rstrip("}").split(",") if p)
    return name + "{" + ",".join(pairs) + "}"


def recv_frame(sock: socket.socket) -> bytes | None:
    """One response frame's payload, or None if the server closed the connection first."""
    head = _recv_exactly(sock, 4)
    if head is None:
        return None
    size = int.from_bytes(head, "big", signed=True)
    return _recv_exactly(sock, size)


def _recv_exactly(sock: socket.socket, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except ConnectionResetError:
            return None
        if not chunk:
            return None
        buf += chunk
    return buf


def roundtrip(sock: socket.socket, message: Any, version: int, correlation_id: int = 1,
              client_id: str | None = "raw-test") -> bytes | None:
    """Send one request built with the project's message classes; return the response payload."""
    from policy.protocol import encode_request

    sock.sendall(encode_request(message, version, correlation_id, client_id))
    return recv_frame(sock)

"""Helpers for the dashboard tests: contract records, a running service, HTTP and SSE clients,
Prometheus text parsing, and the current gauges as the compacted topic holds them.
"""

from __future__ import annotations

import http.client
import json
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from kafka.admin import KafkaAdminClient, NewTopic
from prometheus_client.parser import text_string_to_metric_families

from configwatch.records import ConfigEntry, Event, Finding, Gauge
from configwatch.secrets import SecretStr
from sinks.dashboard import DashboardConfig, DashboardService, Topics
from tests.kafka_helpers import read_all

__all__ = [
    "TEST_KEY",
    "HttpResult",
    "config_push",
    "create_topics",
    "current_gauges",
    "dashboard",
    "finding",
    "gauge_record",
    "get",
    "metric_samples",
    "read_sse",
    "tombstone",
]

TEST_KEY = SecretStr("dashboard-test-fingerprint-key")


def create_topics(bootstrap: str, topics: Topics, partitions: int = 3) -> None:
    """The job's topics as a deployment has them: gauges and usage compacted, the others plain."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([
            NewTopic(topics.gauges, partitions, 1, topic_configs={"cleanup.policy": "compact"}),
            NewTopic(topics.alerts, partitions, 1),
            NewTopic(topics.configs, partitions, 1),
            *([NewTopic(topics.usage, partitions, 1, topic_configs={"cleanup.policy": "compact"})]
              if topics.usage else []),
        ])
    finally:
        admin.close()


def gauge_record(name: str, version: str, connections: int, instances: int,
                 updated_at_ms: int | None = None, by_security: dict[str, int] | None = None) -> tuple[bytes, bytes]:
    g = Gauge(name, version, connections, instances, updated_at_ms or int(time.time() * 1000),
              connections_by_security=by_security or {})
    return g.key.encode(), g.to_json().encode()


def tombstone(name: str, version: str) -> tuple[bytes, None]:
    return f"{name}/{version}".encode(), None


def finding(severity: str = "high", *, rule: str = "test-rule", kind: str = "anomaly",
            client_instance_id: str | None = None, message: str = "A test finding.",
            detected_at_ms: int | None = None, keys: tuple[str, ...] = ("linger.ms",),
            software: tuple[str, str] = ("apache-kafka-java", "3.9.1"), client_id: str = "orders-app") -> Finding:
    now = int(time.time() * 1000)
    return Finding(
        alert_id=uuid.uuid4().hex, kind=kind, rule=rule, severity=severity, keys=keys,
        message=message, event_timestamp_ms=now, detected_at_ms=detected_at_ms or now,
        evidence={"keys": list(keys)}, client_instance_id=client_instance_id or str(uuid.uuid4()),
        client_software_name=software[0], client_software_version=software[1], client_id=client_id,
        principal=f"User:{client_id.split('-')[0]}",
    )


def config_push(client_instance_id: str, configs: list[ConfigEntry], *, name: str = "apache-kafka-java",
                version: str = "3.9.1", timestamp_ms: int | None = None) -> tuple[bytes, bytes]:
    event = Event(event="config_push", timestamp_ms=timestamp_ms or int(time.time() * 1000),
                  connection_id=f"10.0.0.5:9092-10.0.0.12:51344-{client_instance_id[:4]}",
                  client_instance_id=client_instance_id, client_software_name=name,
                  client_software_version=version, client_id="orders-app", principal="User:orders",
                  listener="SASL_SSL", security_protocol="SASL_SSL", client_address="10.0.0.12",
                  configs=tuple(configs), broker_id=1)
    return event.kafka_key(), event.to_json().encode()


@contextmanager
def dashboard(bootstrap: str, topics: Topics, **overrides: object) -> Iterator[DashboardService]:
    """A started service on a free loopback port; stopped afterwards."""
    config = DashboardConfig(bootstrap_servers=bootstrap, topics=topics, fingerprint_key=TEST_KEY,
                             port=0, **overrides)  # type: ignore[arg-type]
    service = DashboardService(config).start()
    try:
        yield service
    finally:
        service.stop()


@dataclass
class HttpResult:
    status: int
    headers: dict[str, str]
    body: bytes = field(repr=False)

    @property
    def text(self) -> str:
        return self.body.decode()

    def json(self) -> Any:
        return json.loads(self.body)


def get(url: str, *, token: str | None = None, headers: dict[str, str] | None = None,
        method: str = "GET", body: bytes | None = None) -> HttpResult:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    hdrs = dict(headers or {})
    if token:
        hdrs["Authorization"] = f"Bearer {token}"
    conn.request(method, parts.path + (f"?{parts.query}" if parts.query else ""), body=body, headers=hdrs)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return HttpResult(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)


def read_sse(url: str, until: Callable[[list[tuple[str, str]]], bool], *, timeout_s: float = 30.0,
             token: str | None = None) -> tuple[list[tuple[str, str]], str]:
    """Read ``/events`` until ``until(events)`` holds; returns (events, the raw stream text)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout_s)
    conn.request("GET", parts.path, headers={"Authorization": f"Bearer {token}"} if token else {})
    resp = conn.getresponse()
    assert resp.status == 200, resp.status
    events: list[tuple[str, str]] = []
    raw: list[str] = []
    name, data = "message", ""
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            line = resp.readline().decode()
            if not line:
                break
            raw.append(line)
            line = line.rstrip("\n")
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                data = line[len("data: "):]
            elif line == "":
                events.append((name, data))
                name, data = "message", ""
                if until(events):
                    return events, "".join(raw)
    finally:
        conn.close()
    raise AssertionError(f"SSE condition not reached within {timeout_s}s; got {[e[0] for e in events]}")


def metric_samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text exposition: (name, sorted labels) -> value."""
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def current_gauges(bootstrap: str, topic: str) -> dict[str, Gauge]:
    """The current value per key as the compacted topic defines it: last record wins, tombstones remove."""
    latest: dict[str, tuple[int, bytes | None]] = {}
    for key, value, _partition, offset in read_all(bootstrap, topic):
        assert key is not None
        latest[key.decode()] = (offset, value)  # one key lives in one partition: offsets order it
    return {k: Gauge.from_json(v) for k, (_o, v) in latest.items() if v is not None}

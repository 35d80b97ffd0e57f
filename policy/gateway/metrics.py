"""The gateway's Prometheus metrics, in a CollectorRegistry of its own.

The KIP's client-config metrics: current unique client instance ids; process()
calls and errors (counters, so Prometheus derives the rates); process() latency
average (a Summary's sum/count) and maximum (over a sliding window, as Kafka's
Max stat). Also KIP-511 connections per software name and version (a secret in
one as the marker its events carry: ``ConnectionRegistry``), requests
and connection closes by outcome, and the publisher's event counts. The KIP tags
latency by client_instance_id; here it is not labelled, to keep the series count
bounded (one series per client instance would grow without limit).

The same port serves ``/healthz``: a small JSON document of the gateway's
health (200 when pushes are being accepted, 503 with the reason when the
publisher cannot take them), for probes and for people.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Summary
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from configwatch.httpserver import BoundedHandler, BoundedHTTPServer
from policy.gateway.registry import ConnectionRegistry
from policy.publisher import PublisherStats

__all__ = ["MAX_SOFTWARE_SERIES", "GatewayMetrics", "bounded_series"]

MAX_WINDOW_S = 30.0
# At most this many (software name, version) series per scrape; the rest are summed under "other".
MAX_SOFTWARE_SERIES = 500
OTHER = "other"


def bounded_series(counts: dict[tuple[str, ...], int]) -> list[tuple[tuple[str, ...], int]]:
    """The largest ``MAX_SOFTWARE_SERIES - 1`` series by count, then the rest summed as (other, other, ...)."""
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(ordered) <= MAX_SOFTWARE_SERIES:
        return sorted(ordered)
    kept = ordered[:MAX_SOFTWARE_SERIES - 1]
    other = (OTHER,) * len(ordered[0][0])
    return [*sorted(kept), (other, sum(n for _, n in ordered[MAX_SOFTWARE_SERIES - 1:]))]


class _WindowedMax:
    """Maximum of the values seen in the current and the previous window (thread-safe)."""

    def __init__(self, window_s: float) -> None:
        self._window_s = window_s
        self._lock = threading.Lock()
        self._start = time.monotonic()
        self._current = 0.0
        self._previous = 0.0

    def _roll(self, now: float) -> None:
        elapsed = now - self._start
        if elapsed >= 2 * self._window_s:
            self._previous, self._current, self._start = 0.0, 0.0, now
        elif elapsed >= self._window_s:
            self._previous, self._current, self._start = self._current, 0.0, self._start + self._window_s

    def observe(self, value: float) -> None:
        with self._lock:
            self._roll(time.monotonic())
            self._current = max(self._current, value)

    def value(self) -> float:
        with self._lock:
            self._roll(time.monotonic())
            return max(self._current, self._previous)


class _StateCollector(Collector):
    """Reads the registry and the publisher at scrape time."""

    def __init__(self, connections: ConnectionRegistry, stats: Callable[[], PublisherStats] | None) -> None:
        self._connections = connections
        self._stats = stats

    def collect(self) -> Iterator[Metric]:
        sw = GaugeMetricFamily("configwatch_gateway_client_software_connections",
                               "KIP-511 connections: open registered connections per client software name and "
                               "version", labels=["client_software_name", "client_software_version"])
        for labels, n in bounded_series(self._connections.connections_by_software()):
            sw.add_metric(list(labels), n)
        yield sw
        posture = GaugeMetricFamily("configwatch_gateway_client_security_connections",
                                    "open registered connections per client software name and version and their "
                                    "security: protocol, SASL mechanism and TLS version ('none': not used)",
                                    labels=["client_software_name", "client_software_version", "security_protocol",
                                            "sasl_mechanism", "tls_version"])
        for labels, n in bounded_series(self._connections.connections_by_security()):
            posture.add_metric(list(labels), n)
        yield posture
        if self._stats is None:
            return
        stats = self._stats()
        events = GaugeMetricFamily("configwatch_publisher_events",
                                   "events by type and outcome since start (offered = published + dropped + "
                                   "failed + still buffered)", labels=["event", "outcome"])
        for outcome in ("offered", "published", "dropped", "failed"):
            for event, n in sorted(getattr(stats, outcome).items()):
                events.add_metric([event, outcome], n)
        yield events
        yield GaugeMetricFamily("configwatch_publisher_buffered", "events waiting in the publish buffer",
                                value=stats.buffered)
        yield GaugeMetricFamily("configwatch_publisher_buffered_bytes",
                                "bytes of serialized events waiting in the publish buffer", value=stats.buffered_bytes)
        yield GaugeMetricFamily("configwatch_publisher_connected",
                                "1 when the publisher's producer is connected to Kafka", value=int(stats.connected))
        yield GaugeMetricFamily("configwatch_publisher_oldest_unacked_age_seconds",
                                "age of the oldest event sent to Kafka and not yet acknowledged (0: none)",
                                value=stats.oldest_unacked_age_s)


class GatewayMetrics:
    """Every metric of one gateway, and the HTTP endpoint that serves them."""

    def __init__(self, connections: ConnectionRegistry, publisher_stats: Callable[[], PublisherStats] | None,
                 open_sockets: Callable[[], int], unavailable: Callable[[], str | None] | None = None) -> None:
        self._connections = connections
        self._publisher_stats = publisher_stats
        self._open_sockets = open_sockets
        self._unavailable = unavailable
        self.registry = CollectorRegistry()
        r = self.registry
        self.process_calls = Counter("configwatch_client_config_process_calls",
                                     "pushes handed to ClientConfigPolicy.process_all()", registry=r)
        self.process_errors = Counter("configwatch_client_config_process_errors",
                                      "pushes ClientConfigPolicy.process_all() failed on", registry=r)
        self.process_latency = Summary("configwatch_client_config_process_latency_ms",
                                       "time from handing a push to the policy to its outcome (queued and "
                                       "judged), milliseconds (avg = sum/count)",
                                       registry=r)
        self._latency_max = _WindowedMax(MAX_WINDOW_S)
        Gauge("configwatch_client_config_process_latency_max_ms",
              f"maximum of that time over the last {MAX_WINDOW_S:.0f}-{2 * MAX_WINDOW_S:.0f}s, milliseconds",
              registry=r).set_function(self._latency_max.value)
        Gauge("configwatch_client_config_client_instance_ids",
              "current number of unique client instance ids among open connections",
              registry=r).set_function(lambda: connections.unique_client_instances)
        Gauge("configwatch_gateway_open_connections", "open TCP connections", registry=r).set_function(open_sockets)
        self.requests = Counter("configwatch_gateway_requests", "requests handled, by API and outcome",
                                ["api", "outcome"], registry=r)
        self.closes = Counter("configwatch_gateway_connections_closed", "connections ended, by reason",
                              ["reason"], registry=r)
        self.sasl = Counter("configwatch_gateway_sasl_authentications", "SASL exchanges the cluster answered "
                            "through the gateway, by mechanism and outcome (ok, failed)", ["mechanism", "outcome"],
                            registry=r)
        r.register(_StateCollector(connections, publisher_stats))
        self._http: Any = None
        self._http_thread: threading.Thread | None = None

    def watch_pending_pushes(self, pending: Callable[[], int]) -> None:
        """Export the pushes waiting for the policy's outcome (``policy.gateway.judge``)."""
        Gauge("configwatch_gateway_pending_pushes", "pushes waiting for the policy or being judged: a sustained "
              "rise means pushes arrive faster than the policy judges them", registry=self.registry
              ).set_function(pending)

    def watch_frame_budget(self, used: Callable[[], int]) -> None:
        """Export the bytes of large request frames being read (the gateway's ``FrameBudget``)."""
        Gauge("configwatch_gateway_queued_request_bytes", "bytes reserved by request frames over 64 KiB being "
              "read, all connections together", registry=self.registry).set_function(used)

    def observe_process(self, latency_ms: float, *, error: bool) -> None:
        self.process_calls.inc()
        if error:
            self.process_errors.inc()
        self.process_latency.observe(latency_ms)
        self._latency_max.observe(latency_ms)

    def value(self, name: str, labels: dict[str, str] | None = None) -> float:
        """One sample's current value (0 when absent); for summaries and tests."""
        return self.registry.get_sample_value(name, labels or {}) or 0.0

    def health(self) -> dict[str, Any]:
        """The ``/healthz`` document: ``status`` ok or unavailable (with the reason), connections, publisher."""
        reason = self._unavailable() if self._unavailable is not None else None
        doc: dict[str, Any] = {"status": "unavailable" if reason else "ok", "reason": reason,
                               "open_connections": self._open_sockets(),
                               "client_instances": self._connections.unique_client_instances}
        if self._publisher_stats is not None:
            stats = self._publisher_stats()
            doc["publisher"] = {"connected": stats.connected, "buffered": stats.buffered,
                                "buffered_bytes": stats.buffered_bytes,
                                "oldest_unacked_age_seconds": round(stats.oldest_unacked_age_s, 3),
                                "published": stats.total("published"), "dropped": stats.total("dropped"),
                                "failed": stats.total("failed")}
        return doc

    def serve(self, host: str, port: int) -> int:
        """Serve /metrics and /healthz on ``host:port`` (0: a free port) in a daemon thread; returns the port."""
        self._http = _MetricsServer((host, port), self.registry, self.health)
        self._http_thread = threading.Thread(target=self._http.serve_forever, name="gateway-metrics", daemon=True)
        self._http_thread.start()
        return int(self._http.server_port)

    def stop(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None
        if self._http_thread is not None:
            self._http_thread.join(5)
            self._http_thread = None


class _MetricsServer(BoundedHTTPServer):
    """``/metrics`` (and ``/``) of one registry and ``/healthz``, on the bounded server."""

    def __init__(self, address: tuple[str, int], registry: CollectorRegistry,
                 health: Callable[[], dict[str, Any]]) -> None:
        self.registry = registry
        self.health = health
        super().__init__(address, _MetricsHandler, max_connections=32)


class _MetricsHandler(BoundedHandler):
    server: _MetricsServer
    server_version = "configwatch-gateway"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a scrape every few seconds is not news

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        status = 200
        if path == "/healthz":
            doc = self.server.health()
            body, content_type = json.dumps(doc).encode(), "application/json"
            status = 200 if doc["status"] == "ok" else 503
        elif path in ("/", "/metrics"):
            encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
            body = encoder(self.server.registry)
        else:
            self.send_error(404, "only /metrics and /healthz are served here")
            return
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

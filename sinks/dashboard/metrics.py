"""``/metrics``: a custom Prometheus collector over the dashboard state.

Series are built at scrape time from the current state, so a gauge removed by
a tombstone disappears from the next scrape. Label cardinality is bounded:
labels are client software name/version (one series per pair with open
connections, capped at ``max_series`` with the rest folded into ``__other__``),
security protocol and SASL mechanism (a handful), finding kind/rule/severity
(from the rule catalog), and topic (three). No client instance id, client id,
principal or address is ever a label.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from configwatch.contract import SECURITY_SEP
from configwatch.records import Gauge
from sinks.dashboard.state import DashboardState

__all__ = ["OTHER_LABEL", "DashboardCollector", "build_registry"]

# Breaks the KIP-511 pattern, so it cannot collide with a real client software name.
OTHER_LABEL = "__other__"
_SOFTWARE = ["client_software_name", "client_software_version"]


_Row = tuple[str, str, int, int, Mapping[str, Any]]


def _fold(gauges: list[Gauge], max_series: int) -> tuple[list[_Row], int]:
    """Keep the ``max_series`` largest pairs; sum the rest into one ``__other__`` series."""
    rows: list[_Row] = [(g.client_software_name, g.client_software_version, g.connections, g.client_instances,
                         g.connections_by_security) for g in gauges]
    if len(rows) <= max_series:
        return rows, 0
    rows.sort(key=lambda r: (-r[2], r[0], r[1]))
    kept, rest = rows[: max_series - 1], rows[max_series - 1:]
    postures: Counter[str] = Counter()
    for row in rest:
        postures.update(row[4])
    kept.append((OTHER_LABEL, OTHER_LABEL, sum(r[2] for r in rest), sum(r[3] for r in rest), dict(postures)))
    return kept, len(rest)


class DashboardCollector(Collector):
    """Yields the fleet, alert and health metric families from a :class:`DashboardState`."""

    def __init__(self, state: DashboardState, *, max_series: int = 1000,
                 sse_clients: Callable[[], int] | None = None) -> None:
        self._state = state
        self._max_series = max(2, max_series)
        self._sse_clients = sse_clients  # a callable returning the open live-page connections

    def collect(self) -> Iterator[Metric]:
        yield from self._fleet()
        yield from self._alerts()
        yield from self._health()

    def _fleet(self) -> Iterator[Metric]:
        rows, folded = _fold(self._state.fleet.snapshot(), self._max_series)
        conns = GaugeMetricFamily("configwatch_client_connections",
                                  "Open connections per client software name and version (KIP-511)",
                                  labels=_SOFTWARE)
        insts = GaugeMetricFamily("configwatch_client_instances",
                                  "Distinct client instances among the open connections per software name and "
                                  "version", labels=_SOFTWARE)
        posture = GaugeMetricFamily("configwatch_client_connections_by_security",
                                    "Open connections per client software name and version, security protocol and "
                                    "SASL mechanism (empty without SASL)",
                                    labels=[*_SOFTWARE, "security_protocol", "sasl_mechanism"])
        for name, version, connections, instances, postures in rows:
            conns.add_metric([name, version], connections)
            insts.add_metric([name, version], instances)
            for label, n in sorted(postures.items()):
                protocol, _, mechanism = str(label).partition(SECURITY_SEP)
                posture.add_metric([name, version, protocol, mechanism], int(n))
        yield conns
        yield insts
        yield posture
        totals = self._state.fleet.totals()
        yield GaugeMetricFamily("configwatch_fleet_connections", "Open connections over the whole fleet",
                                value=totals.connections)
        yield GaugeMetricFamily("configwatch_fleet_client_instances",
                                "Distinct client instances over the whole fleet", value=totals.client_instances)
        yield GaugeMetricFamily("configwatch_fleet_software_versions",
                                "Client software name/version pairs with open connections",
                                value=totals.software_versions)
        yield GaugeMetricFamily("configwatch_fleet_software_names",
                                "Client software names with open connections", value=totals.software_names)
        yield GaugeMetricFamily("configwatch_dashboard_folded_software_versions",
                                f"Software name/version pairs folded into the {OTHER_LABEL} series "
                                "(cardinality cap)", value=folded)

    def _alerts(self) -> Iterator[Metric]:
        fam = CounterMetricFamily("configwatch_alerts",
                                  "Distinct findings read from the alerts topic since the dashboard started",
                                  labels=["kind", "rule", "severity"])
        for (kind, rule, severity), n in sorted(self._state.alerts.counts().items()):
            fam.add_metric([kind, rule, severity], n)
        yield fam

    def _health(self) -> Iterator[Metric]:
        health = self._state.health
        now = time.time()
        lag = GaugeMetricFamily("configwatch_dashboard_consumer_lag_records",
                                "Records in the topic not yet read by the dashboard", labels=["topic", "role"])
        age = GaugeMetricFamily("configwatch_dashboard_last_update_age_seconds",
                                "Seconds since the dashboard last read a record from the topic",
                                labels=["topic", "role"])
        records = CounterMetricFamily("configwatch_dashboard_records",
                                      "Records read by the dashboard, by outcome", labels=["topic", "role", "outcome"])
        for t in health.topics():
            if t.lag is not None:
                lag.add_metric([t.topic, t.role], t.lag)
            if t.last_record_at is not None:
                age.add_metric([t.topic, t.role], max(0.0, now - t.last_record_at))
            for outcome, n in t.records.items():
                records.add_metric([t.topic, t.role, outcome], n)
        yield lag
        yield age
        yield records
        yield GaugeMetricFamily("configwatch_dashboard_ready",
                                "1 once the gauges topic was read to its end at startup", value=int(health.ready))
        yield CounterMetricFamily("configwatch_dashboard_consumer_errors",
                                  "Kafka or processing errors the consumer recovered from", value=health.errors)
        yield GaugeMetricFamily("configwatch_dashboard_tracked_client_instances",
                                "Client instances whose latest config the dashboard holds",
                                value=len(self._state.clients))
        if self._sse_clients is not None:
            yield GaugeMetricFamily("configwatch_dashboard_live_connections",
                                    "Open live-page (Server-Sent Events) connections", value=self._sse_clients())


def build_registry(collector: DashboardCollector) -> CollectorRegistry:
    """A registry of its own (not the process-global one): the collector plus process metrics."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    ProcessCollector(registry=registry)
    return registry

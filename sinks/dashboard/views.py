"""The JSON documents behind ``/api/...`` and the live page's events, built from the state.

Every document is built from safe data only: gauges, findings (which by
contract carry fingerprints, never values) and fingerprinted client views.
"""

from __future__ import annotations

import json
import time
from typing import Any

from configwatch.contract import SEVERITIES
from configwatch.records import Finding, Gauge
from sinks.dashboard.state import DashboardState
from udfs.rules.posture_report import weak_posture
from udfs.upgrade.readiness import check_readiness
from udfs.upgrade.releases import broker_release, broker_releases
from udfs.upgrade.usage import usage_from_records

__all__ = [
    "alert_document",
    "alerts_document",
    "client_document",
    "clients_document",
    "dumps",
    "gauges_document",
    "health_document",
    "parse_severities",
    "security_document",
    "upgrade_document",
]


def dumps(doc: Any) -> str:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def _gauge(g: Gauge) -> dict[str, Any]:
    return {
        "key": g.key,
        "client_software_name": g.client_software_name,
        "client_software_version": g.client_software_version,
        "connections": g.connections,
        "client_instances": g.client_instances,
        "updated_at_ms": g.updated_at_ms,
        "connections_by_security": dict(g.connections_by_security),
    }


def gauges_document(state: DashboardState) -> dict[str, Any]:
    """Current gauges and fleet totals (``/api/gauges`` and the ``gauges`` event)."""
    return {
        "gauges": [_gauge(g) for g in state.fleet.snapshot()],
        "fleet": state.fleet.totals().to_dict(),
        "last_updated_ms": state.fleet.last_updated_ms(),
        "ready": state.health.ready,
        "generated_at_ms": int(time.time() * 1000),
    }


def alert_document(f: Finding) -> dict[str, Any]:
    return f.to_dict()


def parse_severities(raw: str | None) -> frozenset[str] | None:
    """``high,critical`` -> that set; empty/None -> no filter. Raises ValueError for unknown names."""
    if not raw:
        return None
    wanted = frozenset(s.strip().lower() for s in raw.split(",") if s.strip())
    unknown = wanted - set(SEVERITIES)
    if unknown:
        raise ValueError(f"unknown severity {sorted(unknown)[0]!r}; use one of {', '.join(SEVERITIES)}")
    return wanted or None


def alerts_document(state: DashboardState, severities: frozenset[str] | None, limit: int) -> dict[str, Any]:
    """Recent alerts, newest first (``/api/alerts``)."""
    return {
        "alerts": [alert_document(f) for f in state.alerts.recent(severities=severities, limit=limit)],
        "counts_by_severity": state.alerts.counts_by_severity(),
        "severity_filter": sorted(severities, key=SEVERITIES.index) if severities else None,
    }


def client_document(state: DashboardState, client_instance_id: str) -> dict[str, Any] | None:
    """One client instance's latest config and its alerts (``/api/clients/<id>``), or None."""
    view = state.clients.get(client_instance_id)
    if view is None:
        return None
    doc = view.to_dict()
    doc["alerts"] = [alert_document(f) for f in state.alerts.recent(client_instance_id=client_instance_id,
                                                                     limit=50)]
    return doc


def clients_document(state: DashboardState, limit: int) -> dict[str, Any]:
    """The most recently pushed client instances (``/api/clients``)."""
    return {"clients": [v.summary() for v in state.clients.recent(limit)], "tracked": len(state.clients)}


def health_document(state: DashboardState) -> dict[str, Any]:
    doc = state.health.to_dict()
    doc["tracked_clients"] = len(state.clients)
    doc["recent_alerts"] = len(state.alerts)
    return doc


def upgrade_document(state: DashboardState, target: str) -> dict[str, Any]:
    """``/api/upgrade``: every client version judged against ``target`` (UnknownReleaseError for a release the
    data does not describe), with the releases one can ask for."""
    report = check_readiness(usage_from_records(state.usage.records()), broker_release(target))
    return {**report.to_dict(), "targets": list(broker_releases()), "not_ready": len(report.not_ready),
            "usage_topic": state.topics.usage}


def security_document(state: DashboardState) -> dict[str, Any]:
    """``/api/security``: weak security posture per client software name, version and principal, from the
    ``security_posture`` findings the feed holds (one per client and rule: alert ids are deterministic)."""
    rows = weak_posture(state.alerts.recent(limit=state.max_alerts))
    return {"rows": [r.to_dict() for r in rows], "weak": len(rows),
            "client_versions": len({(r.client_software_name, r.client_software_version) for r in rows})}

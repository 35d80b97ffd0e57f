"""Weak security posture per client software name and version and principal, from posture findings.

``configwatch report security`` reads the alerts topic and folds its ``security_posture``
findings (``udfs.rules.posture``) into one row per (software name, version, principal, rule):
how many connections showed it, from how many clients (distinct alert ids: one per client
and rule), and when it was last seen. The most severe rows first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from configwatch.contract import SEVERITIES
from configwatch.records import Finding
from udfs.rules.catalog import POSTURE

__all__ = ["PostureRow", "weak_posture"]


@dataclass(frozen=True, slots=True)
class PostureRow:
    """One weak posture of one client software name and version under one principal."""

    severity: str
    rule: str
    client_software_name: str
    client_software_version: str
    principal: str
    connections: int
    clients: int
    last_seen_ms: int
    evidence: dict[str, Any] = field(default_factory=dict)  # the last connection's posture fields

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def weak_posture(findings: Iterable[Finding]) -> list[PostureRow]:
    """The posture findings among ``findings`` as report rows, most severe (then most connections) first."""
    groups: dict[tuple[str, str, str, str], list[Finding]] = {}
    for f in findings:
        if f.kind != POSTURE:
            continue
        key = (f.rule, f.client_software_name or "unknown", f.client_software_version or "unknown",
               f.principal or "unknown")
        groups.setdefault(key, []).append(f)
    rows = []
    for (rule_id, name, version, principal), found in groups.items():
        last = max(found, key=lambda f: f.event_timestamp_ms or 0)
        rows.append(PostureRow(severity=last.severity, rule=rule_id, client_software_name=name,
                               client_software_version=version, principal=principal, connections=len(found),
                               clients=len({f.alert_id for f in found}), last_seen_ms=last.event_timestamp_ms or 0,
                               evidence=dict(last.evidence)))
    return sorted(rows, key=lambda r: (SEVERITIES.index(r.severity), -r.connections, r.client_software_name,
                                       r.client_software_version, r.principal))

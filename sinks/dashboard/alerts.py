"""The live alerts feed: recent findings, de-duplicated by ``alert_id``, and counts.

Alert ids are deterministic (the same finding on the same client has the same
id across restarts and replays), so a replayed finding is counted once. Memory
is bounded: the feed keeps the newest ``max_alerts`` findings, and the set of
ids already counted keeps the newest ``max_ids``.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Mapping
from typing import Any

from configwatch.contract import SEVERITIES
from configwatch.records import Finding

__all__ = ["AlertFeed", "parse_finding"]

def parse_finding(value: Mapping[str, Any]) -> Finding:
    """A contract finding from parsed JSON; raises ValueError/TypeError/KeyError when malformed."""
    finding = Finding.from_dict(value)
    for name in ("alert_id", "kind", "rule", "severity", "message"):
        if not isinstance(getattr(finding, name), str) or not getattr(finding, name):
            raise ValueError(f"{name} must be a non-empty string")
    if finding.severity not in SEVERITIES:
        raise ValueError("severity is not one of the contract's")
    if not finding.keys or not all(isinstance(k, str) for k in finding.keys):
        raise ValueError("keys must be a non-empty array of strings")
    for name in ("event_timestamp_ms", "detected_at_ms"):
        stamp = getattr(finding, name)
        if not isinstance(stamp, int) or isinstance(stamp, bool):
            raise ValueError(f"{name} must be an int")
    return finding


class AlertFeed:
    """Thread-safe: newest findings first, counts by (kind, rule, severity)."""

    def __init__(self, *, max_alerts: int = 2000, max_ids: int = 100_000) -> None:
        self._lock = threading.Lock()
        self._max_alerts = max(1, max_alerts)
        self._max_ids = max(self._max_alerts, max_ids)
        self._recent: OrderedDict[str, Finding] = OrderedDict()  # alert_id -> finding, oldest first
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._counts: Counter[tuple[str, str, str]] = Counter()

    def add(self, finding: Finding) -> bool:
        """Record a finding; False (and nothing counted) when its id was already seen."""
        with self._lock:
            if finding.alert_id in self._seen:
                self._seen.move_to_end(finding.alert_id)
                if finding.alert_id in self._recent:
                    self._recent[finding.alert_id] = finding  # a re-emission may carry newer detail
                return False
            self._seen[finding.alert_id] = None
            if len(self._seen) > self._max_ids:
                self._seen.popitem(last=False)
            self._recent[finding.alert_id] = finding
            if len(self._recent) > self._max_alerts:
                self._recent.popitem(last=False)
            self._counts[(finding.kind, finding.rule, finding.severity)] += 1
            return True

    def recent(self, *, severities: frozenset[str] | None = None, client_instance_id: str | None = None,
               limit: int = 200) -> list[Finding]:
        """Newest first (by detection time, then arrival), optionally filtered."""
        with self._lock:
            items = list(self._recent.values())
        items.reverse()
        items.sort(key=lambda f: f.detected_at_ms, reverse=True)  # stable: ties keep arrival order
        out: list[Finding] = []
        for f in items:
            if severities is not None and f.severity not in severities:
                continue
            if client_instance_id is not None and f.client_instance_id != client_instance_id:
                continue
            out.append(f)
            if len(out) >= limit:
                break
        return out

    def counts(self) -> dict[tuple[str, str, str], int]:
        """Distinct findings seen since start, by (kind, rule, severity)."""
        with self._lock:
            return dict(self._counts)

    def counts_by_severity(self) -> dict[str, int]:
        out = dict.fromkeys(SEVERITIES, 0)
        for (_kind, _rule, severity), n in self.counts().items():
            out[severity] = out.get(severity, 0) + n
        return out

    def __len__(self) -> int:
        with self._lock:
            return len(self._recent)

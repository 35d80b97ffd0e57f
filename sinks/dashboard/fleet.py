"""Current per-version connection gauges, rebuilt from the compacted gauges topic.

The last record per key is the current value; a tombstone (null value), a
``removed`` record or ``connections <= 0`` removes the key, so its metric series
disappears (as KIP-511 removes the broker metric). Fleet totals are the sum over
the current gauges (an instance with connections under two versions counts twice).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from configwatch.records import Gauge

__all__ = ["FleetGauges", "FleetTotals", "parse_gauge"]


@dataclass(frozen=True, slots=True)
class FleetTotals:
    """Connections and client instances over the whole fleet, and how many versions are live."""

    connections: int
    client_instances: int
    software_versions: int
    software_names: int
    source: str  # "sum": over the current gauges

    def to_dict(self) -> dict[str, Any]:
        return {
            "connections": self.connections,
            "client_instances": self.client_instances,
            "software_versions": self.software_versions,
            "software_names": self.software_names,
            "source": self.source,
        }


def _int(d: Mapping[str, Any], name: str) -> int:
    value = d.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{name} must be an int")
    return value


def parse_gauge(key: str, value: Mapping[str, Any]) -> Gauge:
    """A contract gauge from parsed JSON; raises ValueError when a field is missing or mistyped."""
    name = value.get("client_software_name")
    version = value.get("client_software_version")
    if not isinstance(name, str) or not isinstance(version, str):
        raise ValueError("client_software_name/version must be strings")
    connections = _int(value, "connections")
    instances = _int(value, "client_instances")
    updated = _int(value, "updated_at_ms")
    if connections < 0 or instances < 0:
        raise ValueError("gauge counts must not be negative")
    postures = value.get("connections_by_security") or {}
    if not isinstance(postures, dict) or not all(isinstance(n, int) and n >= 0 for n in postures.values()):
        raise ValueError("connections_by_security must map posture labels to counts")
    return Gauge(name, version, connections, instances, updated, bool(value.get("removed", False)), postures)


class FleetGauges:
    """Thread-safe map from record key to the current :class:`Gauge`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._gauges: dict[str, Gauge] = {}

    def apply(self, key: str, gauge: Gauge | None) -> bool:
        """Apply one record of the gauges topic (``None`` = tombstone); True when state changed."""
        with self._lock:
            if gauge is None or gauge.removed or gauge.connections <= 0:
                return self._gauges.pop(key, None) is not None
            old = self._gauges.get(key)
            self._gauges[key] = gauge
            return old != gauge

    def snapshot(self) -> list[Gauge]:
        """Current gauges, by software name then version."""
        with self._lock:
            gauges = list(self._gauges.values())
        return sorted(gauges, key=lambda g: (g.client_software_name, _version_key(g.client_software_version)))

    def totals(self) -> FleetTotals:
        with self._lock:
            gauges = list(self._gauges.values())
        names = {g.client_software_name for g in gauges}
        return FleetTotals(sum(g.connections for g in gauges), sum(g.client_instances for g in gauges),
                           len(gauges), len(names), "sum")

    def last_updated_ms(self) -> int | None:
        with self._lock:
            stamps = [g.updated_at_ms for g in self._gauges.values()]
        return max(stamps) if stamps else None


def _version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """Sort ``3.10.0`` after ``3.9.1``: numeric parts as numbers, the rest as text."""
    parts: list[tuple[int, int | str]] = []
    for part in version.replace("-", ".").split("."):
        parts.append((0, int(part)) if part.isdigit() else (1, part))
    return tuple(parts)

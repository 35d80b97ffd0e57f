"""Each client instance's latest config push, as a safe view, in an LRU bounded by count and bytes.

A :class:`ClientView` never holds a sensitive value: :mod:`sinks.dashboard.redact`
builds it and replaces such values by fingerprints before it is stored.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

__all__ = ["ClientConfigs", "ClientView", "SafeEntry", "view_bytes"]

# What one entry and one view cost in memory beyond their strings (objects, slots, tuple cells), estimated
# high: 1,900 empty entries measured about 160 bytes each.
_ENTRY_OVERHEAD = 250
_VIEW_OVERHEAD = 1_000


@dataclass(frozen=True, slots=True)
class SafeEntry:
    """One config entry as the dashboard may show it: a value, or only a fingerprint."""

    key: str
    type: str
    is_default: bool
    value: str | None
    sensitive: bool
    fingerprint: str | None = None
    reason: str | None = None  # why it is hidden: a rule id, or "redacted" (by the ingest policy)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"key": self.key, "type": self.type, "is_default": self.is_default,
                             "sensitive": self.sensitive}
        if self.sensitive:
            d["fingerprint"] = self.fingerprint
            d["reason"] = self.reason
        else:
            d["value"] = self.value
        return d


@dataclass(frozen=True, slots=True)
class ClientView:
    """The identity and latest pushed config of one client instance."""

    client_instance_id: str
    timestamp_ms: int
    entries: tuple[SafeEntry, ...]
    client_software_name: str | None = None
    client_software_version: str | None = None
    client_id: str | None = None
    principal: str | None = None
    client_address: str | None = None
    listener: str | None = None
    security_protocol: str | None = None
    connection_id: str | None = None
    broker_id: int | None = None

    def summary(self) -> dict[str, Any]:
        return {
            "client_instance_id": self.client_instance_id,
            "client_software_name": self.client_software_name,
            "client_software_version": self.client_software_version,
            "client_id": self.client_id,
            "principal": self.principal,
            "pushed_at_ms": self.timestamp_ms,
            "config_entries": len(self.entries),
            "sensitive_entries": sum(1 for e in self.entries if e.sensitive),
        }

    def to_dict(self) -> dict[str, Any]:
        d = self.summary()
        d.update({
            "client_address": self.client_address,
            "listener": self.listener,
            "security_protocol": self.security_protocol,
            "connection_id": self.connection_id,
            "broker_id": self.broker_id,
            "configs": [e.to_dict() for e in self.entries],
        })
        return d


def view_bytes(view: ClientView) -> int:
    """An upper estimate of the memory one view holds."""
    strings = sum(len(e.key) + len(e.value or "") + len(e.fingerprint or "") + len(e.type) for e in view.entries)
    ident = sum(len(x or "") for x in (view.client_instance_id, view.client_software_name,
                                       view.client_software_version, view.client_id, view.principal,
                                       view.client_address, view.connection_id))
    return _VIEW_OVERHEAD + ident + strings + _ENTRY_OVERHEAD * len(view.entries)


class ClientConfigs:
    """Thread-safe LRU: the newest push per client instance, within ``max_clients`` and ``max_bytes``."""

    def __init__(self, max_clients: int = 10_000, max_bytes: int = 64 * 1024 * 1024) -> None:
        self._lock = threading.Lock()
        self._max = max(1, max_clients)
        self._max_bytes = max_bytes
        self._views: OrderedDict[str, tuple[ClientView, int]] = OrderedDict()
        self.bytes = 0
        self.evicted = 0

    def put(self, view: ClientView) -> bool:
        """Keep ``view`` unless a newer push of the same instance is already held; True when kept.

        A view larger than the whole budget is not kept.
        """
        size = view_bytes(view)
        with self._lock:
            held = self._views.get(view.client_instance_id)
            if held is not None and held[0].timestamp_ms > view.timestamp_ms:
                return False
            if size > self._max_bytes:
                return False
            if held is not None:
                self.bytes -= held[1]
            self._views[view.client_instance_id] = (view, size)
            self._views.move_to_end(view.client_instance_id)
            self.bytes += size
            while len(self._views) > self._max or self.bytes > self._max_bytes:
                _, (_, dropped) = self._views.popitem(last=False)
                self.bytes -= dropped
                self.evicted += 1
            return True

    def get(self, client_instance_id: str) -> ClientView | None:
        with self._lock:
            held = self._views.get(client_instance_id)
            return held[0] if held is not None else None

    def recent(self, limit: int = 50) -> list[ClientView]:
        """The most recently pushed instances, newest first."""
        with self._lock:
            views = [view for view, _ in self._views.values()]
        views.sort(key=lambda v: v.timestamp_ms, reverse=True)
        return views[:limit]

    def __len__(self) -> int:
        with self._lock:
            return len(self._views)

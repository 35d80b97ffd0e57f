"""Per client software name and version: the request versions its connections sent, from contract events.

``ClientUsage`` is the row readiness works on; the streaming job keeps the same
facts incrementally. ``usage_from_events`` folds a batch of events (a replay
file, a test's topic) into those rows: only ``connection_closed`` events with
``request_versions`` (a gateway in proxy mode) carry usage; others are skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from configwatch.contract import CONNECTION_CLOSED
from configwatch.records import Event

__all__ = ["ClientUsage", "usage_from_events"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ClientUsage:
    """What the connections of one client software name and version sent.

    ``connections`` counts connections whose usage is known; ``overflow`` the
    requests not recorded because a connection's set was full (then the pairs
    are incomplete)."""

    client_software_name: str
    client_software_version: str
    request_versions: frozenset[tuple[int, int]]
    connections: int = 0
    client_instance_ids: frozenset[str] = field(default_factory=frozenset)
    overflow: int = 0


@dataclass
class _Acc:
    pairs: set[tuple[int, int]] = field(default_factory=set)
    connections: set[str] = field(default_factory=set)
    instances: set[str] = field(default_factory=set)
    overflow: int = 0


def usage_from_events(events: Iterable[Event]) -> tuple[ClientUsage, ...]:
    """Fold ``connection_closed`` events with ``request_versions`` into one row per (name, version), sorted.

    A connection counts once however often its close is delivered (the contract allows
    duplicates); absent names and versions are the contract's ``unknown``."""
    acc: dict[tuple[str, str], _Acc] = {}
    for event in events:
        if event.event != CONNECTION_CLOSED or event.request_versions is None:
            continue
        row = acc.setdefault(event.software, _Acc())
        row.pairs.update(event.request_versions)
        row.connections.add(event.connection_id or "")
        if event.client_instance_id:
            row.instances.add(event.client_instance_id)
        row.overflow += event.request_versions_overflow or 0
    return tuple(ClientUsage(name, version, frozenset(row.pairs), len(row.connections), frozenset(row.instances),
                             row.overflow)
                 for (name, version), row in sorted(acc.items()))

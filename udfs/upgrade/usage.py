"""Per client software name and version: the request versions its connections sent, from contract events.

``ClientUsage`` is the row readiness works on. The streaming job keeps the same
facts incrementally and writes them as ``configwatch.records.VersionUsage``
records (``usage_from_records`` turns those into rows); ``usage_from_events``
folds a batch of events (a replay file, a test's topic) into rows directly. Only
``connection_closed`` and ``connection_usage`` events with ``request_versions`` (a
gateway in proxy mode) carry usage. ``encode_usage``/``decode_usage`` carry one
report's pairs through the gauge transition (a delta's ``usage``) as one string.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from configwatch.contract import CONNECTION_CLOSED, CONNECTION_USAGE
from configwatch.records import Event, VersionUsage

__all__ = ["ClientUsage", "decode_usage", "encode_usage", "usage_from_events", "usage_from_records"]

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
    client_id: str | None = None  # clients that name no software (below ApiVersions v3): grouped by both
    principal: str | None = None


@dataclass
class _Acc:
    pairs: set[tuple[int, int]] = field(default_factory=set)
    connections: set[str] = field(default_factory=set)
    instances: set[str] = field(default_factory=set)
    overflow: int = 0


def usage_from_events(events: Iterable[Event]) -> tuple[ClientUsage, ...]:
    """Fold ``connection_closed`` and ``connection_usage`` events with ``request_versions`` into one row per
    (name, version), sorted.

    A connection counts once, at its close, however often that is delivered (the contract allows
    duplicates); absent names and versions are the contract's ``unknown``. A ``connection_usage`` names
    the software of its connection, as the gateway's events all do."""
    acc: dict[tuple[str, str, str | None, str | None], _Acc] = {}
    for event in events:
        if event.event not in (CONNECTION_CLOSED, CONNECTION_USAGE) or event.request_versions is None:
            continue
        unnamed = event.client_software_name is None
        group = (event.client_id, event.principal) if unnamed else (None, None)
        row = acc.setdefault((*event.software, *group), _Acc())
        row.pairs.update(event.request_versions)
        if event.event == CONNECTION_CLOSED:
            row.connections.add(event.connection_id or "")
        if event.client_instance_id:
            row.instances.add(event.client_instance_id)
        row.overflow += event.request_versions_overflow or 0
    return tuple(ClientUsage(name, version, frozenset(row.pairs), len(row.connections), frozenset(row.instances),
                             row.overflow, client_id, principal)
                 for (name, version, client_id, principal), row in sorted(acc.items(), key=lambda kv: str(kv[0])))


def usage_from_records(records: Iterable[VersionUsage]) -> tuple[ClientUsage, ...]:
    """The job's usage records (the latest per key) as rows, sorted by name and version."""
    return tuple(ClientUsage(r.client_software_name, r.client_software_version, r.pairs, r.connections,
                             frozenset(r.client_instance_ids), r.overflow, r.client_id, r.principal)
                 for r in sorted(records, key=lambda r: r.key))


def encode_usage(pairs: Any, overflow: Any) -> str | None:
    """One close's ``request_versions`` (decoded: a list of ``{api_key, version}``) and overflow as a string;
    None when the close carries no usage (``request_versions`` absent)."""
    if pairs is None:
        return None
    flat = sorted({(int(p["api_key"]), int(p["version"])) for p in pairs})
    return json.dumps({"p": flat, "o": int(overflow or 0)}, separators=(",", ":"))


def decode_usage(text: str) -> tuple[list[tuple[int, int]], int]:
    """What ``encode_usage`` wrote: the sorted pairs and the overflow."""
    doc = json.loads(text)
    return [(int(k), int(v)) for k, v in doc["p"]], int(doc["o"])

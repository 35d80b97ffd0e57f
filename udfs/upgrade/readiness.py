"""Is a client ready for a target broker release? Judged from the request versions it really sent.

A request breaks on the target when the target does not serve its API at all, or
serves it only from a newer version (KIP-896 removed versions in 4.0: the broker
closes the connection). A version newer than the target's newest is no problem:
the client negotiates down through ApiVersions. A version the target still serves
but marks deprecated is reported apart, as a warning. A client with no recorded
request versions is ``unknown``, not ready.

Pure functions over ``udfs.upgrade.usage.ClientUsage`` rows and the release data
(``udfs.upgrade.releases``); the report, the API and the dashboard share them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from configwatch.contract import usage_key
from udfs.upgrade.releases import BrokerRelease, api_name, broker_release
from udfs.upgrade.usage import ClientUsage

__all__ = ["ClientReadiness", "Request", "Status", "UpgradeReadiness", "check_client", "check_readiness"]

log = logging.getLogger(__name__)

Status = Literal["ready", "not_ready", "unknown"]
_ORDER: dict[str, int] = {"not_ready": 0, "unknown": 1, "ready": 2}


@dataclass(frozen=True, slots=True)
class Request:
    """One (API, version) pair a client sent, judged against the target: ``why`` is ``removed`` (older than the
    target's oldest), ``not_served`` (no such API on the target) or ``deprecated``; ``served`` the target's
    (min, max), if it serves the API."""

    api_key: int
    api_name: str
    version: int
    why: str
    served: tuple[int, int] | None

    def describe(self) -> str:
        """``Produce v2 (removed; the target serves v3-v12)``: one line for a table or a page."""
        if self.served is None:
            return f"{self.api_name} v{self.version} (not served by the target)"
        return f"{self.api_name} v{self.version} ({self.why}; the target serves v{self.served[0]}-v{self.served[1]})"

    def to_dict(self) -> dict[str, Any]:
        return {"api_key": self.api_key, "api": self.api_name, "version": self.version, "why": self.why,
                "served": list(self.served) if self.served else None, "text": self.describe()}


@dataclass(frozen=True, slots=True)
class ClientReadiness:
    """One client software name and version against the target: its status, the requests that break (``offending``)
    and those the target deprecates, and who uses it. ``complete`` is False when some connection recorded more
    distinct requests than the gateway keeps (a ready verdict is then about the recorded ones only)."""

    client_software_name: str
    client_software_version: str
    status: Status
    offending: tuple[Request, ...]
    deprecated: tuple[Request, ...]
    connections: int
    client_instance_ids: tuple[str, ...]
    request_versions: tuple[tuple[int, int], ...]
    complete: bool = True
    client_id: str | None = None  # a client naming no software: grouped by client id and principal
    principal: str | None = None

    @property
    def key(self) -> str:
        return usage_key(self.client_software_name, self.client_software_version, self.client_id, self.principal)

    @property
    def ready(self) -> bool:
        return self.status == "ready"

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "client_software_name": self.client_software_name,
                "client_software_version": self.client_software_version, "client_id": self.client_id,
                "principal": self.principal, "status": self.status,
                "offending": [r.to_dict() for r in self.offending],
                "deprecated": [r.to_dict() for r in self.deprecated], "connections": self.connections,
                "client_instance_ids": list(self.client_instance_ids),
                "request_versions": [{"api_key": k, "version": v} for k, v in self.request_versions],
                "complete": self.complete}


@dataclass(frozen=True, slots=True)
class UpgradeReadiness:
    """Every client against one target release, not ready first; ``source`` says where the release data came from."""

    target: str
    kafka_clients: str
    source: str
    clients: tuple[ClientReadiness, ...]

    @property
    def not_ready(self) -> tuple[ClientReadiness, ...]:
        return tuple(c for c in self.clients if c.status == "not_ready")

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "kafka_clients": self.kafka_clients, "source": self.source,
                "clients": [c.to_dict() for c in self.clients]}


def _judge(api_key: int, version: int, target: BrokerRelease) -> Request | None:
    api = target.api(api_key)
    if api is None:
        return Request(api_key, api_name(api_key), version, "not_served", None)
    served = (api.min_version, api.max_version)
    if version < api.min_version:
        return Request(api_key, api.name, version, "removed", served)
    if api.is_deprecated(version):
        return Request(api_key, api.name, version, "deprecated", served)
    return None


def check_client(usage: ClientUsage, target: BrokerRelease) -> ClientReadiness:
    """Judge one client's usage against ``target``."""
    pairs = tuple(sorted(usage.request_versions))
    judged = [r for r in (_judge(key, version, target) for key, version in pairs) if r is not None]
    offending = tuple(r for r in judged if r.why != "deprecated")
    status: Status = "not_ready" if offending else ("ready" if pairs else "unknown")
    return ClientReadiness(usage.client_software_name, usage.client_software_version, status, offending,
                           tuple(r for r in judged if r.why == "deprecated"), usage.connections,
                           tuple(sorted(usage.client_instance_ids)), pairs, complete=usage.overflow == 0,
                           client_id=usage.client_id, principal=usage.principal)


def check_readiness(usage: Iterable[ClientUsage], target: str | BrokerRelease) -> UpgradeReadiness:
    """Judge every usage row against ``target`` (``"4.0"`` or a release); raises
    ``udfs.upgrade.releases.UnknownReleaseError`` for a release the data does not describe."""
    release = broker_release(target) if isinstance(target, str) else target
    clients = sorted((check_client(u, release) for u in usage),
                     key=lambda c: (_ORDER[c.status], c.key))
    return UpgradeReadiness(release.release, release.kafka_clients, release.source, tuple(clients))

"""The KIP-511 connection registry: who is connected, as learned from ApiVersions.

A connection is registered after its first valid ApiVersions request, which
publishes ``connection_opened``; when the socket ends, a registered connection
publishes ``connection_closed``. The registry also answers the KIP metrics'
questions: open connections per software name and version (given an identity
key, a name or version holding a secret counts under the marker its published
events carry, ``mask_identity``), and the number of unique client instance ids
among open connections.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

from configwatch.contract import CONNECTION_CLOSED, CONNECTION_OPENED, CONNECTION_USAGE, UNKNOWN_SOFTWARE
from configwatch.records import Event
from configwatch.secrets import SecretStr
from policy.api import RequestContext
from policy.publisher import EventSink
from udfs.sensitivity import mask_identity

__all__ = ["ConnectionRegistry"]

log = logging.getLogger(__name__)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class ConnectionRegistry:
    """Open, registered connections keyed by connection id (one event loop uses it)."""

    def __init__(self, sink: EventSink | None, identity_key: SecretStr | None = None) -> None:
        self._sink = sink
        self._identity_key = identity_key
        self._open: dict[str, RequestContext] = {}
        self._instances: Counter[str] = Counter()
        self._software: Counter[tuple[str, ...]] = Counter()
        self._security: Counter[tuple[str, ...]] = Counter()

    def register(self, context: RequestContext) -> bool:
        """Record a connection's identity; publishes ``connection_opened`` the first time only."""
        if context.connection_id in self._open:
            return False
        self._open[context.connection_id] = context
        if context.client_instance_id:
            self._instances[context.client_instance_id] += 1
        software, security = self._labels_of(context)
        self._software[software] += 1
        self._security[security] += 1
        self._publish(CONNECTION_OPENED, context)
        return True

    def unregister(self, connection_id: str, closed_fields: Mapping[str, Any] | None = None) -> bool:
        """Forget a connection; publishes ``connection_closed`` if it was registered, with ``closed_fields``
        (the proxy's ``request_versions``) added to the identity."""
        context = self._open.pop(connection_id, None)
        if context is None:
            return False
        if context.client_instance_id:
            self._instances[context.client_instance_id] -= 1
            if self._instances[context.client_instance_id] <= 0:
                del self._instances[context.client_instance_id]
        for counts, labels in zip((self._software, self._security), self._labels_of(context), strict=True):
            counts[labels] -= 1
            if counts[labels] <= 0:
                del counts[labels]
        self._publish(CONNECTION_CLOSED, context, closed_fields)
        return True

    def report_usage(self, connection_id: str, fields: Mapping[str, Any]) -> bool:
        """Publish ``connection_usage`` (``fields``: the proxy's new request versions) for a registered connection."""
        context = self._open.get(connection_id)
        if context is None:
            return False
        self._publish(CONNECTION_USAGE, context, fields)
        return True

    def context(self, connection_id: str) -> RequestContext | None:
        return self._open.get(connection_id)

    @property
    def open_connections(self) -> int:
        return len(self._open)

    @property
    def unique_client_instances(self) -> int:
        return len(self._instances)

    def connections_by_software(self) -> dict[tuple[str, ...], int]:
        """KIP-511 ``connections`` per (software name, version) as counted by :meth:`_software_of`."""
        return dict(self._software)

    def connections_by_security(self) -> dict[tuple[str, ...], int]:
        """Open connections per (software name, version, security protocol, SASL mechanism, TLS version)."""
        return dict(self._security)

    def _labels_of(self, context: RequestContext) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """A connection's (software) and (software, protocol, mechanism, TLS version) labels: one identity scan."""
        software = self._software_of(context)
        return software, (*software, context.security_protocol or "none", context.sasl_mechanism or "none",
                          context.tls_version or "none")

    def _software_of(self, context: RequestContext) -> tuple[str, str]:
        """The (name, version) a connection counts under: as its events are published; absent is unknown."""
        name, version = context.client_software_name, context.client_software_version
        if self._identity_key is not None:
            shown = mask_identity(Event(event=CONNECTION_OPENED, timestamp_ms=0, client_software_name=name,
                                        client_software_version=version), self._identity_key)
            name, version = shown.client_software_name, shown.client_software_version
        return (name or UNKNOWN_SOFTWARE, version or UNKNOWN_SOFTWARE)

    def _publish(self, event_type: str, context: RequestContext, extra: Mapping[str, Any] | None = None) -> None:
        if self._sink is None:
            return
        event = Event(event=event_type, timestamp_ms=_now_ms(), **context.event_fields(), **(extra or {}))
        self._sink.offer(event)


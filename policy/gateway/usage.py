"""What one proxied connection's client asked of the broker: the distinct (API key, version) pairs it sent.

The proxy records each request it forwards, before forwarding it, so a request the
broker refuses by closing the connection (an old client's Produce v2 on Kafka 4.x)
is still recorded; ApiVersions is recorded at the version the client used, not the
one the gateway forwards. The set is bounded (``MAX_REQUEST_VERSIONS``): past it,
requests with a pair not yet recorded are counted, not kept. A long-lived
connection reports what is new every ``--gateway-usage-interval-s`` in a
``connection_usage`` event (``report``, numbered by ``usage_sequence``), and its
``connection_closed`` carries what no report did (``event_fields``), so each pair
of a connection is published once, as ``request_versions`` and
``request_versions_overflow``.
"""

from __future__ import annotations

import logging
from typing import Any

from configwatch.contract import MAX_REQUEST_VERSIONS

__all__ = ["RequestUsage"]

log = logging.getLogger(__name__)


class RequestUsage:
    """The distinct (API key, version) pairs of one connection's requests, up to a cap."""

    __slots__ = ("_cap", "_pairs", "_reported", "_reported_overflow", "overflow", "sequence")

    def __init__(self, cap: int = MAX_REQUEST_VERSIONS) -> None:
        self._cap = cap
        self._pairs: set[tuple[int, int]] = set()
        self.overflow = 0  # requests whose pair was not recorded because the set was full
        self._reported: set[tuple[int, int]] = set()
        self._reported_overflow = 0
        self.sequence = 0  # connection_usage events published so far

    def record(self, api_key: int, version: int) -> None:
        """Note one request; cheap enough for every request of the connection."""
        pair = (api_key, version)
        if pair in self._pairs:
            return
        if len(self._pairs) >= self._cap:
            if not self.overflow:
                log.info("more than %d distinct request versions on one connection: counting, not recording",
                         self._cap)
            self.overflow += 1
            return
        self._pairs.add(pair)

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """The recorded pairs, sorted by API key then version."""
        return tuple(sorted(self._pairs))

    def report(self) -> dict[str, Any] | None:
        """The next ``connection_usage`` fields: what is new since the last report, numbered; None if nothing is."""
        new = self._pairs - self._reported
        over = self.overflow - self._reported_overflow
        if not new and not over:
            return None
        self._reported |= new
        self._reported_overflow = self.overflow
        self.sequence += 1
        fields: dict[str, Any] = {"request_versions": tuple(sorted(new)), "usage_sequence": self.sequence}
        if over:
            fields["request_versions_overflow"] = over
        return fields

    def event_fields(self) -> dict[str, Any]:
        """The ``connection_closed`` fields: ``request_versions`` always (proxy mode; what no report carried), the
        overflow when any."""
        fields: dict[str, Any] = {"request_versions": tuple(sorted(self._pairs - self._reported))}
        if self.overflow > self._reported_overflow:
            fields["request_versions_overflow"] = self.overflow - self._reported_overflow
        return fields

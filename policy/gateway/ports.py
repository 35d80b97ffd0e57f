"""Which gateway port stands for which broker (proxy mode): a port per broker, for any node ids.

``--gateway-broker-ports`` maps node ids to ports explicitly, as ranges
(``1001-1099=9201``: node 1001 on 9201, 1002 on 9202, ...) or single ids
(``5=9300``); that is the scheme for clusters whose ids are large or sparse (as
Kroxylicious' range-aware port-per-node scheme). A node no range covers gets
``--gateway-broker-port-base`` + its id when that is a port; otherwise (or with a
base of 0) a free port, which a client that cached it loses when the gateway restarts.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from configwatch.errors import UsageError

__all__ = ["BrokerPorts"]

_FLAG = "--gateway-broker-ports"


@dataclass(frozen=True, slots=True)
class BrokerPorts:
    """Node id ranges (inclusive) and the port of each range's first node; then ``base`` + id."""

    ranges: tuple[tuple[int, int, int], ...] = ()  # (lowest id, highest id, its port)
    base: int = 0

    @classmethod
    def parse(cls, text: str | None, base: int) -> BrokerPorts:
        """``NODES=PORT,...`` (``NODES``: ``id`` or ``lo-hi``); a mistake is a ``UsageError`` naming the flag."""
        ranges: list[tuple[int, int, int]] = []
        for item in (text or "").split(","):
            if not item.strip():
                continue
            nodes, sep, port_text = item.strip().partition("=")
            lo_text, dash, hi_text = nodes.strip().partition("-")
            try:
                lo = int(lo_text)
                hi = int(hi_text) if dash else lo
                port = int(port_text)
            except ValueError:
                raise UsageError(f"{_FLAG}: {item.strip()!r} is not NODES=PORT (NODES an id or lo-hi, e.g. "
                                 "1001-1099=9201)") from None
            if not sep or lo < 0 or hi < lo:
                raise UsageError(f"{_FLAG}: {item.strip()!r} is not NODES=PORT with lo <= hi")
            if port <= 0 or port + (hi - lo) > 65535:
                raise UsageError(f"{_FLAG}: {item.strip()!r} needs ports {port}-{port + hi - lo}, beyond 1-65535")
            ranges.append((lo, hi, port))
        ranges.sort()
        for (_lo, hi1, _p), (lo2, _hi, _q) in pairwise(ranges):
            if lo2 <= hi1:
                raise UsageError(f"{_FLAG}: node ranges overlap at node {lo2}")
        spans = sorted((p, p + hi - lo) for lo, hi, p in ranges)
        for (_a1, b1), (a2, _b2) in pairwise(spans):
            if a2 <= b1:
                raise UsageError(f"{_FLAG}: two ranges share port {a2}")
        return cls(tuple(ranges), base)

    def port(self, node_id: int) -> int:
        """The gateway port of node ``node_id``; 0 means a free port."""
        for lo, hi, first in self.ranges:
            if lo <= node_id <= hi:
                return first + (node_id - lo)
        if self.base > 0 and self.base + node_id <= 65535:
            return self.base + node_id
        return 0

    def ports(self) -> set[int]:
        """Every port the explicit ranges claim."""
        return {p for lo, hi, first in self.ranges for p in range(first, first + hi - lo + 1)}

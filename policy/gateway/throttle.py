"""PushConfig quotas: a token bucket per client, as Kafka's broker keeps a quota per (user, client id).

A throttled request is answered at once with ThrottleTimeMs, and the gateway then
reads nothing more from that connection for the throttle time (KIP-219's muted
channel), so a noisy client waits instead of spinning and others keep their rate.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict

__all__ = ["ClientQuotas", "TokenBucket"]


class TokenBucket:
    """``rate`` tokens per second, holding at most ``burst``; a rate of 0 never throttles."""

    def __init__(self, rate: float, burst: float | None = None) -> None:
        self.rate = rate
        self.burst = burst if burst is not None else max(1.0, rate)
        self._tokens = self.burst
        self._last = time.monotonic()

    def acquire(self) -> int:
        """Take a token: 0 when granted, else the milliseconds until one is available."""
        if self.rate <= 0:
            return 0
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0
        return max(1, math.ceil((1.0 - self._tokens) / self.rate * 1000))


class ClientQuotas:
    """One :class:`TokenBucket` per client key (principal and client id or instance id), LRU-bounded."""

    def __init__(self, rate: float, *, max_clients: int = 100_000) -> None:
        self.rate = rate
        self._max_clients = max_clients
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def acquire(self, client: str) -> int:
        """Take a token for ``client``: 0 when granted, else the milliseconds until one is available."""
        if self.rate <= 0:
            return 0
        bucket = self._buckets.pop(client, None) or TokenBucket(self.rate)
        self._buckets[client] = bucket
        while len(self._buckets) > self._max_clients:
            self._buckets.popitem(last=False)
        return bucket.acquire()

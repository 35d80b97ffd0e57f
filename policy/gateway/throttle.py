"""PushConfig quotas: a token bucket per client, as Kafka's broker keeps a quota per (user, client id).

A throttled request is answered at once with ThrottleTimeMs, and the gateway then
reads nothing more from that connection for the throttle time (KIP-219's muted
channel), so a noisy client waits instead of spinning and others keep their rate.
"""

from __future__ import annotations

import math
from collections import OrderedDict

from configwatch.ratelimit import TokenBucket

__all__ = ["ClientQuotas"]


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
        wait_s = bucket.try_acquire()
        return max(1, math.ceil(wait_s * 1000)) if wait_s > 0 else 0

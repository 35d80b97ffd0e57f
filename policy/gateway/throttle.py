"""A token bucket for the gateway's PushConfig rate limit (ThrottleTimeMs on excess)."""

from __future__ import annotations

import math
import time

__all__ = ["TokenBucket"]


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

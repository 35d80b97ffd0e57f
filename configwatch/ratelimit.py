"""One token bucket for every rate limit in configwatch (the gateway's push quotas, the webhook's pacing).

``rate`` tokens per second, holding at most ``burst``; a rate of 0 or less never
limits. Two ways to take a token:

- :meth:`TokenBucket.try_acquire` takes one if there is one and otherwise says how
  long until there is (Kafka's quota style: answer with a throttle time, take nothing);
- :meth:`TokenBucket.acquire` always takes one, going into debt, and sleeps until it
  is due (a caller that must send, paced).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    """Thread-safe; ``clock`` and ``sleep`` are injectable for tests."""

    def __init__(self, rate: float, burst: float | None = None, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.rate = rate
        self.burst = burst if burst is not None else max(1.0, rate)
        self._clock, self._sleep = clock, sleep
        self._tokens, self._last = self.burst, clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now

    def try_acquire(self) -> float:
        """Take a token: 0.0 when granted, else the seconds until one is available (nothing taken)."""
        if self.rate <= 0:
            return 0.0
        with self._lock:
            self._refill()
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return 0.0
            return (1.0 - self._tokens) / self.rate

    def acquire(self) -> float:
        """Take a token, waiting as long as needed; returns the seconds waited."""
        if self.rate <= 0:
            return 0.0
        with self._lock:
            self._refill()
            wait = 0.0 if self._tokens >= 1 else (1 - self._tokens) / self.rate
            self._tokens -= 1  # may go negative: later callers wait for it
        if wait > 0:
            self._sleep(wait)
        return wait

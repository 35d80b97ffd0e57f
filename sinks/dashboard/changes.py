"""A bounded, sequenced log of state changes that live page connections wait on.

The consumer thread publishes one change per batch (a gauges snapshot, a new
alert, a client push); each Server-Sent Events connection remembers the last
sequence number it sent and waits for newer ones. A connection that fell
further behind than the log holds gets ``None`` and resynchronises from the API.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

__all__ = ["Change", "ChangeFeed"]


@dataclass(frozen=True, slots=True)
class Change:
    """One published change: an SSE event name and its JSON payload (already safe to serve)."""

    seq: int
    event: str
    data: str


class ChangeFeed:
    """Thread-safe publish/wait; ``close()`` wakes every waiter for shutdown."""

    def __init__(self, capacity: int = 1000) -> None:
        self._cond = threading.Condition()
        self._log: deque[Change] = deque(maxlen=max(1, capacity))
        self._seq = 0
        self._closed = False

    @property
    def seq(self) -> int:
        with self._cond:
            return self._seq

    @property
    def closed(self) -> bool:
        with self._cond:
            return self._closed

    def publish(self, event: str, data: str) -> int:
        with self._cond:
            self._seq += 1
            self._log.append(Change(self._seq, event, data))
            self._cond.notify_all()
            return self._seq

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def since(self, after: int, timeout_s: float) -> list[Change] | None:
        """Changes newer than ``after``, waiting up to ``timeout_s`` for one.

        Returns ``[]`` on timeout or close, ``None`` when changes after ``after``
        have already left the log (the caller must resynchronise).
        """
        with self._cond:
            self._cond.wait_for(lambda: self._closed or self._seq > after, timeout=timeout_s)
            if self._seq <= after:
                return []
            if not self._log or self._log[0].seq > after + 1:
                return None
            return [c for c in self._log if c.seq > after]

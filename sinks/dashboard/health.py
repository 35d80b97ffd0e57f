"""The dashboard's own health, per consumed topic: records read, lag, last update time."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

__all__ = ["ConsumerHealth", "TopicHealth"]

OUTCOMES = ("ok", "invalid", "ignored")


@dataclass
class TopicHealth:
    """Counters of one topic. ``lag`` is None until the end offsets were first read."""

    topic: str
    role: str
    records: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    lag: int | None = None
    last_record_at: float | None = None  # wall clock (time.time()) of the last record read
    partitions: int = 0


class ConsumerHealth:
    """Thread-safe health of the consumer: per-topic counters, readiness, errors."""

    def __init__(self, roles: dict[str, str]) -> None:
        """``roles`` maps topic -> role (``gauges``, ``alerts``, ``configs``)."""
        self._lock = threading.Lock()
        self._topics = {topic: TopicHealth(topic, role) for topic, role in roles.items()}
        self._ready = threading.Event()
        self._errors = 0
        self._started_at = time.time()

    def count(self, topic: str, outcome: str, n: int = 1) -> None:
        with self._lock:
            t = self._topics[topic]
            t.records[outcome] += n
            t.last_record_at = time.time()

    def set_lag(self, topic: str, lag: int, partitions: int) -> None:
        with self._lock:
            self._topics[topic].lag = lag
            self._topics[topic].partitions = partitions

    def set_ready(self) -> None:
        self._ready.set()

    def wait_ready(self, timeout_s: float) -> bool:
        return self._ready.wait(timeout_s)

    def error(self) -> None:
        with self._lock:
            self._errors += 1

    @property
    def ready(self) -> bool:
        """True once the gauges topic was read to the end it had at startup."""
        return self._ready.is_set()

    @property
    def errors(self) -> int:
        with self._lock:
            return self._errors

    def topics(self) -> list[TopicHealth]:
        """Copies, safe to read without the lock."""
        with self._lock:
            return [TopicHealth(t.topic, t.role, dict(t.records), t.lag, t.last_record_at, t.partitions)
                    for t in self._topics.values()]

    def to_dict(self) -> dict[str, object]:
        now = time.time()
        return {
            "ready": self.ready,
            "consumer_errors": self.errors,
            "uptime_s": round(now - self._started_at, 1),
            "topics": [
                {
                    "topic": t.topic,
                    "role": t.role,
                    "records": t.records,
                    "lag": t.lag,
                    "partitions": t.partitions,
                    "last_update_age_s": None if t.last_record_at is None else round(now - t.last_record_at, 3),
                }
                for t in self.topics()
            ],
        }

"""A non-blocking, bounded path from the ingest edge to the input topic.

``EventPublisher.offer`` never blocks: it puts a contract event in a bounded
buffer, or counts it as dropped (metric + log line) when the buffer is full. One
worker thread feeds an idempotent kafka-python producer (``acks=all``) keyed by
the contract's record key, so events of one connection stay in order.
``close`` flushes. Every offered event ends in exactly one of ``published``
(acknowledged by Kafka), ``dropped`` (buffer full) or ``failed`` (send error or
still unsent at the close deadline), each logged.

Delivery guarantee: at least once for ``connection_*`` events, idempotent
(exactly once per producer session) for ``config_push``; nothing accepted into
the buffer is lost without being counted.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from kafka import KafkaProducer

from configwatch.records import Event

__all__ = ["EventPublisher", "EventSink", "PublisherAware", "PublisherStats"]

log = logging.getLogger(__name__)

_STOP = object()
_RETRY_CONNECT_S = 1.0
_POLL_S = 0.1


@runtime_checkable
class EventSink(Protocol):
    """Anything that accepts contract events without blocking."""

    def offer(self, event: Event) -> bool: ...


@runtime_checkable
class PublisherAware(Protocol):
    """A policy that publishes through the gateway's shared publisher when given one."""

    def attach_publisher(self, publisher: EventSink) -> None: ...


@dataclass(frozen=True, slots=True)
class PublisherStats:
    """Counts per outcome, each a mapping of event type to count."""

    offered: dict[str, int]
    published: dict[str, int]
    dropped: dict[str, int]
    failed: dict[str, int]
    buffered: int

    def total(self, outcome: str, event: str | None = None) -> int:
        counts: dict[str, int] = getattr(self, outcome)
        return counts.get(event, 0) if event else sum(counts.values())


class EventPublisher:
    """Bounded buffer + one producer thread; see the module docstring."""

    def __init__(self, bootstrap_servers: str, topic: str, *, buffer_size: int = 10_000,
                 client_id: str = "configwatch-gateway", producer_config: dict[str, Any] | None = None) -> None:
        if buffer_size < 1:
            raise ValueError("buffer_size must be at least 1")
        self.topic = topic
        self._bootstrap = bootstrap_servers
        self._client_id = client_id
        self._producer_config = producer_config or {}
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=buffer_size)
        self._lock = threading.Lock()
        self._counts: dict[str, Counter[str]] = {k: Counter() for k in ("offered", "published", "dropped", "failed")}
        self._closing = threading.Event()
        self._producer: KafkaProducer | None = None
        self._thread = threading.Thread(target=self._run, name=f"publisher-{topic}", daemon=True)
        self._thread.start()

    # -- the non-blocking side -------------------------------------------------------------
    def offer(self, event: Event) -> bool:
        """Buffer ``event`` for publishing; False (and counted as dropped) when the buffer is full."""
        self._count("offered", event.event)
        if self._closing.is_set():
            self._count("dropped", event.event)
            log.warning("dropped a %s event: the publisher is closing", event.event)
            return False
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            self._count("dropped", event.event)
            log.warning("dropped a %s event for %s: publish buffer full (%d)", event.event,
                        event.kafka_key().decode(errors="replace"), self._queue.maxsize)
            return False
        return True

    def stats(self) -> PublisherStats:
        with self._lock:
            return PublisherStats(**{k: dict(v) for k, v in self._counts.items()}, buffered=self._queue.qsize())

    def settled(self) -> bool:
        """True when every offered event has its final outcome."""
        s = self.stats()
        return s.total("offered") == s.total("published") + s.total("dropped") + s.total("failed")

    # -- shutdown ------------------------------------------------------------------------------
    def close(self, timeout_s: float = 30.0) -> PublisherStats:
        """Stop accepting, publish what is buffered, flush, and close the producer."""
        self._closing.set()
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(_STOP)  # wakes the worker at once; when full it notices on its next poll
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            log.error("publisher did not finish within %.0fs; unsent events are counted as failed", timeout_s)
        self._fail_leftovers("not sent before close")
        stats = self.stats()
        log.info("publisher closed: %d published, %d dropped, %d failed", stats.total("published"),
                 stats.total("dropped"), stats.total("failed"))
        return stats

    # -- the worker thread -----------------------------------------------------------------
    def _count(self, outcome: str, event: str, n: int = 1) -> None:
        with self._lock:
            self._counts[outcome][event] += n

    def _connect(self) -> KafkaProducer | None:
        while not self._closing.is_set():
            try:
                return KafkaProducer(
                    bootstrap_servers=self._bootstrap, acks="all", enable_idempotence=True, linger_ms=5,
                    client_id=self._client_id, bootstrap_timeout_ms=5000, **self._producer_config)
            except Exception as exc:  # kafka-python raises several types when no broker answers
                log.warning("cannot connect the publisher to %s (%s); retrying", self._bootstrap, exc)
                self._closing.wait(_RETRY_CONNECT_S)
        return None

    def _run(self) -> None:
        self._producer = self._connect()
        if self._producer is None:
            return
        try:
            while True:
                try:
                    item = self._queue.get(timeout=_POLL_S)
                except queue.Empty:
                    if self._closing.is_set():
                        break  # closing and drained
                    continue
                if item is _STOP:
                    continue  # publish whatever is still buffered, then stop on the empty poll
                self._send(item)
        finally:
            self._producer.flush(timeout=10)
            self._producer.close(timeout=10)

    def _send(self, event: Event) -> None:
        assert self._producer is not None
        name = event.event
        try:
            future = self._producer.send(self.topic, value=event.to_json().encode(), key=event.kafka_key())
        except Exception as exc:  # KafkaTimeoutError, buffer exhaustion, serialization: all mean not sent
            self._count("failed", name)
            log.error("failed to publish a %s event: %s", name, exc)
            return
        future.add_callback(lambda _md: self._count("published", name))
        future.add_errback(lambda exc: self._on_error(name, exc))

    def _on_error(self, name: str, exc: BaseException) -> None:
        self._count("failed", name)
        log.error("failed to publish a %s event: %s", name, exc)

    def _fail_leftovers(self, why: str) -> None:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not _STOP:
                self._count("failed", item.event)
                log.error("failed to publish a %s event: %s", item.event, why)


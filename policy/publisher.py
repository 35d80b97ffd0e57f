"""A non-blocking, bounded path from the ingest edge to the input topic.

``EventPublisher.offer`` never blocks: it puts a contract event, serialized, in a
buffer bounded by events and by bytes, or counts it as dropped (metric + log
line) when the buffer is full. ``unavailable`` says why an event would not be
published soon (never connected, no open connection and a metadata refresh
overdue, Kafka has acknowledged nothing for a while, buffer full, closing): the policy
refuses pushes with a retriable error then, rather than answer "accepted" for
what may never arrive. The producer refreshes metadata every few seconds, so a
broker that goes away is noticed while idle too, and one that comes back is
reconnected to without waiting for traffic; each change is one log line. One
worker thread feeds an idempotent kafka-python producer (``acks=all``) keyed by
the contract's record key, so events of one connection stay in order.
``close`` flushes. Every offered event ends in exactly one of ``published``
(acknowledged by Kafka), ``dropped`` (buffer full) or ``failed`` (send error or
still unsent at the close deadline), each logged.

Delivery guarantee: at least once for ``connection_*`` events, idempotent
(exactly once per producer session) for ``config_push``; nothing accepted into
the buffer is lost without being counted. Given an ``identity_key``, an identity
field holding a secret (a token as client id) leaves as its ``redacted:`` marker:
the worker scans the identity fields of the events it takes from the buffer in one
call, so ``offer`` costs its caller (the gateway's event loop) no scan.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from kafka import KafkaProducer

from configwatch.records import Event
from configwatch.secrets import SecretStr
from udfs.sensitivity import holding_secrets, identity_values, mask_identity

__all__ = ["EventPublisher", "EventSink", "PublisherAware", "PublisherStats"]

log = logging.getLogger(__name__)

_RETRY_CONNECT_S = 1.0
_POLL_S = 0.1
# The producer's metadata refresh: keeps a connection in use (never idle-closed) and notices a lost cluster.
_METADATA_MAX_AGE_MS = 5000
# How often the worker looks at the producer's link to Kafka, and how long it may look lost before it counts.
_LINK_CHECK_S = 0.5
_LINK_GRACE_S = 0.5


def _link_up(producer: KafkaProducer) -> bool:
    """The producer has a connection open to Kafka, or refreshed its metadata within a refresh period.

    No open connection alone is no outage (kafka-python closes its bootstrap connection and
    opens the next when it needs one); a metadata refresh overdue with none open is.
    """
    if float(producer.metrics().get("producer-metrics", {}).get("connection-count", 1.0)) > 0:
        return True
    refreshed = getattr(getattr(producer, "_metadata", None), "_last_successful_refresh_ms", None)
    if not isinstance(refreshed, (int, float)):  # another kafka-python: no open connection is all there is
        return False
    return time.monotonic() * 1000 - refreshed <= _METADATA_MAX_AGE_MS + 1000
# What one buffered event costs beyond its serialized key and value (the tuple, its ints, the deque slot).
_ITEM_OVERHEAD_BYTES = 200
# Events the worker takes from the buffer at once: their identity fields are scanned in one call.
_BATCH = 256

# A buffered event: its type, key and value as offered (identity not yet masked), its size, its identity values.
_Item = tuple[str, bytes, bytes, int, tuple[str, ...]]


@runtime_checkable
class EventSink(Protocol):
    """Anything that accepts contract events without blocking."""

    def offer(self, event: Event) -> bool: ...

    def unavailable(self) -> str | None: ...


@runtime_checkable
class PublisherAware(Protocol):
    """A policy that publishes through the gateway's shared publisher when given one."""

    def attach_publisher(self, publisher: EventSink) -> None: ...


@dataclass(frozen=True, slots=True)
class PublisherStats:
    """Counts per outcome (each a mapping of event type to count) and the publisher's health."""

    offered: dict[str, int]
    published: dict[str, int]
    dropped: dict[str, int]
    failed: dict[str, int]
    buffered: int
    buffered_bytes: int = 0
    connected: bool = False
    oldest_unacked_age_s: float = 0.0

    def total(self, outcome: str, event: str | None = None) -> int:
        counts: dict[str, int] = getattr(self, outcome)
        return counts.get(event, 0) if event else sum(counts.values())


class EventPublisher:
    """Bounded buffer (events and bytes) + one producer thread; see the module docstring."""

    def __init__(self, bootstrap_servers: str, topic: str, *, buffer_size: int = 10_000,
                 buffer_bytes: int = 32 * 1024 * 1024, stall_s: float = 10.0,
                 client_id: str = "configwatch-gateway", producer_config: dict[str, Any] | None = None,
                 identity_key: SecretStr | None = None) -> None:
        if buffer_size < 1 or buffer_bytes < 1:
            raise ValueError("buffer_size and buffer_bytes must be at least 1")
        self.topic = topic
        self._identity_key = identity_key  # set: identity fields holding a secret leave as their marker
        self._bootstrap = bootstrap_servers
        self._client_id = client_id
        self._producer_config = producer_config or {}
        self._max_items = buffer_size
        self._max_bytes = buffer_bytes
        self._stall_s = stall_s
        # ``_Item``s in arrival order; guarded by _lock, waited on with _ready.
        self._buffer: deque[_Item] = deque()
        self._bytes = 0
        self._unacked: dict[int, float] = {}  # send sequence -> monotonic send time, until acked or failed
        self._seq = 0
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._counts: dict[str, Counter[str]] = {k: Counter() for k in ("offered", "published", "dropped", "failed")}
        self._closing = threading.Event()
        self._producer: KafkaProducer | None = None
        self._link_down_since: float | None = None  # no open connection to Kafka since (monotonic), or None
        self._link_checked = 0.0
        self._thread = threading.Thread(target=self._run, name=f"publisher-{topic}", daemon=True)
        self._thread.start()

    # -- the non-blocking side -------------------------------------------------------------
    def unavailable(self) -> str | None:
        """Why an event offered now would not be published soon (None: it would)."""
        with self._lock:
            return self._unavailable(0)

    def _unavailable(self, size: int) -> str | None:
        if self._closing.is_set():
            return "the publisher is closing"
        if self._producer is None:
            return f"the publisher is not connected to {self._bootstrap}"
        if self._link_lost():
            return f"the publisher has no connection to Kafka at {self._bootstrap}"
        if self._unacked and time.monotonic() - min(self._unacked.values()) > self._stall_s:
            return f"Kafka has acknowledged nothing for {self._stall_s:.0f} s"
        if len(self._buffer) >= self._max_items or self._bytes + size > self._max_bytes:
            return f"the publish buffer is full ({len(self._buffer)} events, {self._bytes} bytes)"
        return None

    def _link_lost(self) -> bool:
        since = self._link_down_since
        return since is not None and time.monotonic() - since > _LINK_GRACE_S

    def wait_connected(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the producer to connect; True once it has."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while self._producer is None and not self._closing.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._ready.wait(min(left, _POLL_S))
            return self._producer is not None

    def offer(self, event: Event) -> bool:
        """Buffer ``event`` for publishing; False (and counted as dropped) when the buffer cannot take it.

        Events are buffered while the producer connects; only a full buffer or a closing
        publisher drops one. ``unavailable`` says whether it would be published soon.
        """
        key, value = event.kafka_key(), event.to_json().encode()
        size = len(key) + len(value) + _ITEM_OVERHEAD_BYTES
        identity = tuple(identity_values(event).values()) if self._identity_key is not None else ()
        with self._lock:
            self._counts["offered"][event.event] += 1
            full = len(self._buffer) >= self._max_items or self._bytes + size > self._max_bytes
            if self._closing.is_set() or full:
                self._counts["dropped"][event.event] += 1
                why = "the publisher is closing" if self._closing.is_set() else (
                    f"publish buffer full ({len(self._buffer)} events, {self._bytes} bytes)")
            else:
                self._buffer.append((event.event, key, value, size, identity))
                self._bytes += size
                self._ready.notify()
                return True
        if self._identity_key is not None:
            key = mask_identity(event, self._identity_key).kafka_key()
        log.warning("dropped a %s event for %s: %s", event.event, key.decode(errors="replace"), why)
        return False

    def stats(self) -> PublisherStats:
        with self._lock:
            now = time.monotonic()
            oldest = now - min(self._unacked.values()) if self._unacked else 0.0
            return PublisherStats(**{k: dict(v) for k, v in self._counts.items()}, buffered=len(self._buffer),
                                  buffered_bytes=self._bytes, oldest_unacked_age_s=oldest,
                                  connected=self._producer is not None and not self._link_lost()
                                  and oldest <= self._stall_s)

    def settled(self) -> bool:
        """True when every offered event has its final outcome."""
        s = self.stats()
        return s.total("offered") == s.total("published") + s.total("dropped") + s.total("failed")

    # -- shutdown ------------------------------------------------------------------------------
    def close(self, timeout_s: float = 30.0) -> PublisherStats:
        """Stop accepting, publish what is buffered, flush, and close the producer."""
        with self._lock:
            self._closing.set()
            self._ready.notify_all()
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
                # linger 50 ms: a fleet reconnecting at once sends two events per connection; fewer,
                # larger batches double the gateway's handshakes/s (docs/benchmarks.md, proxy).
                return KafkaProducer(
                    bootstrap_servers=self._bootstrap, acks="all", enable_idempotence=True, linger_ms=50,
                    client_id=self._client_id, bootstrap_timeout_ms=5000,
                    metadata_max_age_ms=_METADATA_MAX_AGE_MS, **self._producer_config)
            except Exception as exc:  # kafka-python raises several types when no broker answers
                log.warning("cannot connect the publisher to %s (%s); retrying", self._bootstrap, exc)
                self._closing.wait(_RETRY_CONNECT_S)
        return None

    def _check_link(self, producer: KafkaProducer) -> None:
        """Note whether the producer has any connection open to Kafka (at most every ``_LINK_CHECK_S``)."""
        now = time.monotonic()
        if now - self._link_checked < _LINK_CHECK_S:
            return
        self._link_checked = now
        up = _link_up(producer)
        with self._lock:
            was_down = self._link_down_since is not None
            if up == was_down:
                self._link_down_since = None if up else now
        if up and was_down:
            log.warning("the publisher is connected to Kafka at %s again", self._bootstrap)
        elif not up and not was_down:
            log.warning("the publisher lost its connection to Kafka at %s; pushes get a retriable error "
                        "while it is away", self._bootstrap)

    def _next(self, producer: KafkaProducer) -> list[_Item] | None:
        """The oldest buffered events, up to ``_BATCH`` (not while the link is lost); None once closing and drained."""
        while True:
            self._check_link(producer)
            with self._lock:
                # While Kafka is away, events wait here, in the byte-bounded buffer, not in the producer's
                # accumulator (where they would fail after its delivery timeout); at close they go regardless.
                if self._buffer and (not self._link_lost() or self._closing.is_set()):
                    items = [self._buffer.popleft() for _ in range(min(_BATCH, len(self._buffer)))]
                    self._bytes -= sum(item[3] for item in items)
                    return items
                if self._closing.is_set():
                    return None
                self._ready.wait(_POLL_S)

    def _run(self) -> None:
        producer = self._connect()
        if producer is None:
            return
        with self._lock:
            self._producer = producer
            self._ready.notify_all()
        try:
            while (items := self._next(producer)) is not None:
                for name, key, value in self._masked(items):
                    self._send(producer, name, key, value)
        finally:
            producer.flush(timeout=10)
            producer.close(timeout=10)

    def _masked(self, items: list[_Item]) -> list[tuple[str, bytes, bytes]]:
        """Each event's type, key and value to send: identity fields holding a secret replaced by their markers
        (one identity scan for the batch; an event with a secret is serialized again, a rare case)."""
        secret = holding_secrets([v for item in items for v in item[4]]) if self._identity_key is not None else set()
        out = []
        for name, key, value, _, identity in items:
            if secret.intersection(identity):
                assert self._identity_key is not None
                event = mask_identity(Event.from_json(value), self._identity_key)
                key, value = event.kafka_key(), event.to_json().encode()
            out.append((name, key, value))
        return out

    def _send(self, producer: KafkaProducer, name: str, key: bytes, value: bytes) -> None:
        with self._lock:
            self._seq += 1
            seq = self._seq
            self._unacked[seq] = time.monotonic()
        try:
            future = producer.send(self.topic, value=value, key=key)
        except Exception as exc:  # KafkaTimeoutError, buffer exhaustion, serialization: all mean not sent
            self._settle(seq, "failed", name)
            log.error("failed to publish a %s event: %s", name, exc)
            return
        future.add_callback(lambda _md: self._settle(seq, "published", name))
        future.add_errback(lambda exc: self._on_error(seq, name, exc))

    def _settle(self, seq: int, outcome: str, name: str) -> None:
        with self._lock:
            self._unacked.pop(seq, None)
            self._counts[outcome][name] += 1

    def _on_error(self, seq: int, name: str, exc: BaseException) -> None:
        self._settle(seq, "failed", name)
        log.error("failed to publish a %s event: %s", name, exc)

    def _fail_leftovers(self, why: str) -> None:
        with self._lock:
            leftovers = list(self._buffer)
            self._buffer.clear()
            self._bytes = 0
            for name, *_ in leftovers:
                self._counts["failed"][name] += 1
        for name, *_ in leftovers:
            log.error("failed to publish a %s event: %s", name, why)

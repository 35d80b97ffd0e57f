"""The benchmark workload: the fleet simulator's records in a Kafka topic, at any size.

``workload_records(n, key)`` yields ``n`` contract records (Kafka key, JSON value)
in event order. They are the simulator's event stream (``policy.simulator``): per
client a ``connection_opened``, a ``config_push`` (clients of KIP versions; 25-55
entries, about 1.5 KB on the wire) and a ``connection_closed``, with the
simulator's shares of misconfigured and leaking clients. Simulating every client
costs ~0.6 ms, so a base fleet of at most ``BASE_CLIENTS`` is simulated once and
replayed as further generations: each copy gets new connection ids, instance ids
and timestamps, so the job sees distinct connections and clients with the same
configuration mix. ``INVALID_SHARE`` of the records are malformed (for quarantine).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import random
import statistics
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from configwatch.paths import cache_dir
from configwatch.records import Event
from configwatch.secrets import SecretStr, fingerprint
from policy.simulator import FleetSpec, fleet_events, generate_fleet

__all__ = ["BASE_CLIENTS", "INVALID_SHARE", "WorkloadRecord", "produce_workload", "workload_records"]

BASE_CLIENTS = 20_000
INVALID_SHARE = 0.002
_INVALID: tuple[bytes, ...] = (
    b"{not json",
    b'{"schema_version": 1, "event": "config_push"}',
    b'{"schema_version": 1, "event": "config_push", "timestamp_ms": "yesterday", "configs": []}',
    b'["a", "list"]',
)


class WorkloadRecord(NamedTuple):
    """One record: its Kafka key and value, and what it is (``invalid`` for a malformed one)."""

    key: bytes | None
    value: bytes
    event: str
    entries: int = 0
    request_bytes: int = 0


def _base(clients: int, key: SecretStr, seed: int) -> list[list[Event]]:
    """The simulated fleet's events, grouped per client (open, push?, close).

    Simulating a client through the edge's policy costs milliseconds (20,000 clients: about 3
    minutes), so the result is kept in the cache directory, named by everything it depends on:
    the arguments, the key's fingerprint and the code of the simulator, the edge and the rules.
    """
    path = _cached_base(clients, key, seed)
    if path.exists():
        with path.open("rb") as f:
            return list(pickle.load(f))
    groups: dict[str, list[Event]] = {}
    for ev in fleet_events(generate_fleet(FleetSpec(clients=clients, seed=seed)), key, start_ms=0):
        groups.setdefault(ev.connection_id or "", []).append(ev)
    base = list(groups.values())
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_suffix(f".{os.getpid()}.tmp")
    with staging.open("wb") as f:
        pickle.dump(base, f)
    staging.replace(path)
    prefix = path.name.rsplit("-", 1)[0]
    for stale in path.parent.glob(f"{prefix}-*.pickle"):  # the same fleet under earlier code: never read again
        if stale != path:
            stale.unlink(missing_ok=True)
    return base


def _cached_base(clients: int, key: SecretStr, seed: int) -> Path:
    """``base-<clients>-<seed>-<key's fingerprint>-<code digest>.pickle``: one per key, the current code's."""
    code = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent
    for package in ("policy", "udfs", "configwatch"):
        for source in sorted((root / package).rglob("*")):
            if source.suffix in (".py", ".json"):
                code.update(source.relative_to(root).as_posix().encode() + b"\0" + source.read_bytes())
    keyed = fingerprint("bench-base", key)[:12]
    return cache_dir() / "bench" / f"base-{clients}-{seed}-{keyed}-{code.hexdigest()[:16]}.pickle"


def workload_records(n: int, key: SecretStr, *, seed: int = 5, start_ms: int | None = None,
                     base_clients: int | None = None) -> Iterator[WorkloadRecord]:
    """``n`` records of the simulated fleet in event order (1 ms per client), starting at ``start_ms``.

    ``base_clients``: how many clients to simulate (default ``min(BASE_CLIENTS, n // 2)``).
    """
    rng = random.Random(seed)
    base = _base(base_clients or max(1, min(BASE_CLIENTS, n // 2)), key, seed)
    start = int(time.time() * 1000) - 3_600_000 if start_ms is None else start_ms
    sent = 0
    generation = 0
    while True:
        for i, events in enumerate(base):
            clock = start + generation * len(base) + i
            instance = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            for ev in events:
                if sent >= n:
                    return
                if rng.random() < INVALID_SHARE:
                    yield WorkloadRecord(None, _INVALID[sent % len(_INVALID)], "invalid")
                    sent += 1
                    continue
                copy = ev if generation == 0 else dataclasses.replace(
                    ev, connection_id=f"{ev.connection_id}-g{generation}",
                    client_instance_id=instance if ev.client_instance_id else None)
                copy = dataclasses.replace(copy, timestamp_ms=clock + ev.timestamp_ms - events[0].timestamp_ms)
                yield WorkloadRecord(copy.kafka_key(), copy.to_json().encode(), ev.event,
                                     len(ev.configs or ()), ev.request_size_bytes or 0)
                sent += 1
        generation += 1


def produce_workload(bootstrap: str, topic: str, n: int, key: SecretStr, *, partitions: int) -> dict[str, Any]:
    """Create ``topic`` and write ``n`` workload records to it; return what was written (sizes, shares, time)."""
    from kafka import KafkaProducer

    from sinks.kafka import ensure_topic

    ensure_topic(bootstrap, topic, partitions=partitions)
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=20, batch_size=512 * 1024,
                             max_request_size=8 * 1024 * 1024)
    kinds: dict[str, int] = {}
    push_bytes: list[int] = []
    push_wire: list[int] = []
    entries: list[int] = []
    total_bytes = 0
    t0 = time.perf_counter()
    for record in workload_records(n, key):
        producer.send(topic, key=record.key, value=record.value)
        total_bytes += len(record.value)
        kinds[record.event] = kinds.get(record.event, 0) + 1
        if record.event == "config_push":
            push_bytes.append(len(record.value))
            push_wire.append(record.request_bytes)
            entries.append(record.entries)
    producer.flush()
    producer.close()
    seconds = time.perf_counter() - t0

    def spread(values: list[int]) -> dict[str, int]:
        return {"min": min(values), "median": int(statistics.median(values)), "max": max(values)} if values else {}

    return {"records": n, "partitions": partitions, "bytes": total_bytes, "by_event": kinds,
            "push_record_bytes": spread(push_bytes), "push_request_bytes": spread(push_wire),
            "push_entries": spread(entries), "produce_s": round(seconds, 1)}

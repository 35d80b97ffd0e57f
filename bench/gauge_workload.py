"""Simulated connection events for the gauge benchmarks: N connections over a few dozen versions.

``connection_events(n)`` returns contract events in arrival order: every
connection opens, a share of them close later, some opens are redelivered and
some closes name connections never seen. ``expected_gauges`` is the answer by
plain counting, so a benchmark can check the job got it right.
"""

from __future__ import annotations

import random
import uuid
from collections import Counter, defaultdict

from configwatch.records import Event

__all__ = ["VERSIONS", "connection_events", "expected_gauges"]

VERSIONS = (
    [("apache-kafka-java", f"3.{minor}.{patch}") for minor in range(10) for patch in range(3)]
    + [("librdkafka", f"2.{minor}.0") for minor in range(12)]
    + [("sarama", f"1.4{m}.0") for m in range(5)]
    + [(None, None)]  # clients below ApiVersions v3: counted as unknown/unknown
)


def connection_events(n: int, *, seed: int = 11, start_ms: int = 1_790_000_000_000, close_share: float = 0.4,
                      dup_share: float = 0.05, unknown_close_share: float = 0.02,
                      conns_per_instance: int = 2) -> list[Event]:
    """Opens of ``n`` connections, then closes/duplicates/unknown closes, timestamps 1 ms apart."""
    rng = random.Random(seed)
    events: list[Event] = []
    opens: list[Event] = []
    ts = start_ms
    for i in range(n):
        name, version = VERSIONS[(i // conns_per_instance) % len(VERSIONS)]
        instance = str(uuid.UUID(int=rng.getrandbits(128), version=4)) if i % conns_per_instance == 0 else None
        instance = instance or (opens[-1].client_instance_id if opens else None)
        ev = Event(event="connection_opened", timestamp_ms=ts, broker_id=1 + i % 3,
                   connection_id=f"10.0.{i % 3}.1:9092-10.8.{(i >> 16) & 255}.{(i >> 8) & 255}:{30000 + (i & 255)}-{i}",
                   client_instance_id=instance, client_software_name=name, client_software_version=version,
                   client_id=f"app-{i % 97}")
        opens.append(ev)
        events.append(ev)
        ts += 1
    for ev in rng.sample(opens, int(n * dup_share)):
        events.append(ev)  # redelivered open (same record)
    for ev in rng.sample(opens, int(n * close_share)):
        ts += 1
        events.append(Event(event="connection_closed", timestamp_ms=ts, connection_id=ev.connection_id,
                            client_instance_id=ev.client_instance_id, client_software_name=ev.client_software_name,
                            client_software_version=ev.client_software_version))
    for j in range(int(n * unknown_close_share)):
        ts += 1
        events.append(Event(event="connection_closed", timestamp_ms=ts, connection_id=f"gone-{j}"))
    return events


def expected_gauges(events: list[Event]) -> dict[str, tuple[int, int]]:
    """``name/version`` -> (connections, client_instances) after ``events``, by plain counting."""
    open_: dict[str, Event] = {}
    for ev in sorted(events, key=lambda e: e.timestamp_ms):
        cid = ev.connection_id or ""
        if ev.event == "connection_opened":
            open_.setdefault(cid, ev)
        elif ev.event == "connection_closed":
            open_.pop(cid, None)
    conns: Counter[str] = Counter()
    instances: defaultdict[str, set[str]] = defaultdict(set)
    for ev in open_.values():
        key = "/".join(ev.software)
        conns[key] += 1
        if ev.client_instance_id:
            instances[key].add(ev.client_instance_id)
    return {k: (conns[k], len(instances[k])) for k in conns}

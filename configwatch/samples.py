"""Small, deterministic contract events for the demo and tests (the simulator makes realistic ones)."""

from __future__ import annotations

import random
import uuid

from configwatch.records import ConfigEntry, Event

__all__ = ["sample_events"]

_FAMILIES = (("apache-kafka-java", "3.9.1"), ("apache-kafka-java", "4.1.0"), ("librdkafka", "2.6.1"))


def sample_events(count: int, *, seed: int = 7, now_ms: int = 1_790_000_000_000) -> list[Event]:
    """``count`` events: an open, a push and (for every third client) a close per client."""
    rng = random.Random(seed)
    events: list[Event] = []
    i = 0
    while len(events) < count:
        name, version = _FAMILIES[i % len(_FAMILIES)]
        instance = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        conn = f"127.0.0.1:9092-127.0.0.1:{40000 + i}-{i}"
        ident = dict(
            broker_id=1, connection_id=conn, client_instance_id=instance,
            client_software_name=name, client_software_version=version,
            client_id=f"app-{i}", principal="User:ANONYMOUS", listener="PLAINTEXT",
            security_protocol="PLAINTEXT", client_address="127.0.0.1",
        )
        ts = now_ms + i * 10
        events.append(Event(event="connection_opened", timestamp_ms=ts, **ident))  # type: ignore[arg-type]
        configs = (
            ConfigEntry("acks", "all", "STRING", True),
            ConfigEntry("linger.ms", str(rng.choice([0, 5, 20])), "LONG", False),
            ConfigEntry("batch.size", "16384", "INT", True),
        )
        events.append(Event(event="config_push", timestamp_ms=ts + 1, configs=configs,
                            request_size_bytes=120, **ident))  # type: ignore[arg-type]
        if i % 3 == 2:  # every other close carries what a gateway in proxy mode adds: the requests' versions
            used = ((0, 9 + i % 3), (3, 12), (18, 4)) if i % 2 else None
            events.append(Event(event="connection_closed", timestamp_ms=ts + 2, request_versions=used,
                                **ident))  # type: ignore[arg-type]
        i += 1
    return events[:count]

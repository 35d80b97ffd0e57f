"""The job's per-version usage (issue 16) through the keyed step, in memory (no Spark).

``connection_closed`` events with ``request_versions`` (a proxying gateway) fold into one
``usage`` record per software name and version: the pairs, with the connections that sent
each, the connections and instances; the record is never deleted when the connections end.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pyarrow as pa

from configwatch.contract import CONNECTION_CLOSED, CONNECTION_OPENED, CONNECTION_USAGE, GAUGES, USAGE
from configwatch.records import Event, VersionUsage
from configwatch.secrets import SecretStr
from udfs.decode import decode_values
from udfs.memory import MemoryPipeline
from udfs.rules.batch import redacted_marker
from udfs.upgrade.readiness import check_readiness
from udfs.upgrade.usage import decode_usage, encode_usage, usage_from_records

KEY = SecretStr("usage-pipeline-test")


def _batch(events: list[Event], first_offset: int = 0) -> pa.Table:
    values = pa.array([e.to_json().encode() for e in events], pa.binary())
    decoded, _ = decode_values(values)
    n = decoded.num_rows
    return (decoded.append_column("topic", pa.array(["client-configs"] * n, pa.string()))
            .append_column("partition", pa.array([0] * n, pa.int32()))
            .append_column("offset", pa.array(range(first_offset, first_offset + n), pa.int64())))


def _conn(n: int, name: str, version: str, instance: str | None, pairs: Any, t: int = 1_790_000_000_000
          ) -> list[Event]:
    cid = f"127.0.0.1:9192-127.0.0.1:{50000 + n}-{n}"
    common = {"connection_id": cid, "client_software_name": name, "client_software_version": version,
              "client_instance_id": instance}
    return [Event(event=CONNECTION_OPENED, timestamp_ms=t + n, **common),
            Event(event=CONNECTION_CLOSED, timestamp_ms=t + n + 1, request_versions=pairs, **common)]


def test_usage_round_trips_through_its_string() -> None:
    text = encode_usage([{"api_key": 3, "version": 12}, {"api_key": 0, "version": 9}], 2)
    assert text is not None and decode_usage(text) == ([(0, 9), (3, 12)], 2)
    assert encode_usage(None, None) is None


def test_closes_with_request_versions_fold_into_one_usage_record_per_version() -> None:
    pipeline = MemoryPipeline(KEY)
    events = (_conn(1, "kafka-python", "2.0.2", None, ((0, 2), (3, 0), (18, 0)))
              + _conn(2, "kafka-python", "2.0.2", None, ((0, 2), (18, 0)))
              + _conn(3, "apache-kafka-java", "4.0.0", "inst-a", ((0, 11), (18, 4))))
    out = pipeline.process(_batch(events), 1_790_000_100_000)
    usage = {r.key: VersionUsage.from_json(r.value) for r in out if r.kind == USAGE}
    assert set(usage) == {"kafka-python/2.0.2", "apache-kafka-java/4.0.0"}
    old = usage["kafka-python/2.0.2"]
    assert old.request_versions == ((0, 2, 2), (3, 0, 1), (18, 0, 2))
    assert (old.connections, old.client_instances, old.client_instance_ids) == (2, 0, ())
    java = usage["apache-kafka-java/4.0.0"]
    assert (java.connections, java.client_instances, java.client_instance_ids) == (1, 1, ("inst-a",))
    # Every connection closed: the gauges are tombstoned, the usage stays (a later batch adds to it).
    assert all(r.tombstone for r in out if r.kind == GAUGES and r.key == "kafka-python/2.0.2")
    later = pipeline.process(_batch(_conn(4, "kafka-python", "2.0.2", "inst-b", ((0, 2),), t=1_790_000_200_000),
                                    100), 1_790_000_300_000)
    (record,) = [VersionUsage.from_json(r.value) for r in later if r.kind == USAGE]
    assert record.request_versions == ((0, 2, 3), (3, 0, 1), (18, 0, 2))
    assert (record.connections, record.client_instances) == (3, 1)
    # What the report judges: the old client's Produce v2 is gone in 4.0.
    readiness = check_readiness(usage_from_records([record, java]), "4.0")
    assert {(c.client_software_name, c.status) for c in readiness.clients} == {
        ("kafka-python", "not_ready"), ("apache-kafka-java", "ready")}


def test_a_client_instance_id_holding_a_secret_is_counted_stored_and_published_as_its_marker() -> None:
    secret = "AKIAIOSFODNN7EXAMPLE"
    pipeline = MemoryPipeline(KEY)
    out = pipeline.process(_batch(_conn(1, "kafka-python", "2.0.2", secret, ((0, 2),))
                                  + _conn(2, "kafka-python", "2.0.2", "inst-a", ((0, 2),))), 1_790_000_100_000)
    (usage,) = [VersionUsage.from_json(r.value) for r in out if r.kind == USAGE]
    assert usage.client_instance_ids == tuple(sorted((redacted_marker(secret, KEY), "inst-a")))
    assert usage.client_instances == 2  # still counted
    assert secret not in repr([r.value for r in out])
    state = pipeline._state
    assert secret not in repr([state.values, state.lists, state.maps])  # the state


def test_closes_without_request_versions_make_no_usage_record() -> None:
    pipeline = MemoryPipeline(KEY)
    opened, closed = _conn(1, "kafka-python", "2.0.2", None, None)
    assert [r.kind for r in pipeline.process(_batch([opened]), 1_790_000_100_000)] == [GAUGES]
    assert [(r.kind, r.tombstone) for r in pipeline.process(_batch([closed], 1), 1_790_000_100_001)] == [
        (GAUGES, True)]


def _usage_event(n: int, name: str, version: str, pairs: Any, sequence: int, t: int) -> Event:
    return Event(event=CONNECTION_USAGE, timestamp_ms=t, connection_id=f"127.0.0.1:9192-127.0.0.1:{50000 + n}-{n}",
                 client_software_name=name, client_software_version=version, request_versions=pairs,
                 usage_sequence=sequence)


def test_a_long_lived_connection_shows_in_usage_before_it_closes_each_pair_once() -> None:
    pipeline = MemoryPipeline(KEY)
    opened, closed = _conn(1, "apache-kafka-java", "2.8.1", None, ((0, 9),), t=1_790_000_000_000)
    first = _usage_event(1, "apache-kafka-java", "2.8.1", ((3, 12), (18, 3)), 1, 1_790_000_300_000)
    out = pipeline.process(_batch([opened, first]), 1_790_000_300_100)
    (usage,) = [VersionUsage.from_json(r.value) for r in out if r.kind == USAGE]
    assert usage.request_versions == ((3, 12, 1), (18, 3, 1))
    assert usage.connections == 0  # still open: its usage is not complete
    assert [(r.key, r.tombstone) for r in out if r.kind == GAUGES] == [("apache-kafka-java/2.8.1", False)]
    # The same report redelivered, then the next one and the close with what is left: each pair counted once.
    second = _usage_event(1, "apache-kafka-java", "2.8.1", ((1, 11),), 2, 1_790_000_600_000)
    out = pipeline.process(_batch([first, second], 2), 1_790_000_600_100)
    (usage,) = [VersionUsage.from_json(r.value) for r in out if r.kind == USAGE]
    assert usage.request_versions == ((1, 11, 1), (3, 12, 1), (18, 3, 1))
    assert not [r for r in out if r.kind == GAUGES]  # a usage report changes no gauge
    closed = replace(closed, timestamp_ms=1_790_000_700_000)
    out = pipeline.process(_batch([closed], 4), 1_790_000_700_100)
    (usage,) = [VersionUsage.from_json(r.value) for r in out if r.kind == USAGE]
    assert usage.request_versions == ((0, 9, 1), (1, 11, 1), (3, 12, 1), (18, 3, 1))
    assert usage.connections == 1
    # A report that arrives after the close (or for a connection never seen) counts nothing.
    late = _usage_event(1, "apache-kafka-java", "2.8.1", ((0, 3),), 3, 1_790_000_800_000)
    assert not [r for r in pipeline.process(_batch([late], 5), 1_790_000_800_100) if r.kind == USAGE]


def test_clients_naming_no_software_are_grouped_by_client_id_and_principal() -> None:
    pipeline = MemoryPipeline(KEY)

    def old(n: int, client_id: str, principal: str) -> list[Event]:
        return [replace(e, client_software_name=None, client_software_version=None, client_id=client_id,
                        principal=principal) for e in _conn(n, "x", "y", None, ((0, 2), (18, 0)))]

    events = old(1, "billing", "User:billing") + old(2, "billing", "User:billing") + old(3, "legacy", "User:ops") \
        + _conn(4, "kafka-python", "2.0.2", None, ((0, 9),))
    out = pipeline.process(_batch(events), 1_790_000_100_000)
    usage = {r.key: VersionUsage.from_json(r.value) for r in out if r.kind == USAGE}
    billing = usage['unknown/unknown/["billing","User:billing"]']
    assert (billing.client_id, billing.principal, billing.connections) == ("billing", "User:billing", 2)
    assert usage['unknown/unknown/["legacy","User:ops"]'].connections == 1
    assert usage["kafka-python/2.0.2"].client_id is None  # a named client keeps one row per version
    # The gauge still counts them under unknown/unknown, and the report judges each group on its own.
    readiness = check_readiness(usage_from_records(usage.values()), "4.0")
    rows = {(c.client_software_name, c.client_id): c.status for c in readiness.clients}
    assert rows == {("unknown", "billing"): "not_ready", ("unknown", "legacy"): "not_ready",
                    ("kafka-python", None): "ready"}

"""Upgrade readiness as pure functions: the release data, usage folded from events, the verdict per client.

No Kafka, no Spark: usage rows and ``connection_closed`` events are built here; the
release data is the checked-in file (``tests/test_upgrade_data.py`` checks it
against the real jars).
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from configwatch.contract import CONNECTION_CLOSED, CONNECTION_OPENED
from configwatch.records import Event
from udfs.upgrade.readiness import check_client, check_readiness
from udfs.upgrade.releases import UnknownReleaseError, api_name, broker_release, broker_releases
from udfs.upgrade.usage import ClientUsage, usage_from_events

PRODUCE, METADATA, API_VERSIONS, SHARE_GROUP_HEARTBEAT = 0, 3, 18, 76
OLD = frozenset({(API_VERSIONS, 0), (METADATA, 2), (PRODUCE, 2)})  # kafka-python pinned to api_version 0.10.1
CURRENT = frozenset({(API_VERSIONS, 4), (METADATA, 12), (PRODUCE, 9)})


def test_the_data_describes_3_9_and_4_0_at_least_with_kip_896_removals() -> None:
    assert {"3.9", "4.0"} <= set(broker_releases())
    assert broker_releases() == tuple(sorted(broker_releases(), key=lambda r: tuple(map(int, r.split(".")))))
    produce_39, produce_40 = broker_release("3.9").api(PRODUCE), broker_release("4.0").api(PRODUCE)
    assert produce_39 is not None and produce_40 is not None
    assert (produce_39.min_version, produce_40.min_version) == (0, 3)  # KIP-896: Produce v0-v2 removed in 4.0
    assert produce_39.is_deprecated(2) and not produce_40.is_deprecated(3)
    assert broker_release("4.0").source.startswith("org.apache.kafka:kafka-clients:4.0")


@pytest.mark.parametrize("spelling", ["4.0", "4.0.0", "4.0.1", "v4.0", " 4.0 "])
def test_a_patch_release_names_its_minor(spelling: str) -> None:
    assert broker_release(spelling).release == "4.0"


@pytest.mark.parametrize("spelling", ["2.8", "9.9", "four", ""])
def test_an_unknown_release_is_refused_with_the_known_ones(spelling: str) -> None:
    with pytest.raises(UnknownReleaseError, match=r"known: 3\.9"):
        broker_release(spelling)


def test_api_names_come_from_the_data() -> None:
    assert (api_name(PRODUCE), api_name(API_VERSIONS), api_name(9999)) == ("Produce", "ApiVersions", "ApiKey9999")


def test_an_old_client_is_not_ready_for_4_0_because_of_produce_v2() -> None:
    verdict = check_client(ClientUsage("unknown", "unknown", OLD, connections=3,
                                       client_instance_ids=frozenset({"b", "a"})), broker_release("4.0"))
    assert verdict.status == "not_ready" and not verdict.ready
    assert [(r.api_name, r.version, r.why, r.served) for r in verdict.offending] == [("Produce", 2, "removed", (3, 12))]
    assert (verdict.connections, verdict.client_instance_ids) == (3, ("a", "b"))
    assert verdict.request_versions == ((PRODUCE, 2), (METADATA, 2), (API_VERSIONS, 0))


def test_the_same_client_is_ready_for_3_9_with_deprecation_warnings() -> None:
    verdict = check_client(ClientUsage("unknown", "unknown", OLD), broker_release("3.9"))
    assert verdict.status == "ready" and verdict.offending == ()
    assert [(r.api_name, r.version, r.why) for r in verdict.deprecated] == [
        ("Produce", 2, "deprecated"), ("Metadata", 2, "deprecated")]


def test_a_current_client_is_ready_and_newer_versions_than_the_target_serves_are_fine() -> None:
    target = broker_release("4.0")
    assert check_client(ClientUsage("kafka-python", "3.0.12", CURRENT), target).status == "ready"
    produce = target.api(PRODUCE)
    assert produce is not None
    newer = ClientUsage("apache-kafka-java", "9.0.0", frozenset({(PRODUCE, produce.max_version + 1)}))
    assert check_client(newer, target).ready  # the client negotiates down through ApiVersions


def test_an_api_the_target_does_not_serve_breaks() -> None:
    usage = ClientUsage("apache-kafka-java", "4.1.0", CURRENT | {(SHARE_GROUP_HEARTBEAT, 1)})
    assert check_client(usage, broker_release(broker_releases()[-1])).ready
    verdict = check_client(usage, broker_release("3.9"))
    assert [(r.api_key, r.api_name, r.why, r.served) for r in verdict.offending] == [
        (SHARE_GROUP_HEARTBEAT, "ShareGroupHeartbeat", "not_served", None)]


def test_no_recorded_requests_is_unknown_and_an_overflow_is_incomplete() -> None:
    target = broker_release("4.0")
    assert check_client(ClientUsage("librdkafka", "2.6.1", frozenset()), target).status == "unknown"
    partial = check_client(ClientUsage("librdkafka", "2.6.1", CURRENT, overflow=4), target)
    assert partial.ready and not partial.complete


def test_the_report_lists_not_ready_first_and_serialises_to_json() -> None:
    rows = [ClientUsage("kafka-python", "3.0.12", CURRENT, 2, frozenset({"i1"})),
            ClientUsage("librdkafka", "2.6.1", frozenset()),
            ClientUsage("unknown", "unknown", OLD, 1)]
    report = check_readiness(rows, "4.0.2")
    assert report.target == "4.0" and report.kafka_clients.startswith("4.0")
    assert [(c.client_software_name, c.status) for c in report.clients] == [
        ("unknown", "not_ready"), ("librdkafka", "unknown"), ("kafka-python", "ready")]
    assert [c.client_software_name for c in report.not_ready] == ["unknown"]
    document = json.loads(json.dumps(report.to_dict()))
    assert document["clients"][0]["offending"] == [
        {"api_key": 0, "api": "Produce", "version": 2, "why": "removed", "served": [3, 12],
         "text": "Produce v2 (removed; the target serves v3-v12)"}]
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.clients[0].status = "ready"  # type: ignore[misc]


def _closed(conn: str, pairs: tuple[tuple[int, int], ...] | None, name: str | None = "kafka-python",
            instance: str | None = None, overflow: int | None = None) -> Event:
    return Event(event=CONNECTION_CLOSED, timestamp_ms=1, connection_id=conn, client_software_name=name,
                 client_software_version="3.0.12" if name else None, client_instance_id=instance,
                 request_versions=pairs, request_versions_overflow=overflow)


def test_usage_folds_closes_per_software_counting_each_connection_once() -> None:
    events = [
        Event(event=CONNECTION_OPENED, timestamp_ms=1, connection_id="a", client_software_name="kafka-python",
              client_software_version="3.0.12"),
        _closed("a", ((PRODUCE, 9), (API_VERSIONS, 4)), instance="i1"),
        _closed("a", ((PRODUCE, 9), (API_VERSIONS, 4)), instance="i1"),  # delivered twice
        _closed("b", ((METADATA, 12),), instance="i2", overflow=2),
        _closed("c", None),  # a gateway not in proxy mode: no usage
        _closed("d", ((PRODUCE, 2),), name=None),
    ]
    rows = usage_from_events(events)
    assert rows == (
        ClientUsage("kafka-python", "3.0.12", frozenset({(PRODUCE, 9), (API_VERSIONS, 4), (METADATA, 12)}), 2,
                    frozenset({"i1", "i2"}), 2),
        ClientUsage("unknown", "unknown", frozenset({(PRODUCE, 2)}), 1, frozenset(), 0),
    )

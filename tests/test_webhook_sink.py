"""The webhook sink against a real HTTP server on loopback: payload, retries, de-duplication, failures."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from configwatch.ratelimit import TokenBucket
from configwatch.secrets import SecretStr
from sinks.base import SinkRecord
from sinks.webhook import WebhookSink, alertmanager_payload, stats
from tests.webhook_helpers import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    try:
        yield r
    finally:
        r.stop()


_n = iter(range(10**6))


def finding(**over: Any) -> dict[str, Any]:
    n = next(_n)
    f = {"schema_version": 1, "alert_id": f"{n:032x}", "kind": "anomaly", "rule": "acks-zero", "severity": "medium",
         "keys": ["acks"], "client_instance_id": "00000000-0000-4000-8000-000000000001",
         "client_software_name": "apache-kafka-java", "client_software_version": "4.3.1", "client_id": "orders",
         "principal": "User:app", "client_address": "10.0.0.7", "message": "acks=0: failed writes go unnoticed.",
         "evidence": {"values": {"acks": 0}}, "event_timestamp_ms": 1_790_000_000_123, "detected_at_ms": 1}
    f.update(over)
    return f


def sink(url: str, **over: Any) -> WebhookSink:
    settings: dict[str, Any] = {"backoff_s": 0.01, "backoff_max_s": 0.05, "rate_per_s": 1000.0, "burst": 100.0,
                                "timeout_s": 2.0, "deadline_s": 10.0}
    settings.update(over)
    return WebhookSink(SecretStr(url), **settings)


def deliver(s: WebhookSink, findings: list[dict[str, Any]]) -> None:
    writer = s.build(0, 0)
    writer.write_batch([SinkRecord(f["alert_id"], f) for f in findings])
    writer.close()


def test_payload_is_alertmanager_version_4(receiver: Receiver) -> None:
    f = finding()
    deliver(sink(receiver.url), [f])
    [body] = receiver.bodies
    assert body["version"] == "4" and body["status"] == "firing" and body["receiver"] == "configwatch"
    [alert] = body["alerts"]
    assert alert["fingerprint"] == f["alert_id"]
    assert alert["labels"] == {"alertname": "acks-zero", "rule": "acks-zero", "kind": "anomaly",
                               "severity": "medium", "client_software_name": "apache-kafka-java",
                               "client_software_version": "4.3.1", "client_instance_id": f["client_instance_id"],
                               "client_id": "orders", "principal": "User:app",
                               "subject": f["client_instance_id"]}
    assert alert["annotations"]["summary"] == f["message"] and alert["annotations"]["keys"] == "acks"
    assert json.loads(alert["annotations"]["evidence"]) == f["evidence"]
    assert alert["startsAt"] == "2026-09-21T14:13:20.123Z" and alert["endsAt"] == "0001-01-01T00:00:00Z"
    assert body["commonLabels"]["alertname"] == "acks-zero"
    assert body["groupLabels"] == {"alertname": "acks-zero"} and body["groupKey"] == '{}:{alertname="acks-zero"}'


def test_one_post_per_rule_and_group_findings_are_about_their_group(receiver: Receiver) -> None:
    group = finding(rule="group-assignment-drift", keys=["group.id", "partition.assignment.strategy"],
                    client_instance_id=None, client_software_name=None, client_software_version=None,
                    client_id=None, principal=None, client_address=None,
                    evidence=json.dumps({"group": "orders", "members": {"range": ["0123456789abcdef"]}}))
    deliver(sink(receiver.url), [finding(), group, finding(client_instance_id=None)])
    bodies = {b["groupLabels"]["alertname"]: b for b in receiver.bodies}
    assert set(bodies) == {"acks-zero", "group-assignment-drift"}
    [alert] = bodies["group-assignment-drift"]["alerts"]
    assert alert["labels"] == {"alertname": "group-assignment-drift", "rule": "group-assignment-drift",
                               "kind": "anomaly", "severity": "medium", "subject": "group:orders"}
    assert [a["labels"]["subject"] for a in bodies["acks-zero"]["alerts"]] == [
        "00000000-0000-4000-8000-000000000001", "orders"]
    assert bodies["acks-zero"]["groupKey"] == '{}:{alertname="acks-zero"}'


def test_chunks_and_common_labels(receiver: Receiver) -> None:
    deliver(sink(receiver.url, batch_alerts=2), [finding(), finding(severity="high"), finding()])
    assert [len(b["alerts"]) for b in receiver.bodies] == [2, 1]
    assert "severity" not in receiver.bodies[0]["commonLabels"]


def test_retries_with_backoff_then_delivers_once(receiver: Receiver) -> None:
    receiver.statuses = [503, 429, 200]
    receiver.headers = {429: {"Retry-After": "0.01"}}
    before = stats()
    f = finding()
    deliver(sink(receiver.url), [f])
    assert [len(b["alerts"]) for b in receiver.bodies] == [1, 1, 1]
    after = stats()
    assert after["retries"] - before["retries"] == 2 and after["alerts_sent"] - before["alerts_sent"] == 1


def test_deduplicates_by_alert_id_within_and_across_writers(receiver: Receiver) -> None:
    f, g = finding(), finding()
    s = sink(receiver.url)
    deliver(s, [f, f, g])
    deliver(s, [f, g])
    assert [sorted(a["fingerprint"] for a in b["alerts"]) for b in receiver.bodies] == [
        sorted([f["alert_id"], g["alert_id"]])]


def test_a_client_error_is_not_retried(receiver: Receiver) -> None:
    receiver.statuses = [400]
    before = stats()
    deliver(sink(receiver.url), [finding()])
    assert len(receiver.bodies) == 1
    assert stats()["alerts_dropped"] - before["alerts_dropped"] == 1


def test_a_dead_webhook_never_raises_and_counts_the_drop(receiver: Receiver) -> None:
    receiver.statuses = [500] * 3
    before = stats()
    deliver(sink(receiver.url, max_attempts=3), [finding(), finding()])
    assert len(receiver.bodies) == 3
    assert stats()["alerts_dropped"] - before["alerts_dropped"] == 2
    # Nobody listening at all: still no exception.
    port = receiver.server.server_address[1]
    receiver.server.shutdown()
    receiver.server.server_close()
    deliver(sink(f"http://127.0.0.1:{port}/gone", max_attempts=2), [finding()])
    assert stats()["alerts_dropped"] - before["alerts_dropped"] == 3


@pytest.mark.parametrize("tail", [" with space", "-\u00e9t\u00e9"])
def test_a_url_urllib_refuses_is_a_counted_drop_that_never_shows_the_url(
        receiver: Receiver, tail: str, caplog: pytest.LogCaptureFixture) -> None:
    # A space makes urllib raise http.client.InvalidURL quoting the path; non-ASCII, UnicodeEncodeError.
    caplog.set_level(logging.DEBUG)
    before = stats()
    sink(receiver.url + tail).notify([json.dumps(finding())], 0)  # the job's notifier path; does not raise
    assert receiver.bodies == []
    assert stats()["alerts_dropped"] - before["alerts_dropped"] == 1
    assert stats()["retries"] == before["retries"]  # it would fail the same way again
    assert "T0KEN" not in caplog.text
    assert all(r.exc_info is None for r in caplog.records)


def test_failed_alerts_are_not_remembered_as_delivered(receiver: Receiver) -> None:
    receiver.statuses = [500, 500]
    f = finding()
    deliver(sink(receiver.url, max_attempts=2), [f])
    deliver(sink(receiver.url, max_attempts=2), [f])
    assert [b["alerts"][0]["fingerprint"] for b in receiver.bodies] == [f["alert_id"]] * 3


def test_description_hides_path_query_and_credentials() -> None:
    s = sink("https://user:pa55@hooks.example.com:8443/services/T0KEN?token=abc")
    assert s.description == "webhook https://hooks.example.com:8443/..."
    assert "pa55" not in repr(s) and "T0KEN" not in repr(s)


def test_token_bucket_waits_for_tokens() -> None:
    now = [0.0]
    waits: list[float] = []

    def sleep(s: float) -> None:
        waits.append(s)
        now[0] += s

    bucket = TokenBucket(rate=2.0, burst=2.0, clock=lambda: now[0], sleep=sleep)
    assert [bucket.acquire() for _ in range(4)] == [0.0, 0.0, 0.5, 0.5]
    now[0] += 10
    assert bucket.acquire() == 0.0  # refilled, capped at the burst


def test_payload_of_no_findings() -> None:
    assert alertmanager_payload([])["alerts"] == []


# --- the alerts sink with --webhook-url: the durable copy first, the webhook best effort -----------

def test_fanout_writes_the_primary_then_the_webhook(receiver: Receiver, tmp_path: Any) -> None:
    from sinks.base import EXACTLY_ONCE
    from sinks.fanout import FanOutSink
    from sinks.files import FilesSink

    fan = FanOutSink(FilesSink(str(tmp_path / "alerts")), sink(receiver.url))
    assert fan.guarantee == EXACTLY_ONCE and "webhook http://127.0.0.1" in fan.description
    fan.prepare()
    f = finding()
    writer = fan.build(0, 0)
    writer.write_batch([SinkRecord(f["alert_id"], f)])
    writer.close()
    [part] = (tmp_path / "alerts").glob("part-*.jsonl")
    assert json.loads(part.read_text())["alert_id"] == f["alert_id"]
    assert receiver.fingerprints() == {f["alert_id"]}


def test_fanout_with_a_dead_webhook_keeps_the_primary_copy(tmp_path: Any) -> None:
    from sinks.fanout import FanOutSink
    from sinks.files import FilesSink

    dead = Receiver()
    url = dead.url
    dead.server.server_close()
    fan = FanOutSink(FilesSink(str(tmp_path / "alerts")), sink(url, max_attempts=2))
    fan.prepare()
    writer = fan.build(1, 0)
    writer.write_batch([SinkRecord("a" * 32, finding(alert_id="a" * 32))])
    writer.close()  # does not raise
    assert len(list((tmp_path / "alerts").glob("part-*.jsonl"))) == 1


def test_fanout_feeds_the_webhook_nothing_the_primary_did_not_deliver(receiver: Receiver) -> None:
    from sinks.base import Sink, SinkWriter
    from sinks.exceptions import SinkWriteError
    from sinks.fanout import FanOutSink

    class Refusing(SinkWriter):  # a destination that fails at flush (e.g. Kafka unreachable)
        def write_batch(self, records: Any) -> None:
            pass

        def close(self) -> None:
            raise SinkWriteError("not acknowledged")

    class RefusingSink(Sink):
        description = "refusing"

        def build(self, partition_id: int, epoch_id: int) -> SinkWriter:
            return Refusing()

    writer = FanOutSink(RefusingSink(), sink(receiver.url)).build(0, 0)
    writer.write_batch([SinkRecord("b" * 32, finding(alert_id="b" * 32))])
    with pytest.raises(SinkWriteError):
        writer.close()
    assert receiver.bodies == []

"""The latency figures' load (``bench.pusher``) against the test broker: what it sends, when, and where."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from kafka.partitioner.default import murmur2

from bench import pusher
from bench.harness import read_topic
from sinks.kafka import ensure_topic

PARTITIONS = 4


def test_pusher_sends_every_record_and_probe_stamped_with_its_send_time(
        kafka_bootstrap: str, topic_name: Callable[[str], str], capsys: pytest.CaptureFixture[str]) -> None:
    topic = topic_name("pusher")
    ensure_topic(kafka_bootstrap, topic, partitions=PARTITIONS)

    assert pusher.main(["--bootstrap", kafka_bootstrap, "--topic", topic, "--rate", "300", "--seconds", "1",
                        "--probe-ms", "250"]) == 0
    sent = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    records = read_topic(kafka_bootstrap, topic)

    assert sent["records"] == 300 and sent["probes"] >= 4
    assert len(records) == sent["records"] + sent["probes"]
    probes = [r for r in records if r.key and r.key.startswith(pusher.PROBE.encode())]
    assert len(probes) == sent["probes"]
    assert {json.loads(r.value)["client_software_name"] for r in probes} == {pusher.PROBE}
    # CreateTime is the send time: within the run, so the figures' latencies start when a record was sent.
    assert all(sent["started_ms"] <= r.timestamp <= sent["ended_ms"] for r in records)
    # Keyed as the Java client and kafka-python place a key (murmur2), so every producer agrees on partitions.
    keyed = [r for r in records if r.key]
    assert len(keyed) > 250
    assert all(r.partition == (murmur2(r.key) & 0x7FFFFFFF) % PARTITIONS for r in keyed)


def test_pusher_fails_the_run_with_the_brokers_error_when_records_are_refused(
        kafka_bootstrap: str, topic_name: Callable[[str], str], capsys: pytest.CaptureFixture[str]) -> None:
    """A record the broker did not take ends the run with its error, so a figure never times a lost load."""
    topic = topic_name("pusher-refused")
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:  # every batch of workload records is larger than the topic takes
        admin.create_topics([NewTopic(topic, 1, 1, topic_configs={"max.message.bytes": "64"})])
    finally:
        admin.close()

    with pytest.raises(SystemExit, match=r"records not delivered, first: .*MSG_SIZE_TOO_LARGE"):
        pusher.main(["--bootstrap", kafka_bootstrap, "--topic", topic, "--rate", "100", "--seconds", "0.2",
                     "--probe-ms", "1000"])
    assert capsys.readouterr().out == ""  # no figures line for a run that lost records

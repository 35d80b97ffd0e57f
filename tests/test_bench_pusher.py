"""The latency figures' load (``bench.pusher``) against the test broker: what it sends, when, and where."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
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

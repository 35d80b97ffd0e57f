"""The sink contract and its two sinks: files (exactly once, atomic) and Kafka (real broker, at least once)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from sinks import EXACTLY_ONCE, SinkRecord, SinkWriteError
from sinks.files import FilesSink, part_name
from sinks.kafka import KafkaSink, ensure_topic
from tests.kafka_helpers import read_all


def _records(n: int, start: int = 0) -> list[SinkRecord]:
    return [SinkRecord(key=f"k{i}", value={"n": i, "reason": "not_json"}) for i in range(start, start + n)]


def _lines(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for p in sorted(directory.glob("part-*.jsonl")) for line in p.read_text().splitlines()]


def test_files_sink_writes_a_file_per_partition_and_batch_atomically(tmp_path: Path) -> None:
    sink = FilesSink(str(tmp_path / "quarantine"))
    assert sink.guarantee == EXACTLY_ONCE
    sink.prepare()
    writer = sink.build(partition_id=3, epoch_id=7)
    writer.write_batch(_records(2))
    assert list((tmp_path / "quarantine").glob("part-*")) == []  # nothing visible before close
    writer.write_batch(_records(1, start=2))
    writer.close()
    assert [p.name for p in (tmp_path / "quarantine").iterdir()] == [part_name(7, 3)]
    assert [r["n"] for r in _lines(tmp_path / "quarantine")] == [0, 1, 2]


def test_files_sink_rewriting_a_batch_replaces_it(tmp_path: Path) -> None:
    sink = FilesSink(str(tmp_path / "q"))
    sink.prepare()
    for partition in (0, 1):  # first attempt: two partitions
        with sink.build(partition, 4) as writer:
            writer.write_batch(_records(2, start=partition * 10))
    sink.begin_epoch(4)  # the retry of batch 4 has one partition only
    with sink.build(0, 4) as writer:
        writer.write_batch(_records(2))
    assert sorted(r["n"] for r in _lines(tmp_path / "q")) == [0, 1]


def test_files_sink_abort_leaves_nothing(tmp_path: Path) -> None:
    sink = FilesSink(str(tmp_path / "q"))
    sink.prepare()
    with pytest.raises(RuntimeError), sink.build(0, 1) as writer:
        writer.write_batch(_records(3))
        raise RuntimeError("the task failed")
    assert list((tmp_path / "q").iterdir()) == []


def test_files_sink_reports_an_unwritable_directory(tmp_path: Path) -> None:
    sink = FilesSink(str(tmp_path / "gone"))  # never prepared: the directory does not exist
    writer = sink.build(0, 0)
    with pytest.raises(SinkWriteError, match="cannot write"):
        writer.write_batch(_records(1))


def test_sink_factories_pickle_without_connections() -> None:
    for sink in (FilesSink("/x/alerts"), KafkaSink("127.0.0.1:9", "t", compact=True)):
        assert pickle.loads(pickle.dumps(sink)) == sink


@pytest.mark.kafka
def test_kafka_sink_creates_the_topic_and_delivers_keys_values_and_tombstones(
    kafka_bootstrap: str, topic_name: Any
) -> None:
    topic = topic_name("gauges")
    sink = KafkaSink(kafka_bootstrap, topic, compact=True)
    sink.prepare()
    sink.prepare()  # idempotent
    assert ensure_topic(kafka_bootstrap, topic, compact=True) is False
    writer = sink.build(0, 0)
    writer.write_batch([SinkRecord("java/3.9.1", {"connections": 2}),
                        SinkRecord("java/3.9.1", {"connections": 0, "removed": True}, tombstone=True)])
    writer.close()
    got = [(k, v) for k, v, _, _ in read_all(kafka_bootstrap, topic)]
    assert got == [(b"java/3.9.1", b'{"connections":2}'), (b"java/3.9.1", None)]
    assert _topic_config(kafka_bootstrap, topic, "cleanup.policy") == "compact"


def _topic_config(bootstrap: str, topic: str, name: str) -> Any:
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        result = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic, {name: None})])
    finally:
        admin.close()
    (per_name,) = result.values()
    return per_name[topic][name]["value"]

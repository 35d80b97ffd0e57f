"""The job on the real broker and real Spark: a Kafka stream with 5% garbage of every invalid kind.

Every valid record is decoded and reaches the gauges, none is quarantined; every invalid
one is quarantined once, with the right reason and its topic/partition/offset,
and without its payload.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaProducer

from configwatch.records import Event
from configwatch.samples import sample_events
from configwatch.settings import Settings
from sinks.kafka import ensure_topic
from streaming.job import JobOptions, StreamingJob
from tests.invalid_records import EXPECTATION_CASES, INVALID_CASES, SECRET, InvalidCase, base_event
from tests.test_sinks import _lines
from udfs.pipeline import source_key

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def _produce(bootstrap: str, topic: str, values: list[bytes | None]) -> list[tuple[int, int]]:
    """Send values (keyed so both partitions get some); return each one's (partition, offset)."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, linger_ms=5)
    futures = [producer.send(topic, value=v, key=str(i % 7).encode()) for i, v in enumerate(values)]
    producer.flush()
    coords = [(m.partition, m.offset) for m in (f.get(timeout=30) for f in futures)]
    producer.close()
    return coords


def test_a_stream_with_garbage_of_every_kind(kafka_bootstrap: str, spark: Any, topic_name: Any,
                                           tmp_path: Path) -> None:
    topic = topic_name("garbage")
    ensure_topic(kafka_bootstrap, topic, partitions=2)
    cases: list[InvalidCase] = [*INVALID_CASES, *EXPECTATION_CASES]
    events = sample_events(19 * len(cases))  # invalid records are 5% of the stream
    events[3] = Event.from_dict(base_event())  # a valid push holding a sensitive value
    stream: list[tuple[bytes | None, InvalidCase | Event]] = [(e.to_json().encode(), e) for e in events]
    stream += [(c.raw, c) for c in cases]
    random.Random(11).shuffle(stream)
    coords = _produce(kafka_bootstrap, topic, [raw for raw, _ in stream])

    settings = Settings(checkpoint_dir=tmp_path / "ckpt", input_topic=topic, sink=f"files:{tmp_path / 'out'}",
                        trigger="available-now")
    options = JobOptions.from_settings(settings)
    lines: list[str] = []
    job = StreamingJob(settings, options, kafka_bootstrap, out=lines.append)
    job.start()
    result = job.wait()

    expected_bad = {f"{topic}/{p}/{o}": case for (p, o), (_, case) in zip(coords, stream, strict=True)
                    if isinstance(case, InvalidCase)}
    quarantined = _lines(tmp_path / "out" / "quarantine")
    by_source = {source_key(q["source"]): q for q in quarantined}
    assert len(quarantined) == len(by_source) == len(cases), "each invalid record exactly once"
    for key, case in expected_bad.items():
        record = by_source[key]
        assert record["reason"] == case.reason, case.name
        assert record["size_bytes"] == (len(case.raw) if case.raw is not None else 0)
        assert record["schema_version"] == 1 and record["quarantined_at_ms"] > 0
    text = json.dumps(quarantined)
    assert SECRET not in text and "apache-kafka-java" not in text, "no payload in quarantine"

    # Every valid record reached the detection and gauge steps: the gauges count every connection
    # the stream opened and did not close, under the identity of its open event.
    open_conns: dict[str, str] = {}
    for item in sorted((e for e in events), key=lambda e: e.timestamp_ms):
        if item.event == "connection_opened":
            open_conns.setdefault(item.connection_id, f"{item.client_software_name or 'unknown'}/"
                                                      f"{item.client_software_version or 'unknown'}")
        elif item.event == "connection_closed":
            open_conns.pop(item.connection_id, None)
    gauges: dict[str, int] = {}
    for g in _lines(tmp_path / "out" / "gauges"):
        gauges[f"{g['client_software_name']}/{g['client_software_version']}"] = g["connections"]
    expected_gauges: dict[str, int] = {}
    for key in open_conns.values():
        expected_gauges[key] = expected_gauges.get(key, 0) + 1
    assert {k: v for k, v in gauges.items() if v} == expected_gauges and expected_gauges

    totals = result.totals
    assert totals["records_in"] == len(stream) and totals["quarantine"] == len(cases)
    assert totals["invalid"] == len(cases) and totals["expectation_failed"] == len(EXPECTATION_CASES)
    assert totals["batch_ms"] > 0 and totals["batches"] >= 1
    assert any(line.startswith("batch 0: ") and f"{len(events)} valid" in line for line in lines), lines

    # The job as specified: every micro-batch runs Python over Arrow (the decode and rules stage, the keyed
    # step) inside Spark's own operators, and no class of the project's own.
    plan = job.query._jsq.streamingQuery().lastExecution().executedPlan().toString()
    assert "MapInArrow" in plan and "TransformWithStateInPandas" in plan, plan
    assert "io.configwatch" not in plan and plan.count("TransformWithStateInPandas") == 1, plan


def test_the_job_s_packages_hold_no_java_and_setup_compiles_nothing() -> None:
    root = Path(__file__).resolve().parent.parent
    packages = ("cli", "configwatch", "policy", "sinks", "streaming", "udfs")
    assert not [p for name in packages for p in (root / name).rglob("*.java")]
    jars_module = (root / "configwatch" / "jars.py").read_text()
    assert "javac" not in jars_module and "job_jar" not in jars_module

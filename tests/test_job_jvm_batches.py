"""The job's foreachBatch function on the JVM (Kafka outputs, no webhook): the same records and reports."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from configwatch.contract import ALERTS, GAUGES, QUARANTINE, USAGE
from configwatch.records import Event
from configwatch.samples import sample_events
from configwatch.settings import Settings
from sinks.kafka import ensure_topic
from streaming.job import JobOptions, StreamingJob
from streaming.job.jvm_batches import _report
from tests.invalid_records import INVALID_CASES, base_event
from tests.kafka_helpers import produce, read_all


def test_a_jvm_report_reads_as_the_python_functions_report() -> None:
    report = _report(json.loads(
        '{"batch": 4, "seconds": 0.25, "written": {"alerts": 3, "gauges": 2},'
        ' "stats": {"records": 7, "valid": 6, "invalid": 1, "expectation_failed": 1, "decode_nanos": 2000000,'
        ' "gx_nanos": 1000000, "failed:expect_size": 1, "failed:expect_other": 0}}'))
    assert (report.batch_id, report.written, report.seconds, report.records_in) == (
        4, {"alerts": 3, "gauges": 2}, 0.25, 7)
    assert report.stats["failed_by_expectation"] == {"expect_size": 1}
    assert report.line() == ("batch 4: 7 records in, 6 valid, 1 invalid; out 3 findings, 0 quarantined, "
                             "2 gauge updates, 0 usage updates in 0.25 s; decode 2 ms, gx 1 ms (expect_size 1)")


@pytest.mark.kafka
@pytest.mark.spark
def test_kafka_outputs_are_written_and_counted_on_the_jvm(kafka_bootstrap: str, spark: Any, topic_name: Any,
                                                         tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="streaming.job.runner")
    source = topic_name("jvm-in")
    ensure_topic(kafka_bootstrap, source, partitions=2)
    events = [*sample_events(300), Event.from_dict(base_event())]  # and a push holding a sensitive value
    values = [e.to_json().encode() for e in events] + [c.raw for c in INVALID_CASES]
    produce(kafka_bootstrap, source, [(str(i).encode(), v) for i, v in enumerate(values)])
    topics = {kind: topic_name(f"jvm-{kind}") for kind in (ALERTS, QUARANTINE, GAUGES, USAGE)}
    settings = Settings(checkpoint_dir=tmp_path / "ckpt", input_topic=source, trigger="available-now",
                        alerts_topic=topics[ALERTS], quarantine_topic=topics[QUARANTINE],
                        gauges_topic=topics[GAUGES], usage_topic=topics[USAGE])
    lines: list[str] = []
    job = StreamingJob(settings, JobOptions.from_settings(settings), kafka_bootstrap, out=lines.append)
    job.start()
    result = job.wait()

    assert "batches written on the JVM" in caplog.text
    records = {kind: read_all(kafka_bootstrap, topic) for kind, topic in topics.items()}
    totals = result.totals
    assert totals["records_in"] == len(events) + len(INVALID_CASES)
    assert totals["invalid"] == len(INVALID_CASES) == totals[QUARANTINE] == len(records[QUARANTINE])
    for kind in (ALERTS, GAUGES, USAGE):  # counted on the way out: what reached each topic
        assert totals[kind] == len(records[kind]), kind
    assert totals[ALERTS] > 0 and totals[GAUGES] > 0
    assert {json.loads(v or b"{}").get("alert_id") for k, v, _, _ in records[ALERTS]} == {
        (k or b"").decode() for k, _, _, _ in records[ALERTS]}  # alerts keyed by alert_id
    assert totals["batches"] >= 1 and len(lines) == totals["batches"]
    assert lines[0].startswith("batch 0: ") and f"{len(INVALID_CASES)} invalid" in " ".join(lines)

"""The job's JVM route and detection steps against the Python pipeline they twin, batch by batch.

(The job on a checkpoint of the release before, which keeps its Python route stage and detection
step, is held to the same records.)

A realistic stream (the fleet simulator's opens, pushes and closes, with malformed records and
records the GX suite refuses) goes through the real job in replay mode, one file per
micro-batch, and through :class:`udfs.memory.MemoryPipeline` (the Python route and keyed steps,
dicts for state) with the same decode and GX suite. Every batch's alerts, quarantine records and
gauges must be the same records, apart from the processing times they carry.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from bench.workload import workload_records
from configwatch.contract import ALERTS, GAUGES, QUARANTINE
from configwatch.secrets import SecretStr
from configwatch.settings import Settings
from streaming.job import QUERY_NAME, JobOptions, StreamingJob
from streaming.job.layout import LAYOUT_FILE
from udfs.decode import decode_file_batches
from udfs.memory import MemoryPipeline
from udfs.pipeline import DEFAULT_LAYOUT
from udfs.split_lines import FILE_COLUMNS

pytestmark = pytest.mark.spark

KEY = SecretStr("jvm-twin-test")
T0 = 1_790_000_000_000
FAR_FUTURE_MS = 4_102_444_800_000  # 2100: past the GX window of any processing time this test runs at
_TIMES = {ALERTS: "detected_at_ms", QUARANTINE: "quarantined_at_ms", GAUGES: "updated_at_ms"}


def _lines(seed: int, batches: int, per_batch: int) -> list[list[bytes]]:
    """Batches of raw records: the simulator's stream, a few refused by GX (the far future, an unknown protocol),
    and one that is not UTF-8."""
    records = [r.value for r in workload_records(batches * per_batch, KEY, seed=seed, start_ms=T0, base_clients=300)]
    out = []
    for b in range(batches):
        batch = records[b * per_batch:(b + 1) * per_batch]
        for i in range(3, len(batch), 97):
            event = json.loads(batch[i]) if batch[i].startswith(b"{") else None
            if isinstance(event, dict) and "timestamp_ms" in event:
                if i % 2:
                    event["timestamp_ms"] = FAR_FUTURE_MS
                else:
                    event["security_protocol"] = "SASL_TLS"
                batch[i] = json.dumps(event).encode()
        # Bytes that are not UTF-8 inside a record: both sides must see them as read (quarantine, not_json).
        batch.insert(5, b'{"schema_version":1,"event":"connection_opened","timestamp_ms":%d,'
                        b'"connection_id":"c-\xff\xfe"}' % T0)
        out.append(batch)
    return out


def _records(kind: str, values: list[str]) -> Counter[str]:
    out: Counter[str] = Counter()
    for v in values:
        r = json.loads(v)
        r.pop(_TIMES[kind])
        out[json.dumps(r, sort_keys=True)] += 1
    return out


def _memory(batches: list[list[bytes]], files: list[Path]) -> list[dict[str, Counter[str]]]:
    pipeline = MemoryPipeline(KEY)
    out = []
    for batch, path in zip(batches, files, strict=True):
        raw = pa.RecordBatch.from_arrays([pa.array([b"\n".join(batch)], pa.binary()), pa.array([f"file:{path}"])],
                                         names=["value", FILE_COLUMNS[0].name])
        decoded = pa.Table.from_batches(list(decode_file_batches([raw], validate=True)))
        records = pipeline.process(decoded, T0)
        out.append({kind: _records(kind, [r.value for r in records if r.kind == kind]) for kind in _TIMES})
    return out


# Layout files of checkpoints begun by earlier releases: the route stage and detection step in Python; the JVM
# detection step and connection step each over the route's shuffle.
PYTHON_ROUTE = {"connection_buckets": 8, "fleet_per_key": False, "markers_apart": False, "gauges_on_jvm": True}
TWO_STEPS = {**PYTHON_ROUTE, "detection_on_jvm": True, "key_partitions": 2}


@pytest.mark.parametrize(("seed", "layout", "operators"),
                         [(3, None, 2), (17, None, 2), (17, TWO_STEPS, 3), (17, PYTHON_ROUTE, 3)],
                         ids=["jvm-3", "jvm-17", "jvm-two-steps-17", "python-route-17"])
def test_the_jvm_job_writes_the_python_pipelines_records(spark: Any, tmp_path: Path, seed: int,
                                                         layout: dict[str, Any] | None, operators: int) -> None:
    """A new checkpoint (the JVM route, one keyed step, the totals step) and those of earlier releases alike."""
    assert DEFAULT_LAYOUT.detection_on_jvm and DEFAULT_LAYOUT.one_keyed_step  # what a new checkpoint runs
    if layout is not None:
        (tmp_path / "ckpt" / QUERY_NAME).mkdir(parents=True)
        (tmp_path / "ckpt" / QUERY_NAME / LAYOUT_FILE).write_text(json.dumps(layout))
    batches = _lines(seed, batches=4, per_batch=900)
    replay = tmp_path / "replay"
    replay.mkdir()
    files = []
    for i, batch in enumerate(batches):
        path = replay / f"batch-{i}.jsonl"
        path.write_bytes(b"\n".join(batch) + b"\n")
        os.utime(path, (T0 / 1000 + i, T0 / 1000 + i))  # the file source takes files oldest first
        files.append(path)
    out = tmp_path / "out"
    settings = Settings(checkpoint_dir=tmp_path / "ckpt", source=f"files:{replay}", sink=f"files:{out}",
                        trigger="available-now", outputs="alerts,quarantine,gauges", max_files_per_trigger=1,
                        fingerprint_key=KEY)
    job = StreamingJob(settings, JobOptions.from_settings(settings), None, out=lambda _: None)
    job.start()
    job.wait()
    # The layout chose the plan: its stateful operators, each with its own state in the checkpoint.
    assert len(list((tmp_path / "ckpt" / QUERY_NAME / "state").iterdir())) == operators
    by_epoch: list[dict[str, Counter[str]]] = [{kind: Counter() for kind in _TIMES} for _ in batches]
    for kind in _TIMES:
        for path in sorted((out / kind).glob("part-*.jsonl")):
            by_epoch[int(path.name.split("-")[1])][kind].update(_records(kind, path.read_text().splitlines()))
    expected = _memory(batches, files)
    for kind in _TIMES:
        assert sum(sum(e[kind].values()) for e in expected) > 5, kind
    assert any("expectation:" in r for e in expected for r in e[QUARANTINE])
    assert all(any("not UTF-8" in r for r in e[QUARANTINE]) for e in expected)
    for epoch, (got, want) in enumerate(zip(by_epoch, expected, strict=True)):
        for kind in _TIMES:
            only_job, only_python = got[kind] - want[kind], want[kind] - got[kind]
            assert not only_job and not only_python, (epoch, kind, list(only_job)[:2], list(only_python)[:2])


def test_the_jvm_decode_gives_the_python_decodes_rows(spark: Any) -> None:
    """``streaming.jvm_pipeline.decode`` on Kafka-shaped rows: the rows ``udfs.decode`` gives, GX verdicts included."""
    from streaming import jvm_pipeline
    from udfs.decode import decode_batches

    values = [v for batch in _lines(29, batches=1, per_batch=600) for v in batch] + [b"{not json", b"", b"[1]"]
    kafka = pa.table({"value": pa.array(values, pa.binary()), "topic": ["t"] * len(values),
                      "partition": pa.array([i % 3 for i in range(len(values))], pa.int32()),
                      "offset": pa.array(range(len(values)), pa.int64())})
    raw = spark.createDataFrame(kafka.to_pandas())
    got = [r.asDict(recursive=True) for r in jvm_pipeline.decode(raw, KEY, validate=True).collect()]
    want = pa.Table.from_batches(list(decode_batches(kafka.to_batches(), validate=True))).to_pylist()
    assert len(want) == len(values) and sum(r["reason"] is not None for r in want) >= 5
    by_offset = {r["offset"]: r for r in got}
    assert [by_offset[r["offset"]] for r in want] == want


def test_every_task_shares_the_jvms_parsed_spec(spark: Any) -> None:
    # A task gets the spec's text with its closure; each used to parse it again (docs/benchmarks.md).
    from streaming.jvm_spec import spec_json

    jvm = spark.sparkContext._jvm
    knowledge = jvm.io.configwatch.detect.Knowledge.parse(spec_json())
    assert knowledge.equals(jvm.io.configwatch.detect.Knowledge.parse(spec_json()))  # identity: no equals of its own
    shipped = jvm.org.apache.commons.lang3.SerializationUtils.roundtrip(knowledge)  # as a task deserializes it
    assert shipped.equals(knowledge)
    assert shipped.json() == spec_json()

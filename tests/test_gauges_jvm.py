"""The JVM gauge steps (``streaming/jvm``) against the Python transition they mirror (``udfs.gauges``, ``udfs.steps``).

A random stream of connection events (redelivered opens and closes, closes of unknown
connections, reused connection ids, stale events, shared client instances, closes with
request versions) goes through the real job in replay mode, one file per micro-batch, and
through :class:`udfs.memory.MemoryPipeline` (the Python steps with dicts for state) batch by
batch. Every batch's gauge and usage records must be the same, apart from ``updated_at_ms``.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import streaming.jvm_gauges
import udfs.gauges
from configwatch.contract import GAUGES, USAGE
from configwatch.records import Gauge, VersionUsage
from configwatch.secrets import SecretStr
from configwatch.settings import Settings
from streaming.job import QUERY_NAME, JobOptions, StreamingJob
from udfs.decode import decode_file_batches
from udfs.memory import MemoryPipeline
from udfs.pipeline import DEFAULT_LAYOUT
from udfs.rules.batch import redacted_marker
from udfs.split_lines import FILE_COLUMNS

T0 = 1_790_000_000_000
KEY = SecretStr("gauges-jvm-test")
NAMES = [("java", "3.9.1"), ("java", "4.0.0"), ("librdkafka", "2.6.1"), (None, None), ("sarama", "")]
SECRET_INSTANCE = "AKIAIOSFODNN7EXAMPLE"  # one client's instance id holds a secret: it travels as its marker


def _stream(seed: int, batches: int, per_batch: int) -> list[list[dict[str, Any]]]:
    """Batches of connection events; the last third starts after the close markers' retention (10 minutes)."""
    rng = random.Random(seed)
    out: list[list[dict[str, Any]]] = []
    opened: dict[str, dict[str, Any]] = {}  # connection id -> its open event (as sent)
    closed: list[dict[str, Any]] = []
    sent: list[dict[str, Any]] = []  # every open and close, for redeliveries
    n = 0
    for b in range(batches):
        batch: list[dict[str, Any]] = []
        base = T0 + b * 10_000 + (11 * 60_000 if b >= batches * 2 // 3 else 0)
        for i in range(per_batch):
            ts = base + rng.randrange(10_000)
            roll = rng.random()
            if roll < 0.45 or not opened:  # a new connection, sometimes reusing a closed one's id
                reuse = closed and rng.random() < 0.1
                cid = rng.choice(closed)["connection_id"] if reuse else f"10.0.0.1:9092-10.0.0.2:{n}-{n}"
                n += 1
                name, version = rng.choice(NAMES)
                instance = rng.choice([None, f"inst-{rng.randrange(12)}"])
                event: dict[str, Any] = {"event": "connection_opened", "connection_id": cid, "timestamp_ms": ts,
                                        "client_instance_id": SECRET_INSTANCE if instance == "inst-0" else instance,
                                        "client_software_name": name, "client_software_version": version}
                opened[cid] = event
            elif roll < 0.8:  # a close (some in the open's millisecond), some with request versions (a proxy)
                cid = rng.choice(sorted(opened))
                was = opened.pop(cid)
                same_ms = rng.random() < 0.15
                event = {**was, "event": "connection_closed", "timestamp_ms": was["timestamp_ms"] if same_ms else ts}
                if rng.random() < 0.3:
                    pairs = {(rng.choice([0, 1, 3, 18]), rng.randrange(4)) for _ in range(rng.randrange(1, 5))}
                    event["request_versions"] = [{"api_key": k, "version": v} for k, v in sorted(pairs)]
                    if rng.random() < 0.3:
                        event["request_versions_overflow"] = rng.randrange(1, 9)
                closed.append(event)
            elif roll < 0.9 and sent:  # a redelivery of an earlier open or close
                event = dict(rng.choice(sent))
            elif roll < 0.95:  # a close of a connection nobody opened
                event = {"event": "connection_closed", "connection_id": f"ghost-{i}-{b}", "timestamp_ms": ts}
            else:  # a stale close: older than its connection's open
                if not opened:
                    continue
                cid = rng.choice(sorted(opened))
                event = {**opened[cid], "event": "connection_closed", "timestamp_ms": opened[cid]["timestamp_ms"] - 1}
            if event["event"] != "connection_closed" or not event["connection_id"].startswith("ghost"):
                sent.append(event)
            batch.append({"schema_version": 1, **{k: v for k, v in event.items() if v is not None}})
        out.append(batch)
    return out


def _records(lines: list[str]) -> dict[str, tuple[Any, ...]]:
    """key -> what a record says, without its time."""
    out = {}
    for line in lines:
        r = json.loads(line)
        r.pop("updated_at_ms")
        out[f"{r['client_software_name']}/{r['client_software_version']}"] = tuple(sorted(
            (k, json.dumps(v, sort_keys=True)) for k, v in r.items()))
    return out


def _memory(batches: list[list[dict[str, Any]]], files: list[Path],
            pipeline: MemoryPipeline) -> list[dict[str, dict[str, Any]]]:
    out = []
    for batch, path in zip(batches, files, strict=True):
        raw = pa.RecordBatch.from_arrays([pa.array(["\n".join(json.dumps(e) for e in batch)]),
                                          pa.array([f"file://{path}"])], names=["value", FILE_COLUMNS[0].name])
        decoded = pa.Table.from_batches(list(decode_file_batches([raw], validate=False)))
        records = pipeline.process(decoded, T0)
        out.append({kind: _records([r.value for r in records if r.kind == kind]) for kind in (GAUGES, USAGE)})
    return out


def _assert_one_route_stage(job: StreamingJob) -> None:
    """One exchange by ``state_key`` (the route stage runs once), read once: by the one keyed step."""
    assert job.query is not None
    plan = job.query._jsq.explainInternal(False)  # the executed physical plan (StreamingQuery.explain prints it)
    assert plan.count("- Exchange hashpartitioning(state_key") == 1, plan
    assert plan.count("ReusedExchange") == 0, plan  # two keyed steps over the shuffle would read it twice
    assert plan.count("TransformWithState ") == 2, plan  # the one keyed step and the totals step
    assert plan.count("MapPartitions ") == 1, plan  # the JVM route stage (io.configwatch.detect.RouteStep), once


@pytest.mark.spark
@pytest.mark.parametrize(("seed", "sweep_min"), [(7, None), (23, None), (23, 20)])
def test_the_jvm_steps_give_the_python_transitions_records_batch_by_batch(spark: Any, tmp_path: Path, seed: int,
                                                                          sweep_min: int | None,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert DEFAULT_LAYOUT.gauges_on_jvm  # a new checkpoint runs the JVM steps
    if sweep_min is not None:  # both sides sweep old close markers often: redeliveries after retention then count
        monkeypatch.setattr(udfs.gauges, "SWEEP_MIN_MARKERS", sweep_min)
        monkeypatch.setattr(streaming.jvm_gauges, "SWEEP_MIN_MARKERS", sweep_min)
    batches = _stream(seed, batches=6, per_batch=150)
    replay = tmp_path / "replay"
    replay.mkdir()
    files = []
    for i, batch in enumerate(batches):
        path = replay / f"batch-{i}.jsonl"
        path.write_text("\n".join(json.dumps(e) for e in batch) + "\n")
        os.utime(path, (T0 / 1000 + i, T0 / 1000 + i))  # the file source takes files oldest first
        files.append(path)
    out = tmp_path / "out"
    settings = Settings(checkpoint_dir=tmp_path / "ckpt", source=f"files:{replay}", sink=f"files:{out}",
                        trigger="available-now", outputs="gauges,usage", max_files_per_trigger=1,
                        expectations=False, fingerprint_key=KEY)
    job = StreamingJob(settings, JobOptions.from_settings(settings), None, out=lambda _: None)
    job.start()
    job.wait()
    if seed == 7:  # the plan is the same for every case
        _assert_one_route_stage(job)
    by_epoch: list[dict[str, dict[str, Any]]] = [{GAUGES: {}, USAGE: {}} for _ in batches]
    for kind, record in ((GAUGES, Gauge), (USAGE, VersionUsage)):
        for path in sorted((out / kind).glob("part-*.jsonl")):
            lines = path.read_text().splitlines()
            by_epoch[int(path.name.split("-")[1])][kind].update(_records(lines))
            for line in lines:  # every field, in the record's own order (streaming.jvm_gauges.record_exprs)
                assert list(json.loads(line).items()) == list(record.from_json(line).to_dict().items()), line
    memory = MemoryPipeline(KEY, kinds=(GAUGES, USAGE))
    expected = _memory(batches, files, memory)
    assert sum(len(e[GAUGES]) for e in expected) > 20 and sum(len(e[USAGE]) for e in expected) > 5
    assert redacted_marker(SECRET_INSTANCE, KEY) in json.dumps(expected)  # in a usage record's instance ids
    assert by_epoch == expected
    assert not any(SECRET_INSTANCE in p.read_text() for p in out.rglob("*.jsonl"))
    # The same connection entries (open connections, close markers not yet swept) are left in state.
    entries = spark.read.format("statestore").option("operatorId", 1).option("stateVarName", "entries").load(
        str(tmp_path / "ckpt" / QUERY_NAME))
    kept = sum(len(m) for (_, name), m in memory._first.maps.items() if name == "entries")
    assert entries.count() == kept > 0

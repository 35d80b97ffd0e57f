"""``configwatch run`` with the gauges in a real subprocess: SIGKILL mid-stream and a restart from the
checkpoint end at the gauges of an uninterrupted run; the connection lease drops a silent connection.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from configwatch.settings import Settings
from sinks.kafka import ensure_topic
from streaming.job import JobOptions, StreamingJob
from tests.conftest import eventually
from tests.kafka_helpers import produce

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

CLI = [sys.executable, "-m", "cli.main"]
T0 = 1_790_000_000_000
VERSIONS = [("apache-kafka-java", "3.9.1"), ("apache-kafka-java", "4.1.0"), ("librdkafka", "2.6.1"),
            ("sarama", "1.45.0"), (None, None)]


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "CONFIGWATCH_CACHE_DIR": str(tmp_path / "cache"), "CONFIGWATCH_LOG_LEVEL": "INFO"}


def _record(event: str, ts: int, conn: str, version: tuple[str | None, str | None] = (None, None),
            inst: str | None = None) -> tuple[bytes, bytes]:
    d: dict[str, Any] = {"schema_version": 1, "event": event, "timestamp_ms": ts, "connection_id": conn}
    if inst:
        d["client_instance_id"] = inst
    if version[0]:
        d["client_software_name"], d["client_software_version"] = version
    if event == "config_push":
        d["configs"] = [{"key": "acks", "value": "all", "type": "STRING", "is_default": True}]
    return (inst or conn).encode(), json.dumps(d).encode()


def _workload(n: int, seed: int = 3) -> tuple[list[tuple[bytes, bytes]], dict[str, tuple[int, int]]]:
    """Opens of ``n`` connections, closes of a third, redelivered opens and closes, unknown closes,
    in arrival order, with the expected final gauges by plain counting."""
    rng = random.Random(seed)
    out: list[tuple[bytes, bytes]] = []
    opened: list[tuple[str, tuple[str | None, str | None], str | None]] = []
    opens: list[tuple[bytes, bytes]] = []
    ts = T0
    for i in range(n):
        version = VERSIONS[(i // 2) % len(VERSIONS)]
        inst = f"inst-{i // 2}" if version[0] else None
        conn = f"10.0.0.1:9092-10.1.{i // 250}.{i % 250}:5{i:04d}-{i}"
        ts += 1
        out.append(_record("connection_opened", ts, conn, version, inst))
        opened.append((conn, version, inst))
        opens.append(out[-1])
        if rng.random() < 0.1:
            out.append(out[-1])  # redelivered open
    closed = set(rng.sample(range(n), n // 3))
    for i in sorted(closed):
        conn, version, inst = opened[i]
        ts += 1
        out.append(_record("connection_closed", ts, conn, inst=inst))
        if rng.random() < 0.2:
            out.append(opens[i])  # its open redelivered after the close
    for j in range(n // 20):
        ts += 1
        out.append(_record("connection_closed", ts, f"never-opened-{j}"))
    conns: dict[str, int] = defaultdict(int)
    insts: dict[str, set[str]] = defaultdict(set)
    for i, (_, version, inst) in enumerate(opened):
        if i not in closed:
            key = f"{version[0] or 'unknown'}/{version[1] or 'unknown'}"
            conns[key] += 1
            if inst:
                insts[key].add(inst)
    return out, {k: (conns[k], len(insts[k])) for k in conns}


def _fold(directory: Path) -> dict[str, tuple[int, int]]:
    """The current gauges from the files sink: the last record per key; ``removed`` deletes."""
    current: dict[str, tuple[int, int]] = {}
    for path in sorted(directory.glob("part-*.jsonl")):
        for line in path.read_text().splitlines():
            g = json.loads(line)
            key = f"{g['client_software_name']}/{g['client_software_version']}"
            if g["removed"]:
                current.pop(key, None)
            else:
                current[key] = (g["connections"], g["client_instances"])
    return current


def test_sigkill_mid_stream_then_restart_ends_at_the_uninterrupted_gauges(
        kafka_bootstrap: str, spark: Any, topic_name: Any, tmp_path: Path) -> None:
    topic = topic_name("conns")
    ensure_topic(kafka_bootstrap, topic, partitions=2)
    records, expected = _workload(900)
    produce(kafka_bootstrap, topic, records)

    # The uninterrupted run, in this process, all at once.
    straight = Settings(bootstrap_servers=kafka_bootstrap, checkpoint_dir=tmp_path / "ckpt-a", input_topic=topic,
                        sink=f"files:{tmp_path / 'out-a'}", trigger="available-now", outputs="gauges",
                        expectations=False)
    job = StreamingJob(straight, JobOptions.from_settings(straight), kafka_bootstrap, out=lambda _: None)
    job.start()
    job.wait()
    uninterrupted = _fold(tmp_path / "out-a" / "gauges")
    assert uninterrupted == expected

    # The same input through `configwatch run` in small batches, killed with SIGKILL mid-stream.
    out = tmp_path / "out-b"
    common = [*CLI, "run", "--bootstrap-servers", kafka_bootstrap, "--input-topic", topic, "--sink", f"files:{out}",
              "--outputs", "gauges", "--checkpoint-dir", str(tmp_path / "ckpt-b"), "--no-expectations"]
    with open(tmp_path / "first.log", "w") as log:
        first = subprocess.Popen([*common, "--max-offsets-per-trigger", "150", "--trigger-interval",
                                  "200 milliseconds"], stdout=log, stderr=subprocess.STDOUT, env=_env(tmp_path),
                                 start_new_session=True)
        try:
            eventually(lambda: len(list((out / "gauges").glob("part-*.jsonl"))) >= 2, timeout_s=400,
                       interval_s=0.2, message="the first run writing two batches of gauges")
        finally:
            os.killpg(first.pid, signal.SIGKILL)  # the job, its JVM and its Python workers, at once
            first.wait(timeout=60)
    assert first.returncode == -signal.SIGKILL
    assert _fold(out / "gauges") != expected, "the kill must come mid-stream for this test to mean anything"

    second = subprocess.run([*common, "--trigger", "available-now"], capture_output=True, text=True, timeout=600,
                            env=_env(tmp_path), check=False)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "batch " in second.stdout
    assert _fold(out / "gauges") == uninterrupted


def test_the_lease_drops_a_silent_connection_logs_and_counts_it(kafka_bootstrap: str, topic_name: Any,
                                                                 tmp_path: Path) -> None:
    topic = topic_name("lease")
    ensure_topic(kafka_bootstrap, topic, partitions=1)
    java, go = ("apache-kafka-java", "3.9.1"), ("franz-go", "1.18.0")
    produce(kafka_bootstrap, topic, [_record("connection_opened", T0, "silent", java, "i1"),
                                     _record("connection_opened", T0 + 1, "alive", go, "i2")])
    out, stderr = tmp_path / "out", tmp_path / "stderr.log"
    beats = [0]

    def silent_one_dropped() -> bool:
        # "alive" shows it is alive: a push on its connection at every poll. The lease runs on processing
        # time, so its 20 s leave room for slow batches on a loaded machine between two beats.
        beats[0] += 1
        produce(kafka_bootstrap, topic, [_record("config_push", T0 + 1 + beats[0], "alive", go, "i2")])
        return "apache-kafka-java/3.9.1" not in _fold(out / "gauges") and (out / "gauges").exists() \
            and any((out / "gauges").glob("part-*.jsonl"))

    with open(stderr, "w") as err:
        job = subprocess.Popen([*CLI, "run", "--bootstrap-servers", kafka_bootstrap, "--input-topic", topic,
                                "--sink", f"files:{out}", "--outputs", "gauges", "--no-expectations",
                                "--checkpoint-dir", str(tmp_path / "ckpt"), "--connection-ttl", "20",
                                "--trigger-interval", "500 milliseconds"],
                               stdout=subprocess.DEVNULL, stderr=err, env=_env(tmp_path), start_new_session=True)
        try:
            eventually(lambda: _fold(out / "gauges").get("apache-kafka-java/3.9.1") == (1, 1), timeout_s=300,
                       message="the silent connection counted first")
            eventually(silent_one_dropped, timeout_s=120, interval_s=1.0, message="the lease dropping it")
            job.send_signal(signal.SIGTERM)
            job.wait(timeout=180)
        finally:
            if job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)
                job.wait(timeout=60)
    assert _fold(out / "gauges") == {"franz-go/1.18.0": (1, 1)}
    removed = [json.loads(line) for p in sorted((out / "gauges").glob("part-*.jsonl"))
               for line in p.read_text().splitlines() if '"removed":true' in line]
    assert [(g["client_software_name"], g["connections"]) for g in removed] == [("apache-kafka-java", 0)]
    # The warning comes from a Python worker, whose output Spark copies into <checkpoint root>/spark.log.
    log_text = stderr.read_text() + (tmp_path / "ckpt" / "spark.log").read_text()
    assert "connection lease: dropped 1 connection(s) with no event for 20000 ms or more" in log_text, \
        log_text[-3000:]

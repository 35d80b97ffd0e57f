"""``configwatch run`` and ``demo`` end to end in a subprocess: a replay through files, a graceful
stop + restart from the checkpoint on the real broker that neither loses nor repeats quarantine, and
the demo's run once through on that broker.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from configwatch.samples import sample_events
from sinks.kafka import ensure_topic
from tests.conftest import eventually
from tests.invalid_records import INVALID_CASES, SECRET
from tests.kafka_helpers import produce, read_all
from tests.test_sinks import _lines
from udfs.pipeline import source_key

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

CLI = [sys.executable, "-m", "cli.main"]
LINE_CASES = [c for c in INVALID_CASES if c.raw and b"\n" not in c.raw and b"\r" not in c.raw
              and c.raw.strip(b" \t\r")]  # a replay line cannot hold a line break, and blank lines are skipped


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "CONFIGWATCH_CACHE_DIR": str(tmp_path / "cache"), "CONFIGWATCH_LOG_LEVEL": "INFO"}


def test_replay_files_to_files_available_now(tmp_path: Path) -> None:
    replay = tmp_path / "replay"
    replay.mkdir()
    expected: dict[tuple[str, int], str] = {}
    for name, events, offset in (("a.jsonl", sample_events(40, seed=1), 0), ("b.jsonl", sample_events(25, seed=2), 5)):
        lines = [e.to_json().encode() for e in events]
        for i, case in enumerate(LINE_CASES[offset:offset + 6]):
            lines.insert(3 + 5 * i, case.raw)  # type: ignore[arg-type]
        (replay / name).write_bytes(b"\n".join(lines) + b"\n")
        for n, raw in enumerate(lines, start=1):
            reason = next((c.reason for c in LINE_CASES if c.raw == raw), None)
            if reason is not None:
                expected[(name, n)] = reason
    out = tmp_path / "out"
    run = subprocess.run([*CLI, "run", "--source", f"files:{replay}", "--sink", f"files:{out}",
                          "--trigger", "available-now", "--checkpoint-dir", str(tmp_path / "ckpt"),
                          "--outputs", "quarantine"],
                         capture_output=True, text=True, timeout=600, env=_env(tmp_path), check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "batch 0: 77 records in, 65 valid, 12 invalid; out 0 findings, 12 quarantined, 0 gauge updates" \
        in run.stdout, run.stdout
    quarantined = _lines(out / "quarantine")
    got = {(Path(q["source"]["file"]).name, q["source"]["line"]): q["reason"] for q in quarantined}
    assert got == expected
    assert len(quarantined) == len(expected)
    assert all(q["source"]["file"].endswith(f"/replay/{Path(q['source']['file']).name}") for q in quarantined)
    assert SECRET not in json.dumps(quarantined)
    assert sorted(p.name for p in out.iterdir()) == ["alerts", "gauges", "quarantine", "usage"]
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == ["job", "spark.log"]
    # The console is the progress lines and configwatch's own log; Spark's chatter is in the file.
    spark_log = (tmp_path / "ckpt" / "spark.log").read_text()
    assert f"Spark's own log {tmp_path / 'ckpt' / 'spark.log'}" in run.stderr
    assert re.search(r"^\S+ \S+ WARN ", spark_log, re.MULTILINE), spark_log[-3000:]  # Spark's own warnings
    assert "Python worker" not in run.stdout + run.stderr  # (a checkpoint of the Python route stage has workers)
    assert not re.search(r"^\d\d:\d\d:\d\d WARN ", run.stderr, re.MULTILINE), run.stderr[-3000:]


def _quarantine_keys(bootstrap: str, topic: str) -> list[str]:
    try:
        records = read_all(bootstrap, topic)
    except ValueError:  # the job has not created the topic yet
        return []
    return [source_key(json.loads(v)["source"]) for _, v, _, _ in records if v is not None]


def test_stop_and_restart_neither_loses_nor_repeats_quarantine(kafka_bootstrap: str, topic_name: Any,
                                                               tmp_path: Path) -> None:
    topics = {name: topic_name(name) for name in ("in", "quarantine", "alerts", "gauges")}
    records: list[tuple[bytes | None, bytes | None]] = []
    bad_offsets = []
    cases = [c for c in INVALID_CASES if c.raw is not None]
    for i, event in enumerate(sample_events(600)):
        if i % 10 == 5:  # one invalid record in every ten, spread over the whole stream
            bad_offsets.append(len(records))
            records.append((b"k", cases[len(bad_offsets) % len(cases)].raw))
        records.append((event.kafka_key(), event.to_json().encode()))
    ensure_topic(kafka_bootstrap, topics["in"], partitions=1)
    produce(kafka_bootstrap, topics["in"], records)
    expected = {f"{topics['in']}/0/{o}" for o in bad_offsets}
    common = ["run", "--bootstrap-servers", kafka_bootstrap, "--input-topic", topics["in"],
              "--quarantine-topic", topics["quarantine"], "--alerts-topic", topics["alerts"],
              "--gauges-topic", topics["gauges"], "--checkpoint-dir", str(tmp_path / "ckpt"),
              "--outputs", "quarantine"]

    first = subprocess.Popen([*CLI, *common, "--max-offsets-per-trigger", "40", "--trigger-interval",
                              "200 milliseconds"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=_env(tmp_path), start_new_session=True)
    try:
        eventually(lambda: len(_quarantine_keys(kafka_bootstrap, topics["quarantine"])) >= 4, timeout_s=400,
                   interval_s=0.5, message="the first run quarantining some records")
        os.killpg(first.pid, signal.SIGTERM)  # to the whole group, Spark's JVM included (like `timeout`)
        out, err = first.communicate(timeout=180)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, err[-3000:]
    assert "batch 0:" in out and "Traceback" not in err, err[-3000:]
    after_first = _quarantine_keys(kafka_bootstrap, topics["quarantine"])
    assert 0 < len(after_first) < len(expected), "the stop must come mid-stream for this test to mean anything"

    second = subprocess.run([*CLI, *common, "--trigger", "available-now"], capture_output=True, text=True,
                            timeout=600, env=_env(tmp_path), check=False)
    assert second.returncode == 0, second.stderr[-3000:]
    final = _quarantine_keys(kafka_bootstrap, topics["quarantine"])
    assert sorted(final) == sorted(expected), "every invalid record exactly once across the stop"


def test_the_demo_runs_once_through_on_a_broker_whatever_the_environment_says_of_run(
        kafka_bootstrap: str, topic_name: Any, tmp_path: Path) -> None:
    topics = {flag: topic_name(flag.removeprefix("--").removesuffix("-topic"))
              for flag in ("--input-topic", "--alerts-topic", "--quarantine-topic", "--gauges-topic", "--usage-topic")}
    args = [a for flag, topic in topics.items() for a in (flag, topic)]
    elsewhere = tmp_path / "production-checkpoints"
    env = {**_env(tmp_path), "CONFIGWATCH_CONNECTION_TTL": "30", "CONFIGWATCH_CHECKPOINT_URI": elsewhere.as_uri()}
    demo = subprocess.run([*CLI, "demo", "--no-live", "--clients", "40", "--bootstrap-servers", kafka_bootstrap,
                           *args], capture_output=True, text=True, timeout=600, env=env, check=False)
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert "the demo sets aside CONFIGWATCH_CHECKPOINT_URI, CONFIGWATCH_CONNECTION_TTL" in demo.stderr
    assert not elsewhere.exists()
    done = re.search(r"demo done: (\d+) records processed", demo.stdout)
    assert done, demo.stdout
    pushed = sum(1 for _ in read_all(kafka_bootstrap, topics["--input-topic"]))
    assert int(done.group(1)) == pushed > 0
    alerts = read_all(kafka_bootstrap, topics["--alerts-topic"])
    assert alerts
    assert all(key is not None and json.loads(value or b"")["alert_id"] == key.decode() for key, value, *_ in alerts)

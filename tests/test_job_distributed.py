"""The job on Spark's ``local-cluster[2,1,1024]`` master: two executor processes and a real shuffle
between them give the same outputs as ``local[2]`` on the same input, also across a restart from the
checkpoint.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from configwatch.samples import sample_events
from tests.detection_scenarios import planted_invalid_records, rule_pushes, to_event_json
from tests.test_sinks import _lines

pytestmark = [pytest.mark.spark]

CLI = [sys.executable, "-m", "cli.main"]


def _write(directory: Path, name: str, lines: list[bytes], mtime: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{name}"
    tmp.write_bytes(b"\n".join(lines) + b"\n")
    os.utime(tmp, (mtime, mtime))  # the file source takes files oldest first
    tmp.rename(directory / name)  # files appear atomically in the replay directory


def _run(tmp_path: Path, name: str, master: str, replay: Path) -> subprocess.CompletedProcess[str]:
    # Executors bind where the driver does: without this, on a machine whose host name resolves to
    # loopback, Spark picks another interface and the local cluster's executors keep failing and relaunching.
    env = {**os.environ, "CONFIGWATCH_CACHE_DIR": str(tmp_path / "cache"), "SPARK_LOCAL_IP": "127.0.0.1"}
    run = subprocess.run([*CLI, "run", "--spark-master", master, "--driver-memory", "1g",
                          "--source", f"files:{replay}", "--sink", f"files:{tmp_path / name / 'out'}",
                          "--trigger", "available-now", "--max-files-per-trigger", "1",
                          "--checkpoint-dir", str(tmp_path / name / "ckpt")],
                         capture_output=True, text=True, timeout=900, env=env, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def _outputs(out: Path) -> dict[str, Any]:
    """What a consumer would end with: alert ids, quarantine reasons, the last gauge per key."""
    gauges: dict[str, tuple[int, int]] = {}
    for g in _lines(out / "gauges"):
        key = f"{g['client_software_name']}/{g['client_software_version']}"
        if g["removed"]:
            gauges.pop(key, None)
        else:
            gauges[key] = (g["connections"], g["client_instances"])
    return {"alerts": sorted({a["alert_id"] for a in _lines(out / "alerts")}),
            "quarantine": Counter(q["reason"] for q in _lines(out / "quarantine")),
            "gauges": gauges}


def test_local_cluster_matches_local_including_a_restart(tmp_path: Path) -> None:
    first = [e.to_json().encode() for e in sample_events(120, seed=3)]
    first += [to_event_json(p).encode() for p in rule_pushes()]
    second = [e.to_json().encode() for e in sample_events(90, seed=4, now_ms=1_790_000_500_000)]
    second += list(planted_invalid_records())

    # One file per batch in both runs: stateful findings depend on batch boundaries, not on the master.
    whole = tmp_path / "replay-whole"
    _write(whole, "a.jsonl", first, 1_790_000_000)
    _write(whole, "b.jsonl", second, 1_790_000_100)
    _run(tmp_path, "local", "local[2]", whole)
    expected = _outputs(tmp_path / "local" / "out")
    assert expected["alerts"] and expected["quarantine"] and expected["gauges"]

    growing = tmp_path / "replay-growing"
    _write(growing, "a.jsonl", first, 1_790_000_000)
    _run(tmp_path, "cluster", "local-cluster[2,1,1024]", growing)
    _write(growing, "b.jsonl", second, 1_790_000_100)
    restarted = _run(tmp_path, "cluster", "local-cluster[2,1,1024]", growing)  # resumes from the checkpoint
    assert "batch " in restarted.stdout
    assert _outputs(tmp_path / "cluster" / "out") == expected
    json.dumps(expected["gauges"])

"""The job as a cluster runs it: ``spark-submit`` on ``local-cluster[2,1,1024]`` (two executor processes and
a real shuffle between them), the connector jars given with ``--jars`` and the project's code shipped as its
wheel with ``--py-files`` to interpreters that do not have configwatch installed. It gives the same outputs as
``local[2]`` on the same input, also across a restart from the checkpoint.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from configwatch.samples import sample_events
from tests.detection_scenarios import planted_invalid_records, rule_pushes, to_event_json
from tests.test_sinks import _lines

pytestmark = [pytest.mark.spark]

CLI = [sys.executable, "-m", "cli.main"]
ROOT = Path(__file__).resolve().parent.parent
SPARK_SUBMIT = Path(sys.executable).parent / "spark-submit"


def _write(directory: Path, name: str, lines: list[bytes], mtime: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{name}"
    tmp.write_bytes(b"\n".join(lines) + b"\n")
    os.utime(tmp, (mtime, mtime))  # the file source takes files oldest first
    tmp.rename(directory / name)  # files appear atomically in the replay directory


def _run(tmp_path: Path, name: str, replay: Path, submit: list[str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    """``configwatch run`` over ``replay`` into ``<name>/out``: in this interpreter on ``local[2]``, or through
    ``submit`` (a spark-submit command line ending with the entry script)."""
    # Executors bind where the driver does: without this, on a machine whose host name resolves to
    # loopback, Spark picks another interface and the local cluster's executors keep failing and relaunching.
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "CONFIGWATCH_CACHE_DIR": str(_cache(tmp_path))}
    args = ["run", "--source", f"files:{replay}", "--sink", f"files:{tmp_path / name / 'out'}",
            "--trigger", "available-now", "--max-files-per-trigger", "1",
            "--checkpoint-dir", str(tmp_path / name / "ckpt")]
    if submit is None:
        command = [*CLI, *args, "--spark-master", "local[2]", "--driver-memory", "1g"]
    else:
        import pyspark

        command = [*submit, *args]
        env.pop("PYSPARK_PYTHON", None)
        env.pop("PYSPARK_DRIVER_PYTHON", None)
        env["SPARK_HOME"] = str(Path(pyspark.__file__).resolve().parent)  # the pip-installed Spark's scripts
    run = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path,
                         check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def _cache(tmp_path: Path) -> Path:
    """Both runs' cache directory (one fingerprint key), with the resolved jars of the real one."""
    from configwatch.paths import cache_dir

    cache = tmp_path / "cache"
    if not cache.exists():
        cache.mkdir()
        (cache / "jars").symlink_to(cache_dir() / "jars", target_is_directory=True)
    return cache


def _shipped(tmp_path: Path) -> list[str]:
    """spark-submit with the connector's jars, the wheel as --py-files and interpreters without configwatch.

    The interpreters see the dependencies' site-packages as a plain path entry, so the editable install's
    ``.pth`` hook that would import configwatch from this checkout never runs: its code comes from the wheel.
    """
    from configwatch.jars import connector_jars

    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
                   check=True, timeout=600)
    (wheel,) = dist.glob("configwatch-*.whl")
    shipped = wheel.rename(wheel.with_suffix(".zip"))  # Spark puts .zip files on the workers' path
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    (site,) = (bare / "lib").glob("python3*/site-packages")
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    python = str(bare / "bin" / "python")
    absent = subprocess.run([python, "-c", "import configwatch"], capture_output=True, text=True, cwd=tmp_path,
                            check=False)
    assert absent.returncode != 0 and "No module named 'configwatch'" in absent.stderr  # only the wheel has it
    return [str(SPARK_SUBMIT), "--master", "local-cluster[2,1,1024]", "--driver-memory", "1g",
            "--jars", ",".join(str(j) for j in connector_jars()), "--py-files", str(shipped),
            "--conf", f"spark.pyspark.python={python}", "--conf", f"spark.pyspark.driver.python={python}",
            str(ROOT / "deploy" / "spark" / "job.py")]


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
    _run(tmp_path, "local", whole)
    expected = _outputs(tmp_path / "local" / "out")
    assert expected["alerts"] and expected["quarantine"] and expected["gauges"]

    submit = _shipped(tmp_path)
    growing = tmp_path / "replay-growing"
    _write(growing, "a.jsonl", first, 1_790_000_000)
    _run(tmp_path, "cluster", growing, submit)
    _write(growing, "b.jsonl", second, 1_790_000_100)
    restarted = _run(tmp_path, "cluster", growing, submit)  # resumes from the checkpoint
    assert "batch " in restarted.stdout
    assert _outputs(tmp_path / "cluster" / "out") == expected
    json.dumps(expected["gauges"])

"""``configwatch run`` mistakes are one clear line, before Spark starts: bad flags, a missing
directory, a broker that does not answer within the deadline.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from streaming.job import JobOptions, JobUsageError, parse_target
from streaming.job.options import FILES, KAFKA

CLI = [sys.executable, "-m", "cli.main"]


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CONFIGWATCH_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([*CLI, "run", *args], capture_output=True, text=True, timeout=120, env=env, check=False)


def _one_line(out: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert "Traceback" not in out.stderr
    assert len(lines) == 1, out.stderr
    return lines[0]


def test_parse_target() -> None:
    assert parse_target("--source", "kafka").kind == KAFKA
    target = parse_target("--source", "files:/tmp/out")
    assert (target.kind, str(target.directory)) == (FILES, "/tmp/out")
    for bad in ("file:/x", "files:", "kafka:x", "s3://bucket"):
        with pytest.raises(JobUsageError, match="expected 'kafka' or 'files:DIR'"):
            parse_target("--source", bad)


@pytest.mark.parametrize(("args", "message"), [
    (("--source", "files"), "configwatch run: error: --source: expected 'kafka' or 'files:DIR', got 'files'"),
    (("--sink", "hdfs:/x"), "configwatch run: error: --sink: expected 'kafka' or 'files:DIR', got 'hdfs:/x'"),
    (("--trigger", "once"), "argument --trigger: invalid choice: 'once'"),
    (("--trigger-interval", "soon"), "--trigger-interval: expected e.g. '500 milliseconds' or '2 seconds'"),
    (("--max-offsets-per-trigger", "0"), "--max-offsets-per-trigger: must be a positive number, got 0"),
    (("--outputs", "quarantine,nope"), "--outputs: nope not available"),
    (("--outputs", ",,"), "--outputs: names no output (available: alerts, quarantine, gauges, usage)"),
    (("--checkpoint-dir", "FILE"), "not a directory"),
    (("--checkpoint-uri", "notauri"), "--checkpoint-uri: 'notauri' is no URI"),
    (("--connect-timeout-s", "nan"), "--connect-timeout-s: must be a finite number"),
    (("--source", "files:FILE"), ": not a directory"),
])
def test_bad_flags_are_one_line(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    (tmp_path / "file").write_text("")
    args = tuple(a.replace("FILE", str(tmp_path / "file")) for a in args)
    source = ("--source", f"files:{tmp_path}", "--sink", f"files:{tmp_path / 'out'}")
    out = _run(tmp_path, *source, *args) if args[0] not in ("--source", "--sink") else _run(tmp_path, *args)
    assert out.returncode == 2
    assert message in _one_line(out)


def test_a_missing_replay_directory_is_one_line(tmp_path: Path) -> None:
    out = _run(tmp_path, "--source", f"files:{tmp_path / 'nowhere'}", "--sink", f"files:{tmp_path / 'out'}")
    assert out.returncode == 2
    assert _one_line(out) == (f"configwatch run: error: --source files:{tmp_path / 'nowhere'}: "
                              "the directory does not exist")


def test_an_unreachable_broker_is_one_line_within_the_deadline(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    started = time.monotonic()
    out = _run(tmp_path, "--bootstrap-servers", f"127.0.0.1:{port}", "--connect-timeout-s", "3",
               "--checkpoint-dir", str(tmp_path / "ckpt"))
    assert out.returncode == 1
    assert _one_line(out).startswith(f"configwatch run: cannot reach Kafka at 127.0.0.1:{port} within 3 s")
    assert time.monotonic() - started < 60
    assert not (tmp_path / "ckpt").exists(), "nothing started"


def test_options_from_settings_keep_every_flag(tmp_path: Path) -> None:
    from configwatch.settings import Settings

    settings = Settings(source=f"files:{tmp_path}", sink="kafka", trigger="available-now",
                        max_files_per_trigger=3, outputs="quarantine, gauges", quarantine_topic="q")
    options = JobOptions.from_settings(settings)
    assert options.source.directory == tmp_path.resolve() and options.sink.name == KAFKA
    assert options.available_now and options.max_files_per_trigger == 3 and options.needs_kafka
    assert options.kinds == ("quarantine", "gauges") and options.topics["quarantine"] == "q"

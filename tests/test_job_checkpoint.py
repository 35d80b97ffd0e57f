"""A checkpoint the job cannot run is refused at start, in one line naming it (``streaming.job.checkpoint``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from streaming.job.checkpoint import FORMAT, FORMAT_FILE, check_checkpoint
from streaming.job.exceptions import CheckpointFormatError

pytestmark = pytest.mark.spark


def test_a_new_checkpoint_is_marked_with_the_format_and_runs_again(spark: Any, tmp_path: Path) -> None:
    checkpoint = tmp_path / "job"
    check_checkpoint(spark, str(checkpoint))
    assert json.loads((checkpoint / FORMAT_FILE).read_text()) == {"format": FORMAT}
    (checkpoint / "offsets").mkdir()
    (checkpoint / "offsets" / "0").write_text("v1\n{}\n")
    check_checkpoint(spark, f"file://{checkpoint}")  # a Hadoop URI reads the same file


@pytest.mark.parametrize(("written", "says"), [
    (None, "was begun by an earlier configwatch release"),  # offsets, no format file: before the file existed
    ('{"connection_buckets": 8, "one_keyed_step": true}', "was begun by an earlier configwatch release"),
    ('{"format": 99}', f"holds state in format 99, this release runs format {FORMAT}"),
    ('{"format": 1}', f"holds state in format 1, this release runs format {FORMAT}"),  # before connection_usage
    ("not json", f"holds state in format None, this release runs format {FORMAT}"),
])
def test_a_checkpoint_of_another_format_is_refused_naming_it(spark: Any, tmp_path: Path, written: str | None,
                                                             says: str) -> None:
    checkpoint = tmp_path / "job"
    (checkpoint / "offsets").mkdir(parents=True)
    (checkpoint / "offsets" / "0").write_text("v1\n{}\n")
    if written is not None:
        name = FORMAT_FILE if "format" in written or written == "not json" else "configwatch-layout.json"
        (checkpoint / name).write_text(written)
    with pytest.raises(CheckpointFormatError) as refused:
        check_checkpoint(spark, str(checkpoint))
    assert str(refused.value) == (f"checkpoint {checkpoint} {says}: start the job with a new --checkpoint-dir or "
                                  "--checkpoint-uri (the state rebuilds from the input topic's retained events)")


def test_configwatch_run_refuses_it_in_one_line(tmp_path: Path) -> None:
    replay, old = tmp_path / "replay", tmp_path / "ckpt" / "job"
    replay.mkdir()
    (old / "offsets").mkdir(parents=True)
    (old / "offsets" / "0").write_text("v1\n{}\n")
    env = {**os.environ, "CONFIGWATCH_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, "-m", "cli.main", "run", "--source", f"files:{replay}",
                          "--sink", f"files:{tmp_path / 'out'}", "--trigger", "available-now",
                          "--checkpoint-dir", str(tmp_path / "ckpt")],
                         capture_output=True, text=True, timeout=300, env=env, check=False)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    errors = [line for line in run.stderr.splitlines() if str(old) in line]
    assert len(errors) == 1 and "was begun by an earlier configwatch release" in errors[0], run.stderr[-2000:]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.jsonl"))

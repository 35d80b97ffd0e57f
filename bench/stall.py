"""A stall check for the bench's job runs: no hang goes unnoticed or unexplained.

A job run that makes no progress for ``stall_s`` (no new ``lastProgress`` batch
while the query is active) is a stall, not a slow run: :class:`StallWatch` then
writes a diagnosis next to the results (``bench/results/stall-<time>.txt``: the
query's status and last progress, the driver JVM's thread dump from ``jstack``,
and each Python worker's stacks from ``py-spy dump`` when py-spy is installed),
stops the query and makes the figure fail with :class:`BenchStalledError`. This is
the check kept for the one hang seen on a ``mapInArrow`` task in the former
three-query job (``docs/benchmarks.md``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from bench.proctree import descendants
from configwatch.errors import ConfigwatchError

__all__ = ["STALL_S", "BenchStalledError", "StallWatch"]

STALL_S = 300.0
RESULTS = Path(__file__).resolve().parent / "results"


class BenchStalledError(ConfigwatchError):
    """A bench job run made no progress for the stall time; the diagnosis file is named."""


def _run(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
        return out.stdout + out.stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{' '.join(cmd)}: {exc}"


def diagnose(query: Any, jvm_pid: int) -> str:
    """Status, last progress, JVM threads and Python worker stacks, as one text."""
    parts = [f"status: {query.status}", f"last progress: {query.lastProgress}"]
    jstack = shutil.which("jstack")
    parts.append(_run([jstack, str(jvm_pid)]) if jstack else "jstack not found")
    pyspy = shutil.which("py-spy")
    workers = descendants(jvm_pid)  # the Python daemon and the workers it forked
    for pid in workers:
        parts.append(f"--- python process {pid}\n" + (_run([pyspy, "dump", "--pid", str(pid)]) if pyspy
                                                       else "py-spy not installed (pip install py-spy)"))
    return "\n\n".join(parts)


class StallWatch:
    """``with StallWatch(lambda: job.query, spark):`` around a job run; raises BenchStalledError on a stall."""

    def __init__(self, query: Any, spark: Any, stall_s: float = STALL_S, directory: Path = RESULTS) -> None:
        self._query_of = query
        self._spark = spark
        self._stall_s = stall_s
        self._directory = directory
        self._done = threading.Event()
        self.report: Path | None = None
        self._thread = threading.Thread(target=self._watch, name="bench-stall-watch", daemon=True)

    def __enter__(self) -> StallWatch:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._done.set()
        self._thread.join(timeout=5)
        if self.report is not None:
            raise BenchStalledError(f"the job made no progress for {self._stall_s:.0f} s; diagnosis in {self.report}")

    def _watch(self) -> None:
        last_batch, since = None, time.monotonic()
        while not self._done.wait(5.0):
            query = self._query_of()
            if query is None or not query.isActive:
                continue
            progress = query.lastProgress
            batch = None if progress is None else progress.get("batchId")
            if batch != last_batch:
                last_batch, since = batch, time.monotonic()
            elif time.monotonic() - since > self._stall_s:
                jvm_pid = int(self._spark.sparkContext._jvm.ProcessHandle.current().pid())
                self._directory.mkdir(parents=True, exist_ok=True)
                report = self._directory / f"stall-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
                report.write_text(diagnose(query, jvm_pid))
                self.report = report
                query.stop()
                return

"""Peak memory of the Spark processes under this Python driver, sampled from ``/proc`` (Linux).

``MemorySampler`` polls, every ``interval_s``, the descendants of this process:
the driver JVM (``java`` running Spark, not the Kafka broker the bench starts) and
Spark's Python workers (the daemon, Spark's ``pyspark.daemon`` or
``streaming.worker_daemon``, and the workers it forks).
It keeps the peak RSS of the JVM, the peak sum of the workers' RSS and PSS,
and the peak of JVM + workers at one instant. Forked workers share pages with
the daemon, so the RSS sum counts shared pages more than once; PSS divides them
among the sharers and is the honest total.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from bench.proctree import descendants
from streaming.session import SparkSettings

__all__ = ["MemorySampler"]

_PROC = Path("/proc")
_SPARK_JVM = "org.apache.spark."  # in the command line of Spark's JVMs (spark-submit's, executors')


def _kib(path: Path, field: str) -> int:
    try:
        for line in path.read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cmdline(pid: int) -> str:
    try:
        return (_PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class MemorySampler:
    """Background sampler of the JVM's and the Python workers' memory; ``stop()`` returns the peaks in MB."""

    def __init__(self, interval_s: float = 0.25) -> None:
        self._interval = interval_s
        self._stop = threading.Event()
        self._peak = {"jvm_rss": 0, "workers_rss": 0, "workers_pss": 0, "total_rss": 0, "total_pss": 0,
                      "workers": 0}
        self._samples = 0
        self._thread = threading.Thread(target=self._run, name="memory-sampler", daemon=True)

    def start(self) -> MemorySampler:
        self._thread.start()
        return self

    def _sample(self) -> None:
        jvm_rss = workers_rss = workers_pss = jvm_pss = workers = 0
        for pid in descendants(os.getpid()):
            cmd = _cmdline(pid)
            status = _PROC / str(pid) / "status"
            if "java" in cmd.split(" ", 1)[0] and _SPARK_JVM in cmd:  # not the bench's own Kafka broker
                jvm_rss += _kib(status, "VmRSS:")
                jvm_pss += _kib(_PROC / str(pid) / "smaps_rollup", "Pss:")
            elif "pyspark" in cmd or SparkSettings.python_daemon in cmd:  # Spark's daemon or the job's
                workers += 1
                workers_rss += _kib(status, "VmRSS:")
                workers_pss += _kib(_PROC / str(pid) / "smaps_rollup", "Pss:")
        now = {"jvm_rss": jvm_rss, "workers_rss": workers_rss, "workers_pss": workers_pss,
               "total_rss": jvm_rss + workers_rss, "total_pss": jvm_pss + workers_pss, "workers": workers}
        for name, value in now.items():
            self._peak[name] = max(self._peak[name], value)
        self._samples += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self._interval)

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        self._thread.join()
        mb = {name: round(kib / 1024, 1) for name, kib in self._peak.items() if name != "workers"}
        return {**mb, "max_python_workers": self._peak["workers"], "samples": self._samples}

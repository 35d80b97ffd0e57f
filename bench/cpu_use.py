"""Who used the CPUs during a measured run: every thread's CPU time and run-queue wait, from ``/proc`` (Linux).

``sample()`` reads, for every thread on the machine, its CPU time (``stat``: user + system) and
the time it waited runnable for a CPU (``schedstat``). Threads are grouped by process
(``spark``: this process's descendants, which is where the driver JVM runs; ``broker``: a
``kafka.Kafka`` JVM; ``other``) and by kind (``task``: Spark's executor task threads; ``jit``: the
JIT compilers; ``gc``: the collector and the VM thread; ``other``). ``use(before, after, seconds)``
turns two samples into the figures ``bench.fig_scaling`` reports: how many CPUs were busy, and the
task threads' CPU and wait, in seconds. A thread that ends between the two samples is not counted
(Spark's task threads live in a pool and outlast a run).
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.proctree import descendants

__all__ = ["Sample", "sample", "use"]

_PROC = Path("/proc")
_TICKS = os.sysconf("SC_CLK_TCK")
_KINDS = (("Executor task", "task"), ("CompilerThre", "jit"), ("GC Thread", "gc"), ("G1 ", "gc"),
          ("VM Thread", "gc"))


def _kind(comm: str) -> str:
    return next((kind for prefix, kind in _KINDS if prefix in comm), "other")


def _spark_pids() -> set[int]:
    return {os.getpid(), *descendants(os.getpid())}


def _group(pid: int, spark: set[int]) -> str:
    if pid in spark:
        return "spark"
    try:
        return "broker" if b"kafka.Kafka" in (_PROC / str(pid) / "cmdline").read_bytes() else "other"
    except OSError:
        return "other"


Sample = dict[tuple[str, str, str], float]


def sample() -> Sample:
    """Seconds per (group, kind, "cpu" | "wait"), summed over the threads alive now."""
    out: Sample = defaultdict(float)
    spark = _spark_pids()
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        group = _group(int(entry.name), spark)
        try:
            tasks = list((entry / "task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                stat = (task / "stat").read_text()
                wait_ns = int((task / "schedstat").read_text().split()[1])
            except (OSError, ValueError, IndexError):
                continue  # the thread ended between listing and reading
            comm, fields = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
            kind = _kind(comm) if group == "spark" else "other"
            out[(group, kind, "cpu")] += (int(fields[11]) + int(fields[12])) / _TICKS
            out[(group, kind, "wait")] += wait_ns / 1e9
    return dict(out)


def use(before: Sample, after: Sample, seconds: float) -> dict[str, Any]:
    """CPUs busy (all, and per group and Spark thread kind) and the task threads' CPU and wait, per run."""
    delta = {key: max(0.0, after[key] - before.get(key, 0.0)) for key in after}
    cpu = {key[:2]: value for key, value in delta.items() if key[2] == "cpu"}
    per: dict[str, float] = defaultdict(float)
    for (group, kind), value in cpu.items():
        per[group if group != "spark" else f"spark_{kind}"] += value
    return {
        "cpus_busy": round(sum(cpu.values()) / seconds, 2),
        "cpus_by_part": {part: round(value / seconds, 2) for part, value in sorted(per.items())},
        "task_cpu_s": round(cpu.get(("spark", "task"), 0.0), 1),
        "task_wait_s": round(delta.get(("spark", "task", "wait"), 0.0), 1),
    }

"""Who used the CPUs during a measured run: every thread's CPU time and run-queue wait, from ``/proc`` (Linux).

``sample()`` reads, for every thread on the machine, its CPU time (``stat``: user + system) and
the time it waited runnable for a CPU (``schedstat``). Threads are grouped by process
(``spark``: this process's descendants, which is where the driver JVM runs; ``broker``: a
``kafka.Kafka`` JVM; ``other``) and by kind (``task``: Spark's executor task threads; ``jit``: the
JIT compilers; ``gc``: the collector and the VM thread; ``other``). ``use(before, after, seconds)``
turns two samples into the figures ``bench.fig_scaling`` reports: how many CPUs were busy, and the
task threads' CPU and wait, in seconds. Each thread counts what it used between the two samples (a
thread started meanwhile, all it used); a thread that ends between them is not counted, and does not
take its earlier time off the threads that go on (Spark's pool ends task threads idle for a minute).
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


Sample = dict[tuple[str, str, int], tuple[float, float]]


def sample() -> Sample:
    """Per thread alive now, keyed by (group, kind, thread id): seconds on a CPU and seconds waiting for one."""
    out: Sample = {}
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
            out[(group, kind, int(task.name))] = ((int(fields[11]) + int(fields[12])) / _TICKS, wait_ns / 1e9)
    return out


def use(before: Sample, after: Sample, seconds: float) -> dict[str, Any]:
    """CPUs busy (all, and per group and Spark thread kind) and the task threads' CPU and wait, per run."""
    cpu: dict[tuple[str, str], float] = defaultdict(float)
    wait: dict[tuple[str, str], float] = defaultdict(float)
    for key, (cpu_s, wait_s) in after.items():
        cpu_before, wait_before = before.get(key, (0.0, 0.0))
        cpu[key[:2]] += max(0.0, cpu_s - cpu_before)  # max: a thread id reused by a new thread
        wait[key[:2]] += max(0.0, wait_s - wait_before)
    per: dict[str, float] = defaultdict(float)
    for (group, kind), value in cpu.items():
        per[group if group != "spark" else f"spark_{kind}"] += value
    return {
        "cpus_busy": round(sum(cpu.values()) / seconds, 2),
        "cpus_by_part": {part: round(value / seconds, 2) for part, value in sorted(per.items())},
        "task_cpu_s": round(cpu.get(("spark", "task"), 0.0), 1),
        "task_wait_s": round(wait.get(("spark", "task"), 0.0), 1),
    }

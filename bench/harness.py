"""What every figure of ``bench.run`` shares: the context, the machine, timing statistics and a progress listener.

A figure is a module with ``measure(ctx: BenchContext) -> dict[str, Any]``. It
reads the workload topic (``ctx.topic``) on the run's own local broker, uses the
one Spark session (``ctx.spark()``), and returns flat JSON-able numbers; the
runner merges them into ``bench/results/latest.json``.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from configwatch.settings import Settings

__all__ = [
    "JOB_WARMUP_RECORDS",
    "BenchContext",
    "ProgressLog",
    "fold_gauges",
    "job_settings",
    "job_warmup_bounds",
    "job_warmup_runs",
    "machine",
    "median_of",
    "percentile",
    "read_topic",
    "timed",
]


@dataclass
class BenchContext:
    """One benchmark run: its broker, its workload topic, its parameters and (lazily) its Spark session."""

    bootstrap: str
    work: Path
    topic: str  # the workload: ``records`` simulator records
    warmup_topic: str  # what the uncounted warm-up rounds read (workers, JIT, GX import): the workload itself
    records: int
    partitions: int
    rounds: int  # measured rounds per comparison (a warm-up round comes first and is not counted)
    quick: bool
    latency_s: float
    latency_rate: int  # pushes per second during the latency figure
    state_connections: int
    fingerprint_key: Any
    workload: dict[str, Any] = field(default_factory=dict)  # what bench.workload wrote: sizes, shares
    _spark: Any = None

    def spark(self) -> Any:
        """The run's one Spark session (the project's factory, like the job)."""
        if self._spark is None:
            from streaming.session import SparkSettings, build_spark_session

            self._spark = build_spark_session(SparkSettings(app_name="configwatch-bench"))
        return self._spark

    def scratch(self, name: str) -> Path:
        """A fresh directory under the run's work directory (checkpoints, outputs)."""
        path = self.work / f"{name}-{uuid.uuid4().hex[:8]}"
        path.mkdir(parents=True)
        return path

    def topic_name(self, name: str) -> str:
        """A unique topic name for one figure's outputs."""
        return f"bench-{name}-{uuid.uuid4().hex[:8]}"


# Records the job reads in warm-up runs before its measured runs: a long-running job is warm (its Python
# workers forked, GX imported, the JVM's Kafka reader, Arrow hand-off, shuffle and state code compiled).
# The Python peers are steady after one run.
JOB_WARMUP_RECORDS = 300_000


def job_warmup_runs(records: int) -> int:
    """How many warm-up runs over ``records`` records give the job ``JOB_WARMUP_RECORDS``."""
    return max(1, -(-JOB_WARMUP_RECORDS // max(1, records)))


# Then warm-up runs in small batches: a running job has planned, scheduled and committed thousands of
# batches, whose per-batch code the big runs above barely exercise.
WARMUP_SMALL_BATCH_RUNS = 2
WARMUP_SMALL_BATCHES = 25


def job_warmup_bounds(records: int) -> list[int | None]:
    """The batch bound of each warm-up run over ``records`` records (``None``: the job's own bound)."""
    small = max(1, -(-records // WARMUP_SMALL_BATCHES))
    return [None] * job_warmup_runs(records) + [small] * WARMUP_SMALL_BATCH_RUNS


def job_settings(ctx: BenchContext, checkpoint: Path, **overrides: Any) -> Settings:
    """Job settings for a run over the workload topic: Kafka in, Kafka out, fresh topics and checkpoint."""
    values: dict[str, Any] = dict(
        bootstrap_servers=ctx.bootstrap, checkpoint_dir=checkpoint, input_topic=ctx.topic, sink="kafka",
        alerts_topic=ctx.topic_name("alerts"), quarantine_topic=ctx.topic_name("quarantine"),
        gauges_topic=ctx.topic_name("gauges"), trigger="available-now", starting_offsets="earliest",
        fingerprint_key=ctx.fingerprint_key,
    )
    values.update(overrides)
    return Settings(**values)


def timed(fn: Callable[[], Any]) -> float:
    """Seconds ``fn()`` took (monotonic clock)."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def median_of(values: list[float]) -> float:
    return float(statistics.median(values))


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1) of a non-empty list."""
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))])


def _first_line(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=False)
    except OSError:
        return "unknown"
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else "unknown"


def machine() -> dict[str, Any]:
    """Cores, memory, CPU model, OS and the versions the numbers depend on."""
    import pandas
    import pyarrow
    import pyspark

    from configwatch.jars import kafka_version

    mem_kb = 0
    cpu = platform.processor() or "unknown"
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "cores": os.cpu_count(), "memory_gib": round(mem_kb / 1024 / 1024, 1), "cpu": cpu,
        "os": f"{platform.system()} {platform.release()}", "python": platform.python_version(),
        "java": _first_line(["java", "-version"]), "spark": pyspark.__version__, "kafka_broker": kafka_version(),
        "pandas": pandas.__version__, "pyarrow": pyarrow.__version__,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


class ProgressLog:
    """Every streaming query progress event of the session (a public ``StreamingQueryListener``)."""

    def __init__(self, spark: Any) -> None:
        from pyspark.sql.streaming import StreamingQueryListener

        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        outer = self

        class Listener(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None:  # noqa: N802 - PySpark's name
                pass

            def onQueryProgress(self, event: Any) -> None:  # noqa: N802
                p = event.progress
                ops = p.stateOperators
                row = {"name": p.name, "id": str(p.id), "batch": p.batchId, "rows": p.numInputRows,
                       "ms": p.batchDuration, "duration_ms": dict(p.durationMs),
                       "state_rows": sum(o.numRowsTotal for o in ops),
                       "state_bytes": sum(o.memoryUsedBytes for o in ops),
                       "state_update_ms": sum(o.allUpdatesTimeMs for o in ops)}
                with outer._lock:
                    outer.events.append(row)

            def onQueryIdle(self, event: Any) -> None:  # noqa: N802
                pass

            def onQueryTerminated(self, event: Any) -> None:  # noqa: N802
                pass

        self._spark = spark
        self._listener = Listener()
        spark.streams.addListener(self._listener)

    def mark(self) -> int:
        with self._lock:
            return len(self.events)

    def since(self, mark: int) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.events[mark:])

    def wait_for_rows(self, mark: int, name: str, rows: int, timeout_s: float = 30.0,
                      alive: Callable[[], bool] = lambda: True) -> list[dict[str, Any]]:
        """Progress events arrive asynchronously: wait (with a deadline) until ``rows`` input rows are reported.

        ``alive``: False ends the wait early (the queries stopped, so no more progress can come).
        """
        deadline = time.monotonic() + timeout_s
        while True:
            got = [e for e in self.since(mark) if e["name"] == name]
            if sum(e["rows"] for e in got) >= rows or time.monotonic() > deadline or not alive():
                return got
            time.sleep(0.1)

    def close(self) -> None:
        self._spark.streams.removeListener(self._listener)



def read_topic(bootstrap: str, topic: str) -> list[Any]:
    """Every record of ``topic`` up to its end offsets at the call (kafka-python ``ConsumerRecord``s)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None,
                             max_partition_fetch_bytes=8 * 1024 * 1024)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        if not tps:
            return []
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        end = consumer.end_offsets(tps)
        out: list[Any] = []
        while any(consumer.position(tp) < end[tp] for tp in tps):
            for records in consumer.poll(timeout_ms=1000, max_records=50_000).values():
                out.extend(records)
        return out
    finally:
        consumer.close()


def fold_gauges(bootstrap: str, topic: str) -> dict[str, tuple[int, int]]:
    """The current gauges of a gauges topic: ``key -> (connections, client_instances)``.

    The last record per key wins and a tombstone deletes (a key lives in one
    partition, so ``read_topic`` keeps its records in order).
    """
    import json

    current: dict[str, tuple[int, int]] = {}
    for r in read_topic(bootstrap, topic):
        key = r.key.decode()
        if r.value is None:
            current.pop(key, None)
        else:
            gauge = json.loads(r.value)
            current[key] = (gauge["connections"], gauge["client_instances"])
    return current

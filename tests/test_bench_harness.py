"""The benchmark suite's own pieces, without Kafka or Spark: workload, statistics, report, memory sampler."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench import cpu_use
from bench.fig_scaling import run_order
from bench.harness import (
    JOB_WARMUP_RECORDS,
    WARMUP_SMALL_BATCH_RUNS,
    WARMUP_SMALL_BATCHES,
    job_warmup_bounds,
    percentile,
)
from bench.memory import MemorySampler
from bench.report import BEGIN, END, render, write_docs
from bench.run import main as bench_main
from bench.workload import workload_records
from configwatch.records import Event, validate_event
from configwatch.secrets import SecretStr


def test_workload_is_the_simulated_fleet_replayed_with_fresh_identities() -> None:
    records = list(workload_records(3000, SecretStr("k"), start_ms=1_000, base_clients=300))
    assert len(records) == 3000
    kinds = Counter(r.event for r in records)
    assert set(kinds) <= {"connection_opened", "config_push", "connection_closed", "invalid"}
    assert kinds["config_push"] > 0 and kinds["connection_opened"] > 0
    valid = [r for r in records if r.event != "invalid"]
    events = [Event.from_json(r.value) for r in valid]
    assert all(validate_event(json.loads(r.value)) is None for r in valid[:200])
    # 3000 records need several generations of 300 clients: later generations are new connections.
    opens = [e.connection_id for e in events if e.event == "connection_opened"]
    assert len(opens) == len(set(opens)) and any("-g1" in c for c in opens if c)
    pushes = [r for r in records if r.event == "config_push"]
    assert all(24 <= r.entries <= 55 for r in pushes)
    times = [e.timestamp_ms for e in events if e.event == "connection_opened"]
    assert times == sorted(times)


def test_cpu_use_counts_this_process_and_names_the_spark_thread_kinds() -> None:
    before = cpu_use.sample()
    spent = time.process_time()
    while time.process_time() - spent < 0.3:  # burn CPU in this process, which is in the "spark" group
        sum(i * i for i in range(10_000))
    after = cpu_use.sample()
    use = cpu_use.use(before, after, seconds=1.0)
    assert use["cpus_by_part"]["spark_other"] >= 0.25
    assert use["cpus_busy"] >= use["cpus_by_part"]["spark_other"]
    assert use["task_cpu_s"] == 0.0 and use["task_wait_s"] == 0.0
    kinds = {comm: cpu_use._kind(comm) for comm in ("Executor task l", "C2 CompilerThre", "G1 Conc#0",
                                                      "GC Thread#1", "VM Thread", "dag-scheduler-e")}
    assert kinds == {"Executor task l": "task", "C2 CompilerThre": "jit", "G1 Conc#0": "gc",
                     "GC Thread#1": "gc", "VM Thread": "gc", "dag-scheduler-e": "other"}


def test_cpu_use_keeps_the_time_of_threads_that_go_on_when_another_ends() -> None:
    def burn(seconds: float) -> None:
        spent = time.thread_time()
        while time.thread_time() - spent < seconds:
            sum(i * i for i in range(10_000))

    used, sampled = threading.Event(), threading.Event()

    def ending_thread() -> None:
        burn(0.6)
        used.set()
        sampled.wait(timeout=30)  # alive while the first sample is read, then it ends

    ending = threading.Thread(target=ending_thread)
    ending.start()
    assert used.wait(timeout=30)
    before = cpu_use.sample()  # the ending thread's 0.6 s is in it
    mine = time.thread_time()
    sampled.set()
    ending.join()  # its time leaves with it
    burn(0.3)  # this thread goes on
    after = cpu_use.sample()
    mine = time.thread_time() - mine
    use = cpu_use.use(before, after, seconds=1.0)
    assert use["cpus_by_part"]["spark_other"] >= mine - 0.02  # /proc counts in 10 ms ticks


def test_warmup_is_a_million_records_in_the_jobs_batches_then_small_batches_last() -> None:
    for records in (100_000, 500_000, 3):
        bounds = job_warmup_bounds(records)
        full = [b for b in bounds if b is None]
        small = [b for b in bounds if b is not None]
        assert len(full) * records >= JOB_WARMUP_RECORDS > (len(full) - 1) * records
        assert bounds == [None] * len(full) + small  # the small batches come just before the measured runs
        assert sum(-(-records // b) for b in small) == WARMUP_SMALL_BATCH_RUNS * min(records, WARMUP_SMALL_BATCHES)


def test_scaling_runs_alternate_their_order_round_by_round() -> None:
    # A B C D, then D C B A: every child runs early and late alike, so a drift reaches all of them
    assert run_order(4, 3) == [0, 1, 2, 3, 3, 2, 1, 0, 0, 1, 2, 3]
    assert Counter(run_order(4, 2)) == {0: 2, 1: 2, 2: 2, 3: 2}


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.99) == 99.0
    assert percentile(values, 1.0) == 100.0
    assert percentile([7.0], 0.95) == 7.0


def _results(**figures: Any) -> dict[str, Any]:
    return {"parameters": {"records": 1000, "partitions": 4, "rounds": 1, "quick": True},
            "machine": {"cores": 2, "memory_gib": 23.5, "cpu": "x", "spark": "4.0.0", "kafka_broker": "4.3.1",
                        "python": "3.11", "pyarrow": "26", "pandas": "2.3", "load_average_at_start": [0.5]},
            "started_at": "now", "seconds": 10, "workload": {"bytes": 1_000_000}, "errors": {}, **figures}


def test_report_rewrites_only_its_block(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nhand-written intro\n")
    write_docs(doc, _results(decode_ratio_vs_from_json=1.5, decode_gx_ratio_vs_from_json=1.7,
                             decode_records_per_s=10_000, from_json_records_per_s=15_000))
    first = doc.read_text()
    assert first.startswith("# Benchmarks\n\nhand-written intro\n") and first.count(BEGIN) == 1
    assert "| 1. decode" in first and "1.50x the time" in first
    doc.write_text(first + "\nhand-written outro\n")
    write_docs(doc, _results(gx_overhead_ratio=1.05))
    second = doc.read_text()
    assert second.count(BEGIN) == 1 and second.count(END) == 1
    assert "| 6. GX suite" in second and "| 1. decode" not in second and second.endswith("hand-written outro\n")


def test_report_names_failed_figures() -> None:
    text = render({**_results(), "errors": {"latency": "JobError: boom"}})
    assert "Failed figures: latency: JobError: boom" in text


def test_memory_sampler_reports_peaks_in_mb() -> None:
    peaks = MemorySampler(interval_s=0.01).start().stop()
    assert peaks["samples"] >= 1
    assert {"jvm_rss", "workers_rss", "workers_pss", "total_rss", "total_pss"} <= set(peaks)
    assert all(peaks[k] >= 0 for k in ("jvm_rss", "total_rss"))


@pytest.mark.parametrize("argv", [["--only", "nope"], ["--records", "10"], ["--rounds", "0"]])
def test_a_bench_usage_mistake_is_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bench: ")


@pytest.mark.spark
def test_a_stalled_job_run_is_diagnosed_and_stopped(spark: Any, tmp_path: Path) -> None:
    """A real query whose batch blocks: the watch writes the JVM's threads and stops it, the run fails."""
    import threading

    from bench.stall import BenchStalledError, StallWatch
    from tests.conftest import eventually

    gate = threading.Event()
    stream = (spark.readStream.format("rate").option("rowsPerSecond", 5).load().writeStream
              .foreachBatch(lambda df, batch_id: gate.wait(120) if batch_id >= 1 else df.count())
              .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(processingTime="500 milliseconds"))
    query = stream.start()
    watch = StallWatch(lambda: query, spark, stall_s=6, directory=tmp_path / "results")
    with pytest.raises(BenchStalledError, match="no progress for 6 s"), watch:
        eventually(lambda: watch.report is not None, timeout_s=120, message="the stall diagnosed")
        gate.set()
        query.awaitTermination(120)
    assert not query.isActive
    report = watch.report.read_text() if watch.report else ""
    assert "last progress:" in report and ("\"main\"" in report or "jstack not found" in report)

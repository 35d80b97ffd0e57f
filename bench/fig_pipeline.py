"""Figures 2, 5 and 6: the full job against a read-and-count ceiling, its memory, and the GX cost.

Every run reads the whole workload topic with ``--trigger available-now`` from a
fresh checkpoint (so each one starts the same queries and reads the same
records); the clock runs from starting the queries to their end, in this process.

- ``ceiling``: one query on the job's own Kafka source (``streaming.sources``,
  same options) whose batch function only counts the rows: what reading costs.
- ``job``: ``streaming.job.StreamingJob`` with every output (quarantine, alerts,
  gauges) to fresh Kafka topics, GX on: the product as it runs.
- ``job-nogx``: the same with ``--no-expectations``.

Rounds are interleaved (``CEILING_RUNS`` ceilings, job, job-nogx): warm-up runs on the
warm-up topic (the workload itself) first (the job and the ceiling until the JIT has seen ``JOB_WARMUP_RECORDS``,
then in small batches, ``bench.harness.job_warmup_bounds``; not counted; not in a quick run), then ``ctx.rounds``
measured;
medians are reported; the ceiling's is over all its runs (one run is about half a second and single
runs spread 2x: docs/benchmarks.md, 2026-11-29, morning). Figure 5: ``bench.memory`` samples the driver JVM and
the Python workers during one more ``job`` run per round, not timed: reading a multi-GB JVM's ``smaps_rollup`` every
0.25 s made the run it watched about 1.1x as long (docs/benchmarks.md, 2026-11-27, night).
Figure 6: ``gx_overhead_ratio`` = job seconds / job-nogx seconds.

The profile (``profile_*``; not in a quick run) runs each output alone once (quarantine only is
read + decode + GX, as quarantine writes only the invalid 0.2%), so the
differences to the ceiling say where the full job's time goes; the job's own
accounting adds the decode UDF's and GX's summed task time.
"""

from __future__ import annotations

import time
from typing import Any

from bench.harness import BenchContext, job_settings, job_warmup_bounds, median_of
from bench.memory import MemorySampler
from bench.stall import StallWatch

__all__ = ["measure"]

CEILING_RUNS = 3  # per round


def _ceiling(ctx: BenchContext, topic: str, bound: int | None = None) -> tuple[float, int]:
    from streaming.sources import kafka_source

    spark = ctx.spark()
    counted: list[int] = []
    source = kafka_source(spark, ctx.bootstrap, topic, starting_offsets="earliest", max_offsets_per_trigger=bound)
    query = (source.writeStream.foreachBatch(lambda df, _: counted.append(df.count()))
             .option("checkpointLocation", str(ctx.scratch("ceiling"))).trigger(availableNow=True))
    started = time.perf_counter()
    query.start().awaitTermination()
    return time.perf_counter() - started, sum(counted)


def _job(ctx: BenchContext, *, outputs: str | None = None, expectations: bool = True, topic: str | None = None,
         bound: int | None = None) -> tuple[float, dict[str, int], str]:
    from streaming.job import JobOptions, StreamingJob

    extra: dict[str, Any] = {"expectations": expectations, "input_topic": topic or ctx.topic}
    if bound:
        extra["max_offsets_per_trigger"] = bound
    if outputs is not None:
        extra["outputs"] = outputs
    settings = job_settings(ctx, ctx.scratch("job"), **extra)
    job = StreamingJob(settings, JobOptions.from_settings(settings), ctx.bootstrap, out=lambda _: None)
    output = job.prepare()  # its output topics, made before the clock as the peers make theirs
    started = time.perf_counter()
    with StallWatch(lambda: job.query, ctx.spark()):
        job.start(output)
        result = job.wait()
    return time.perf_counter() - started, result.totals, settings.alerts_topic


def _rate(records: int, seconds: float) -> int:
    return round(records / seconds) if seconds else 0


def measure(ctx: BenchContext) -> dict[str, Any]:
    seconds: dict[str, list[float]] = {"ceiling": [], "job": [], "job-nogx": []}
    memory: list[dict[str, Any]] = []
    counts: set[int] = set()
    totals: dict[str, int] = {}
    alerts_topic = ""
    if not ctx.quick:  # warm-up (not counted) on the warm-up topic (the workload): the JIT's runs, then each kind
        for bound in job_warmup_bounds(ctx.records):
            _ceiling(ctx, ctx.warmup_topic, bound)
            _job(ctx, topic=ctx.warmup_topic, bound=bound)
        _job(ctx, topic=ctx.warmup_topic, expectations=False)
    for _ in range(ctx.rounds):
        for _ in range(CEILING_RUNS):
            ceiling_s, counted = _ceiling(ctx, ctx.topic)
            counts.add(counted)
            seconds["ceiling"].append(ceiling_s)
        job_s, totals, alerts_topic = _job(ctx)
        nogx_s, _, _ = _job(ctx, expectations=False)
        sampler = MemorySampler().start()  # figure 5 in a run of its own: the sampler slows the run it watches
        _job(ctx)
        memory.append(sampler.stop())
        seconds["job"].append(job_s)
        seconds["job-nogx"].append(nogx_s)
    med = {name: median_of(runs) for name, runs in seconds.items()}
    records = ctx.records
    peak = {name: max(m[name] for m in memory) for name in memory[0] if name != "samples"}
    out: dict[str, Any] = {
        "pipeline_seconds": [round(s, 2) for s in seconds["job"]],
        "ceiling_seconds": [round(s, 2) for s in seconds["ceiling"]],
        "pipeline_nogx_seconds": [round(s, 2) for s in seconds["job-nogx"]],
        "ceiling_counted_records": sorted(counts),
        "pipeline_records_per_s": _rate(records, med["job"]),
        "ceiling_records_per_s": _rate(records, med["ceiling"]),
        "pipeline_vs_ceiling_ratio": round(med["job"] / med["ceiling"], 2),
        "gx_overhead_ratio": round(med["job"] / med["job-nogx"], 3),
        "pipeline_totals": totals,
        "pipeline_alerts_topic": alerts_topic,
        "peak_rss_mb": peak["total_rss"],
        "peak_pss_mb": peak["total_pss"],
        "peak_driver_jvm_rss_mb": peak["jvm_rss"],
        "peak_python_workers_rss_mb": peak["workers_rss"],
        "peak_python_workers_pss_mb": peak["workers_pss"],
        "max_python_workers": peak["max_python_workers"],
    }
    if not ctx.quick:  # a smoke run skips the profile's three extra runs
        out.update(_profile(ctx, med["ceiling"], med["job"]))
    return out


def _profile(ctx: BenchContext, ceiling_s: float, job_s: float) -> dict[str, Any]:
    """Each output alone, once: read + decode (+ detection | + gauges), against the ceiling and the full job."""
    alone: dict[str, float] = {}
    task_ms: dict[str, dict[str, int]] = {}
    for output in ("quarantine", "alerts", "gauges"):
        seconds, totals, _ = _job(ctx, outputs=output)
        alone[output] = seconds
        task_ms[output] = {k: totals.get(k, 0) for k in ("batch_ms", "decode_ms", "gx_ms")}
    decode_s = alone["quarantine"] - ceiling_s
    return {
        "profile_seconds": {"ceiling (read + count)": round(ceiling_s, 2),
                            "quarantine alone (read + decode + GX)": round(alone["quarantine"], 2),
                            "alerts alone (+ detection + alerts sink)": round(alone["alerts"], 2),
                            "gauges alone (+ gauge state + gauges sink)": round(alone["gauges"], 2),
                            "full job (one query, all outputs)": round(job_s, 2)},
        "profile_decode_gx_s": round(decode_s, 2),
        "profile_detection_s": round(alone["alerts"] - alone["quarantine"], 2),
        "profile_gauges_s": round(alone["gauges"] - alone["quarantine"], 2),
        "profile_sum_of_alone_s": round(sum(alone.values()), 2),
        "profile_task_ms": task_ms,
    }

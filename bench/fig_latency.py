"""Figure 4: end-to-end latency at a steady input rate, from a record's Kafka timestamp to its output's.

The job runs as in production (``--trigger continuous`` at the default interval,
every output, Kafka in and out, fresh checkpoint) while ``bench.pusher``, its own
process, sends workload records at ``ctx.latency_rate`` records/s for
``ctx.latency_s`` seconds after a warm-up, plus a gauge probe every 100 ms.
Then the job catches up and stops, and the topics are read back:

- alert latency: per finding, the alert record's Kafka timestamp minus the
  timestamp of the ``config_push`` it names (client instance id + event time);
- gauge latency: per probe (a ``connection_opened`` of a version no one else
  uses), its first gauge record's timestamp minus the probe's.

Both timestamps are CreateTime on this machine's clock. Only records sent after
the warm-up count. p50/p95/p99 over the window, and p50 of its first and second
half (a job that cannot keep up shows a rising latency). Then ``bench.floor``
measures the engine's floor (the minimal query of the job's shape: a trivial
``mapInArrow``, a trivial keyed ``transformWithStateInPandas``, Spark's Kafka sink)
at the same rate and trigger, and the job's p99 is reported as a ratio of the floor's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from bench.floor import measure_floor
from bench.harness import BenchContext, ProgressLog, job_settings, percentile, read_topic
from bench.pusher import PROBE

__all__ = ["measure"]

# At this rate the job's latency kept falling for about 2.5 minutes after its input started, even after the
# figure-2 runs (measured 2026-11-26; git log docs/benchmarks.md): so 150 s, for the job and the floors alike.
_WARMUP_S = 150.0
_QUICK_WARMUP_S = 4.0


def _summary(prefix: str, samples: list[tuple[int, float]], cutoff_ms: int, end_ms: int) -> dict[str, Any]:
    """Percentiles of (input timestamp, latency ms) pairs sent after ``cutoff_ms``."""
    kept = [(ts, lat) for ts, lat in samples if ts >= cutoff_ms]
    if not kept:
        return {f"{prefix}_latency_samples": 0}
    values = [lat for _, lat in kept]
    middle = cutoff_ms + (end_ms - cutoff_ms) // 2
    first = [lat for ts, lat in kept if ts < middle]
    second = [lat for ts, lat in kept if ts >= middle]
    out: dict[str, Any] = {f"{prefix}_latency_samples": len(values)}
    for q in (50, 95, 99):
        out[f"{prefix}_latency_ms_p{q}"] = round(percentile(values, q / 100))
    out[f"{prefix}_latency_ms_max"] = round(max(values))
    out[f"{prefix}_latency_ms_p50_halves"] = [round(percentile(first, 0.5)) if first else None,
                                             round(percentile(second, 0.5)) if second else None]
    return out


def _alert_samples(inputs: list[Any], alerts: list[Any]) -> list[tuple[int, float]]:
    pushes: dict[tuple[str, int], int] = {}
    for r in inputs:
        if r.value and b'"config_push"' in r.value[:200]:
            doc = json.loads(r.value)
            if isinstance(doc.get("timestamp_ms"), int):  # not one of the malformed records
                pushes[(doc.get("client_instance_id") or "", doc["timestamp_ms"])] = r.timestamp
    samples = []
    for r in alerts:
        finding = json.loads(r.value)
        sent = pushes.get((finding.get("client_instance_id") or "", finding["event_timestamp_ms"]))
        if sent is not None:
            samples.append((sent, float(r.timestamp - sent)))
    return samples


def _gauge_samples(inputs: list[Any], gauges: list[Any]) -> list[tuple[int, float]]:
    probes = {}
    for r in inputs:
        if r.key and r.key.startswith(PROBE.encode()):
            doc = json.loads(r.value)
            probes[f"{PROBE}/{doc['client_software_version']}"] = r.timestamp
    first: dict[str, int] = {}
    for r in gauges:
        key = r.key.decode() if r.key else ""
        if key in probes and r.value is not None:
            first[key] = min(first.get(key, r.timestamp), r.timestamp)
    return [(probes[k], float(ts - probes[k])) for k, ts in first.items()]


def measure(ctx: BenchContext) -> dict[str, Any]:
    from sinks.kafka import ensure_topic
    from streaming.job import QUERY_NAME, JobOptions, StreamingJob

    warmup_s = _QUICK_WARMUP_S if ctx.quick else _WARMUP_S
    topic = ctx.topic_name("latency-in")
    ensure_topic(ctx.bootstrap, topic, partitions=ctx.partitions)
    settings = job_settings(ctx, ctx.scratch("latency"), input_topic=topic, trigger="continuous")
    job = StreamingJob(settings, JobOptions.from_settings(settings), ctx.bootstrap, out=lambda _: None)
    progress = ProgressLog(ctx.spark())
    mark = progress.mark()
    job.start()
    pusher = subprocess.run(
        [sys.executable, "-m", "bench.pusher", "--bootstrap", ctx.bootstrap, "--topic", topic,
         "--rate", str(ctx.latency_rate), "--seconds", str(warmup_s + ctx.latency_s)],
        capture_output=True, text=True, check=True)
    pushed = json.loads(pusher.stdout.strip().splitlines()[-1])
    total = pushed["records"] + pushed["probes"]
    spark = ctx.spark()
    queries = len(spark.streams.active)
    got = progress.wait_for_rows(mark, QUERY_NAME, total, timeout_s=300,
                                 alive=lambda: len(spark.streams.active) == queries)
    behind = total - sum(e["rows"] for e in got)
    job.request_stop()
    job.wait()
    batches = [e for e in progress.since(mark) if e["rows"]]
    progress.close()
    inputs = read_topic(ctx.bootstrap, topic)
    cutoff_ms, end_ms = pushed["started_ms"] + int(warmup_s * 1000), pushed["ended_ms"]
    out: dict[str, Any] = {
        "latency_rate_records_per_s": ctx.latency_rate, "latency_window_s": ctx.latency_s,
        "latency_warmup_s": warmup_s, "latency_trigger_interval": settings.trigger_interval,
        "latency_pusher": pushed, "latency_rows_not_processed": behind,
        "latency_batch_ms_median": sorted(e["ms"] for e in batches)[len(batches) // 2] if batches else None,
    }
    out.update(_summary("alert", _alert_samples(inputs, read_topic(ctx.bootstrap, settings.alerts_topic)),
                        cutoff_ms, end_ms))
    out.update(_summary("gauge", _gauge_samples(inputs, read_topic(ctx.bootstrap, settings.gauges_topic)),
                        cutoff_ms, end_ms))
    # The engine's floor at the same rate, trigger and topic layout, in the same run (bench.floor).
    out.update(measure_floor(ctx, ctx.latency_rate, ctx.latency_s, warmup_s, settings.trigger_interval))
    floor = out.get("latency_floor_ms_p99")
    for prefix in ("alert", "gauge"):
        p99 = out.get(f"{prefix}_latency_ms_p99")
        if floor and p99 is not None:
            out[f"{prefix}_latency_p99_vs_floor"] = round(p99 / floor, 2)
    return out

"""Figure 7, state scale: the gauge state of ``ctx.state_connections`` connections, its size and its batch cost.

``bench.gauge_workload.connection_events`` (every connection opens, 5% of opens are
redelivered, 40% close, 2% closes of unknown ids) goes to a fresh 4-partition topic; the
real job runs only the gauges query over it (available-now, 10,000 offsets per trigger,
Kafka sink). The gauge state is one entry per connection on the ``conn`` key plus per-version
totals (docs/gauges.md), so a batch reads and writes only the entries of the
connections it names: batch time per 10,000 events is compared between the first and the
last tenth of the batches, while the state grows from nothing to every connection opened
and then to the open ones plus their close markers. Generation and produce times are
reported, not counted. The first batch (Python workers, GX suite, plan) is reported on
its own and left out of the statistics, and so are short batches (under half a trigger),
whose fixed cost would dominate a per-event figure. The stateful operator's own time is
reported beside the batch time: it is the part that grows with the state, and it drifts
less with the machine's load.

The state held at each batch is estimated from the events: the Kafka source
splits every trigger over the partitions in proportion to their backlog, so after
``k`` events the job has read about the first ``k`` of them in production order.
"""

from __future__ import annotations

import logging
import math
import os
import time
import zlib
from itertools import accumulate
from pathlib import Path
from typing import Any

from bench.gauge_workload import connection_events, expected_gauges
from bench.harness import BenchContext, ProgressLog, fold_gauges, job_settings, median_of
from configwatch.records import Event

__all__ = ["BATCH_EVENTS", "PARTITIONS", "measure"]

log = logging.getLogger(__name__)

BATCH_EVENTS = 10_000  # --max-offsets-per-trigger, and the unit of the per-event figure
PARTITIONS = 4
_SAMPLES = 10
_MIN_ROWS = BATCH_EVENTS // 2
_PRODUCE_CHUNK = 250_000


def _produce(spark: Any, bootstrap: str, topic: str, events: list[Event]) -> None:
    """Write ``events`` to ``topic`` with Spark's Kafka writer, in order within every partition.

    kafka-python took 148 s for the 1.47M events of 1M connections here (load 8),
    this 26 s with the JSON encoding (load 2.5). Each chunk is one Spark partition
    written by one task, and chunks go one after another, so a key's events keep
    their order. The Kafka partition is ``crc32(key) % PARTITIONS``.
    """
    import pandas as pd

    for start in range(0, len(events), _PRODUCE_CHUNK):
        chunk = events[start:start + _PRODUCE_CHUNK]
        keys = [ev.kafka_key() for ev in chunk]
        frame = pd.DataFrame({"key": keys, "value": [ev.to_json().encode() for ev in chunk],
                              "partition": [zlib.crc32(k) % PARTITIONS for k in keys]})
        (spark.createDataFrame(frame, "key binary, value binary, partition int").coalesce(1)
         .write.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
         .option("kafka.linger.ms", "20").option("kafka.batch.size", str(1 << 20)).mode("append").save())


def _state_after(events: list[Event], marks: list[int]) -> list[tuple[int, int]]:
    """(open connections, close markers) after the first ``m`` events, for each ascending ``m`` in ``marks``."""
    open_: set[str] = set()
    closed: set[str] = set()
    out: list[tuple[int, int]] = []
    todo = iter(marks)
    mark = next(todo, None)
    for i, ev in enumerate(events):
        while mark is not None and mark <= i:
            out.append((len(open_), len(closed)))
            mark = next(todo, None)
        if mark is None:
            break
        cid = ev.connection_id or ""
        if ev.event == "connection_opened" and cid not in closed:
            open_.add(cid)
        elif ev.event == "connection_closed" and cid in open_:
            open_.discard(cid)
            closed.add(cid)
    out.extend((len(open_), len(closed)) for _ in range(len(marks) - len(out)))
    return out


def _disk_bytes(path: Path) -> tuple[int, int, int]:
    """(bytes on disk as ``du`` counts them, files, median size of the ``*.changelog`` files) under ``path``."""
    used = files = 0
    changelogs: list[float] = []
    for root, _, names in os.walk(path):
        for name in names:
            st = os.lstat(os.path.join(root, name))
            used += st.st_blocks * 512
            files += 1
            if name.endswith(".changelog"):
                changelogs.append(st.st_size)
    return used, files, round(median_of(changelogs)) if changelogs else 0


def _per_10k(batch: dict[str, Any], field: str) -> float:
    return float(batch[field]) * BATCH_EVENTS / batch["rows"]


def measure(ctx: BenchContext) -> dict[str, Any]:
    """Run the gauges over ``ctx.state_connections`` connections; return the figure's numbers."""
    from sinks.kafka import ensure_topic
    from streaming.job import QUERY_NAME, JobOptions, StreamingJob

    n = ctx.state_connections
    t0 = time.perf_counter()
    events = connection_events(n, start_ms=int(time.time() * 1000) - 3_600_000)
    generate_s = time.perf_counter() - t0
    log.info("state scale: %s connections -> %s events generated in %.1f s", n, len(events), generate_s)

    spark = ctx.spark()
    topic = ctx.topic_name("state-conns")
    ensure_topic(ctx.bootstrap, topic, partitions=PARTITIONS)
    t0 = time.perf_counter()
    _produce(spark, ctx.bootstrap, topic, events)
    produce_s = time.perf_counter() - t0
    log.info("state scale: produced to %s in %.1f s; running the gauges", topic, produce_s)

    progress = ProgressLog(spark)
    checkpoint = ctx.scratch("state-ckpt")
    try:
        settings = job_settings(ctx, checkpoint, input_topic=topic, outputs="gauges", trigger="available-now",
                                max_offsets_per_trigger=BATCH_EVENTS, sink="kafka")
        mark = progress.mark()
        job = StreamingJob(settings, JobOptions.from_settings(settings), ctx.bootstrap, out=lambda _: None)
        load = [round(os.getloadavg()[0], 2)]
        t0 = time.perf_counter()
        job.start()
        job.wait()
        job_s = time.perf_counter() - t0
        load.append(round(os.getloadavg()[0], 2))
        batches = [e for e in progress.wait_for_rows(mark, QUERY_NAME, len(events), timeout_s=60) if e["rows"] > 0]
    finally:
        progress.close()

    # the state a batch reads is the one left by the events before it
    held = _state_after(events, list(accumulate((b["rows"] for b in batches), initial=0))[:-1])
    rows = [dict(b, open=o, markers=m, index=i) for i, (b, (o, m)) in enumerate(zip(batches, held, strict=True))]
    measured = [r for r in rows[1:] if r["rows"] >= _MIN_ROWS]
    tenth = max(1, math.ceil(len(measured) / 10))
    first, last = measured[:tenth], measured[-tenth:]

    def med(sel: list[dict[str, Any]], field: str) -> float | None:
        return round(median_of([_per_10k(r, field) for r in sel]), 1) if sel else None

    step = max(1, len(measured) // _SAMPLES)
    picks = measured[::step][:_SAMPLES]
    if measured and picks[-1] is not measured[-1]:
        picks.append(measured[-1])
    growth = [{"batch": r["index"], "open_connections": r["open"], "close_markers": r["markers"],
               "events": r["rows"], "batch_ms": r["ms"], "state_op_ms": r["state_update_ms"]} for r in picks]

    state_dir = Path(JobOptions.from_settings(settings).checkpoint_for(QUERY_NAME)) / "state"
    state_disk, state_files, changelog_bytes = _disk_bytes(state_dir)
    checkpoint_disk, _, _ = _disk_bytes(checkpoint)
    got = fold_gauges(ctx.bootstrap, settings.gauges_topic)
    fleet = (sum(c for c, _ in got.values()), sum(i for _, i in got.values()))
    exact = got == expected_gauges(events)
    return {
        "state_connections": n,
        "state_events": len(events),
        "state_batches": len(batches),
        "state_batches_measured": len(measured),
        "state_generate_s": round(generate_s, 1),
        "state_produce_s": round(produce_s, 1),
        "state_job_wall_s": round(job_s, 1),
        "state_events_per_s_wall": round(len(events) / job_s) if job_s else None,
        "state_load_average_start_end": load,
        "state_first_batch_ms": batches[0]["ms"] if batches else None,
        "state_batch_ms_per_10k_events_first": med(first, "ms"),
        "state_batch_ms_per_10k_events_last": med(last, "ms"),
        "state_batch_ms_per_10k_events_median": med(measured, "ms"),
        "state_op_ms_per_10k_events_first": med(first, "state_update_ms"),
        "state_op_ms_per_10k_events_last": med(last, "state_update_ms"),
        "state_op_share": round(sum(r["state_update_ms"] for r in measured) / sum(r["ms"] for r in measured), 3)
        if measured else None,
        "state_open_connections_first": first[-1]["open"] if first else None,
        "state_open_connections_last": last[-1]["open"] if last else None,
        "state_growth": growth,
        "state_store_bytes_on_disk": state_disk,
        "state_store_files": state_files,
        "state_changelog_bytes_median": changelog_bytes,
        "state_checkpoint_bytes_on_disk": checkpoint_disk,
        "state_memory_bytes": batches[-1]["state_bytes"] if batches else None,
        "state_gauges_exact": exact,
        "state_fleet_connections": fleet[0],
        "state_fleet_client_instances": fleet[1],
    }

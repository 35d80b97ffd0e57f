"""The engine's latency floor: the smallest query of the job's shape, at the job's input rate.

On the same session, trigger and topic layout as the job in ``bench.fig_latency``: a trivial
``mapInArrow`` (a key column from each record), a trivial keyed ``transformWithStateInPandas``
(the state API the job uses; 200 keys, one ValueState counter each, every row out) and Spark's
Kafka sink.

Latency per record: the output record's Kafka timestamp minus the input record's (carried through
as a column).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from bench.harness import BenchContext, read_topic

__all__ = ["measure_floor"]

KEYS = 200


def _keyed(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        value = batch.column("value")
        key = np.asarray(pc.binary_length(value), dtype=np.int64) % KEYS
        ts = pc.divide(pc.cast(batch.column("timestamp"), pa.int64()), 1000)  # microseconds -> ms
        yield pa.RecordBatch.from_arrays([pa.array(key), value, ts], names=["k", "value", "ts"])


def processor() -> Any:
    from pyspark.sql.streaming import StatefulProcessor

    class Count(StatefulProcessor):
        def init(self, handle: Any) -> None:
            self._n = handle.getValueState("n", "n long")

        def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any  # noqa: N802,N803
                            ) -> Iterator[pd.DataFrame]:
            frame = pd.concat(list(rows), ignore_index=True)
            stored = self._n.get()
            self._n.update(((int(stored[0]) if stored else 0) + len(frame),))
            yield pd.DataFrame({"key": frame["k"].astype(str), "value": frame["ts"].astype(str)})

        def close(self) -> None:
            pass

    return Count()


def measure_floor(ctx: BenchContext, rate: int, seconds: float, warmup_s: float, trigger: str) -> dict[str, Any]:
    """Push at ``rate`` for ``warmup_s + seconds`` through the minimal query; percentiles after the warm-up."""
    from sinks.kafka import ensure_topic
    from streaming.sources import kafka_source

    spark = ctx.spark()
    src, out = ctx.topic_name("floor-in"), ctx.topic_name("floor-out")
    ensure_topic(ctx.bootstrap, src, partitions=ctx.partitions)
    ensure_topic(ctx.bootstrap, out, partitions=ctx.partitions)
    raw = kafka_source(spark, ctx.bootstrap, src, starting_offsets="earliest")
    keyed = raw.mapInArrow(_keyed, "k long, value binary, ts long")
    rows = keyed.groupBy("k").transformWithStateInPandas(processor(), "key string, value string", "Append", "None")
    query = (rows.writeStream.format("kafka").option("kafka.bootstrap.servers", ctx.bootstrap)
             .option("topic", out).option("checkpointLocation", str(ctx.scratch("floor-ckpt")))
             .trigger(processingTime=trigger).start())
    try:
        pusher = subprocess.run(
            [sys.executable, "-m", "bench.pusher", "--bootstrap", ctx.bootstrap, "--topic", src,
             "--rate", str(rate), "--seconds", str(warmup_s + seconds)],
            capture_output=True, text=True, check=True)
        pushed = json.loads(pusher.stdout.strip().splitlines()[-1])
        total = pushed["records"] + pushed["probes"]
        deadline = time.monotonic() + 120
        seen: dict[int, int] = {}
        while time.monotonic() < deadline:
            seen.update({int(x["batchId"]): int(x["numInputRows"]) for x in query.recentProgress})
            if sum(seen.values()) >= total:
                break
            time.sleep(0.5)  # polling the query's progress, with a deadline
    finally:
        query.stop()
    cutoff = pushed["started_ms"] + int(warmup_s * 1000)
    lat = sorted(float(r.timestamp - int(r.value)) for r in read_topic(ctx.bootstrap, out)
                 if r.value is not None and int(r.value) >= cutoff)
    if not lat:
        return {"latency_floor_samples": 0}

    def q(p: float) -> int:
        return round(lat[min(len(lat) - 1, int(p * len(lat)))])

    return {"latency_floor_samples": len(lat), "latency_floor_ms_p50": q(0.5), "latency_floor_ms_p95": q(0.95),
            "latency_floor_ms_p99": q(0.99)}

"""Figure 1: the job's decode stage against Spark's native ``from_json``, same data, same session.

The workload topic is read once as a batch DataFrame with the Kafka source's
columns and cached, so neither side pays for Kafka; both sides read it in the
job's partitioning, one task per core (``streaming.decode.one_task_per_core``).
Then, in interleaved rounds (one warm-up round first, not counted; then at least
``MIN_REPEATS``, as one round of a second or two is within the machine's noise),
each variant is forced with Spark's ``noop`` sink:

- ``from_json``: ``from_json(value, EVENT_SCHEMA)``: parse only, no contract
  checks, no quarantine reasons;
- ``decode``: ``streaming.decode.decode(raw, validate=False)``, the job's decode (the
  ``mapInArrow`` body the route stage runs): parse into the same schema *and* check the
  contract, with a reason code for every invalid record;
- ``decode+gx``: the same with the GX suite run on every Arrow batch, as the job runs it.

``decode_ratio_vs_from_json`` = decode seconds / from_json seconds (medians):
the price of the contract checks the native parser cannot do. The GX figure
(figure 6) is measured on the whole job in ``bench.fig_pipeline``; the decode-stage
GX ratio here is its upper bound.
"""

from __future__ import annotations

import time
from typing import Any

from bench.harness import BenchContext, median_of

__all__ = ["measure"]

MIN_REPEATS = 5


def _raw(ctx: BenchContext) -> Any:
    """The workload topic, read once with the Kafka source's columns and cached in memory."""
    spark = ctx.spark()
    raw = (spark.read.format("kafka").option("kafka.bootstrap.servers", ctx.bootstrap)
           .option("subscribe", ctx.topic).option("startingOffsets", "earliest")
           .option("endingOffsets", "latest").load()
           .select("value", "topic", "partition", "offset", "timestamp"))
    raw = raw.repartition(ctx.partitions).cache()
    raw.count()
    return raw


def measure(ctx: BenchContext) -> dict[str, Any]:
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    from streaming.decode import decode, one_task_per_core
    from udfs.schema import EVENT_SCHEMA

    raw = _raw(ctx)
    rows = raw.count()
    event_type = from_arrow_schema(EVENT_SCHEMA)
    variants = {
        "from_json": one_task_per_core(raw)
        .select(F.from_json(F.col("value").cast("string"), event_type).alias("e"), "partition", "offset")
        .select("e.*", "partition", "offset"),
        "decode": decode(raw, validate=False),
        "decode+gx": decode(raw, validate=True),
    }
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    warmup = 1  # Python workers, the GX import and the JIT's first compilations
    for round_no in range(warmup + max(ctx.rounds, MIN_REPEATS)):
        for name, frame in variants.items():
            started = time.perf_counter()
            frame.write.format("noop").mode("overwrite").save()
            if round_no >= warmup:
                seconds[name].append(time.perf_counter() - started)
    raw.unpersist()
    med = {name: median_of(runs) for name, runs in seconds.items()}
    return {
        "decode_records": rows,
        "decode_seconds": {name: [round(s, 3) for s in runs] for name, runs in seconds.items()},
        "from_json_records_per_s": round(rows / med["from_json"]),
        "decode_records_per_s": round(rows / med["decode"]),
        "decode_gx_records_per_s": round(rows / med["decode+gx"]),
        "decode_ratio_vs_from_json": round(med["decode"] / med["from_json"], 3),
        "decode_gx_ratio_vs_from_json": round(med["decode+gx"] / med["from_json"], 3),
    }

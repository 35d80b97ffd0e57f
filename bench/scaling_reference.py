"""The scaling figure's reference: Spark's own streaming query of the job's shape, no configwatch code in it.

The job's Kafka source (``streaming.sources.kafka_source``: same options, same batch bound) -> ``from_json``
to the decoded event's schema -> each push's configs exploded -> per entry a SHA-256, a regular-expression
test and a length -> a stateful aggregation per config key and type (the job's RocksDB state store, update
mode; counts only, no value and no digest goes out) -> Spark's Kafka sink. ``bench.fig_scaling`` runs it at
``local[1]`` and ``local[2]`` as it runs the job, so ``scaling_reference_2_vs_1`` says what this machine gives
a Spark query of this shape, beside the job's ``scaling_2_vs_1`` (as ``latency_floor_ms_p99`` is the
engine's own figure beside the job's latency).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import cpu_use
from streaming.sources import kafka_source

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["DIGEST_MARK", "SECRET_LIKE", "reference_frame", "run_once"]

SECRET_LIKE = "[A-Za-z0-9+/=_-]{20,}"  # a long token: the per-entry regular expression each value is tested with
DIGEST_MARK = "0"  # the hex digit whose digests are counted per key and type


def reference_frame(raw: DataFrame) -> DataFrame:
    """Per config key and type of ``raw``'s pushes: entries, secret-like values, value characters, defaults.

    ``raw``: Kafka records as ``streaming.sources.kafka_source`` gives them. Rows are ``key`` and ``value``
    (the aggregate as JSON text), as Spark's Kafka sink takes them.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    from udfs.schema import EVENT_SCHEMA

    events = raw.select(F.from_json(F.col("value").cast("string"), from_arrow_schema(EVENT_SCHEMA)).alias("e"))
    entries = events.select(F.explode("e.configs").alias("c"))
    value = F.coalesce(F.col("c.value"), F.lit(""))
    per_entry = entries.select(
        F.coalesce(F.col("c.key"), F.lit("")).alias("config_key"), F.col("c.type").alias("config_type"),
        F.sha2(F.concat_ws("=", "c.key", value), 256).alias("digest"),
        F.regexp_like(value, F.lit(SECRET_LIKE)).cast("int").alias("secret_like"),
        F.length(value).alias("chars"), F.col("c.is_default").cast("int").alias("is_default"))
    totals = per_entry.groupBy("config_key", "config_type").agg(
        F.count(F.lit(1)).alias("entries"), F.sum("secret_like").alias("secret_like"),
        F.sum("chars").alias("chars"), F.sum("is_default").alias("defaults"),
        # Each entry is hashed (the work being measured), but no digest leaves: an unkeyed hash of a short
        # value can be reversed by guessing. Only how many digests start with DIGEST_MARK is counted.
        F.sum(F.col("digest").startswith(DIGEST_MARK).cast("int")).alias("digests_marked"))
    return totals.select(F.col("config_key").alias("key"), F.to_json(F.struct("*")).alias("value"))


def run_once(spark: SparkSession, bootstrap: str, topic: str, out_topic: str, checkpoint: Path,
             max_offsets_per_trigger: int | None) -> tuple[float, dict[str, Any]]:
    """One available-now run over ``topic`` to ``out_topic`` from a fresh ``checkpoint``: seconds, CPU use."""
    raw = kafka_source(spark, bootstrap, topic, starting_offsets="earliest",
                       max_offsets_per_trigger=max_offsets_per_trigger)
    stream = (reference_frame(raw).writeStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
              .option("topic", out_topic).outputMode("update")
              .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True))
    before = cpu_use.sample()
    started = time.perf_counter()
    stream.start().awaitTermination()
    seconds = time.perf_counter() - started
    return seconds, cpu_use.use(before, cpu_use.sample(), seconds)

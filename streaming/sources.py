"""Streaming sources: Spark's Kafka source, normalised to ``value`` plus source coordinates."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["kafka_source"]


def kafka_source(spark: SparkSession, bootstrap_servers: str, topic: str,
                 *, starting_offsets: str = "earliest", max_offsets_per_trigger: int | None = None
                 ) -> DataFrame:
    """Raw records of ``topic``: ``value`` (binary), ``topic``, ``partition``, ``offset``, ``timestamp``."""
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("subscribe", topic)
        .option("startingOffsets", starting_offsets)
        .option("failOnDataLoss", "false")
    )
    if max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", str(max_offsets_per_trigger))
    return reader.load().select("value", "topic", "partition", "offset", "timestamp")

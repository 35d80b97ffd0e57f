"""Streaming sources, normalised for the decode stage.

- ``kafka_source``: Spark's Kafka source; ``value`` (binary) plus the coordinates
  ``topic``, ``partition``, ``offset`` and the Kafka ``timestamp``.
- ``files_source``: Spark's file stream source over a directory of JSON Lines
  replay files, one row per *whole file* (``value``, ``file``), because only the
  whole file knows line numbers; the decode stage splits it into lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["PARTITION_FETCH_BYTES", "files_source", "kafka_source"]

_FETCH_MAX_WAIT_MS = 10
PARTITION_FETCH_BYTES = 8 * 1024 * 1024


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
        # A task reads a known offset range, so a fetch never has to wait for data: with the
        # consumer's default fetch.max.wait.ms (500) the fetch at a partition's end waited it out,
        # about 1 s of every batch that reads up to the end (docs/benchmarks.md). Larger fetches
        # also mean fewer round trips for records of a few KB.
        .option("kafka.fetch.max.wait.ms", str(_FETCH_MAX_WAIT_MS))
        .option("kafka.max.partition.fetch.bytes", str(PARTITION_FETCH_BYTES))
    )
    if max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", str(max_offsets_per_trigger))
    return reader.load().select("value", "topic", "partition", "offset", "timestamp")


def files_source(spark: SparkSession, directory: str, *, max_files_per_trigger: int | None = None) -> DataFrame:
    """Whole replay files appearing in ``directory``: ``value`` (the file's text) and ``file`` (its path as read).

    Files must appear atomically (write elsewhere or under a hidden ``.name``,
    then rename into the directory); names starting with ``.`` or ``_`` are ignored.
    """
    from pyspark.sql import functions as F

    reader = spark.readStream.format("text").option("wholetext", "true")
    if max_files_per_trigger:
        reader = reader.option("maxFilesPerTrigger", str(max_files_per_trigger))
    return reader.load(directory).select(F.col("value"), F.col("_metadata.file_path").alias("file"))

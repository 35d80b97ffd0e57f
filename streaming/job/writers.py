"""Where one micro-batch's output records go: Kafka through Spark's own sink, or replay files.

Each writer takes the batch's output frame (``udfs.pipeline.FINAL_SCHEMA``: kind,
key, value, tombstone), already cached by the batch function, and writes it in
one Spark job:

- :class:`KafkaOutput`: Spark's Kafka sink (``format("kafka")``, in the JVM), one
  topic per kind from a ``topic`` column, keys as the contract says (alerts by
  ``alert_id``, quarantine by source coordinates, gauges by ``<name>/<version>``,
  a tombstone's value null). Delivery: at least once (a batch re-run after a crash
  writes again; consumers keep the last record per key, and alert ids are stable).
- :class:`FilesOutput`: JSON Lines, ``DIR/<kind>/part-<epoch>-<partition>.jsonl``
  through ``sinks.files`` (exactly once per directory and checkpoint).

:func:`post_webhook` runs on the driver after the durable write of a batch, never
in a task that may be retried.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa

from configwatch.contract import GAUGES, OUTPUT_KINDS, USAGE
from sinks.base import SinkRecord
from sinks.files import FilesSink
from sinks.kafka import ensure_topic
from sinks.webhook import WebhookSink

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["FilesOutput", "KafkaOutput", "Output", "post_webhook"]


class Output(Protocol):
    """A destination for the job's output frame."""

    @property
    def description(self) -> str: ...

    def prepare(self) -> None: ...

    def write(self, frame: DataFrame, epoch_id: int, kinds: Iterable[str]) -> None: ...


@dataclass(frozen=True)
class KafkaOutput:
    """Every kind to its topic through Spark's Kafka sink; the gauges and usage topics compacted."""

    bootstrap_servers: str
    topics: Mapping[str, str]  # kind -> topic

    @property
    def description(self) -> str:
        return "kafka topics " + ", ".join(self.topics[k] for k in OUTPUT_KINDS if k in self.topics)

    def prepare(self) -> None:
        for kind, topic in self.topics.items():
            ensure_topic(self.bootstrap_servers, topic, compact=kind in (GAUGES, USAGE))

    def write(self, frame: DataFrame, epoch_id: int, kinds: Iterable[str]) -> None:
        from pyspark.sql import functions as F

        topic = F.lit(None).cast("string")
        for kind, name in self.topics.items():
            topic = F.when(F.col("kind") == kind, F.lit(name)).otherwise(topic)
        (frame.select(topic.alias("topic"), F.col("key"),
                      F.when(F.col("tombstone"), F.lit(None).cast("string")).otherwise(F.col("value")).alias("value"))
         .write.format("kafka")
         .option("kafka.bootstrap.servers", self.bootstrap_servers)
         .option("kafka.acks", "all")
         .option("kafka.enable.idempotence", "true")
         .option("kafka.linger.ms", "5")
         .option("kafka.client.id", "configwatch-job")
         .save())


class _PartitionWrite:
    """The ``mapInArrow`` function that writes one partition of one kind into its files sink."""

    def __init__(self, sink: FilesSink, epoch_id: int) -> None:
        self.sink = sink
        self.epoch_id = epoch_id

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        writer = self.sink.build(context.partitionId() if context is not None else 0, self.epoch_id)
        written = 0
        try:
            for batch in batches:
                records = [SinkRecord(k, json.loads(v)) for k, v in
                           zip(batch.column("key").to_pylist(), batch.column("value").to_pylist(), strict=True)]
                writer.write_batch(records)
                written += len(records)
        except BaseException:
            writer.abort()
            raise
        writer.close()
        yield pa.RecordBatch.from_pydict({"written": [written]}, schema=pa.schema([("written", pa.int64())]))


@dataclass(frozen=True)
class FilesOutput:
    """JSON Lines under ``directory/<kind>/``."""

    directory: Path

    @property
    def description(self) -> str:
        return f"files in {self.directory}"

    def sink(self, kind: str) -> FilesSink:
        return FilesSink(str(self.directory / kind))

    def prepare(self) -> None:
        for kind in OUTPUT_KINDS:
            self.sink(kind).prepare()

    def write(self, frame: DataFrame, epoch_id: int, kinds: Iterable[str]) -> None:
        from pyspark.sql import functions as F

        for kind in kinds:
            sink = self.sink(kind)
            sink.begin_epoch(epoch_id)
            frame.where(F.col("kind") == kind).select("key", "value").mapInArrow(
                _PartitionWrite(sink, epoch_id), "written long").collect()


def post_webhook(sink: WebhookSink, values: Iterable[str], epoch_id: int) -> None:
    """POST a batch's findings (contract JSON) to the webhook, best effort, on the driver."""
    writer = sink.build(0, epoch_id)
    records: list[SinkRecord] = []
    for text in values:
        value: dict[str, Any] = json.loads(text)
        records.append(SinkRecord(str(value["alert_id"]), value))
    writer.write_batch(records)
    writer.close()

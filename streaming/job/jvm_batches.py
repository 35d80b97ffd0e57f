"""The job's ``foreachBatch`` function on the JVM, for Kafka outputs with no notifier.

:class:`JvmBatchFunction` drives ``io.configwatch.job.KafkaBatches`` (the job's
jar), the twin of :class:`streaming.job.batches.BatchFunction` for the job's
usual case: every output to Kafka through Spark's Kafka sink, no webhook. A batch
then never crosses into Python: the JVM writes it in one Spark job, counts the
records per kind, and queues its report, which :meth:`JvmBatchFunction.drain`
turns into the same :class:`BatchReport` and progress line. The graceful stop
keeps the same guarantee (``streaming.job.runner``): ``begin_stop`` waits for a
batch that is writing, later batches refuse to run and stay uncommitted.
Measured against the Python function in ``docs/benchmarks.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from sinks.kafka import KafkaOutput
from streaming.job.accounting import BatchReport
from streaming.jvm_pipeline import RouteStats

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

__all__ = ["JvmBatchFunction"]


class JvmBatchFunction:
    """Writes one micro-batch's output records on the JVM; see the module docstring."""

    def __init__(self, spark: SparkSession, output: KafkaOutput, kinds: Collection[str], stats: RouteStats,
                 report: Callable[[BatchReport], None]) -> None:
        self.java: Any = output.jvm_writer(spark, kinds, stats.java)
        self.report = report

    def attach(self, stream: DataStreamWriter) -> DataStreamWriter:
        """Make this the ``foreachBatch`` function of ``stream``."""
        stream._jwrite.foreachBatch(self.java)
        return stream

    def started(self, query: StreamingQuery) -> None:
        self.java.setQuery(query._jsq)

    def begin_stop(self) -> int | None:
        """Refuse every batch from now on; wait for a batch that is writing and return its id."""
        last = int(self.java.beginStop())
        return None if last < 0 else last

    def drain(self, timeout_s: float = 0.0) -> None:
        """Report every batch written since the last call, waiting up to ``timeout_s`` for the first."""
        wait_ms = int(timeout_s * 1000)
        while (text := self.java.takeReport(wait_ms)) is not None:
            wait_ms = 0
            self.report(_report(json.loads(text)))


def _report(obj: dict[str, Any]) -> BatchReport:
    return BatchReport(int(obj["batch"]), {str(k): int(n) for k, n in obj["written"].items()},
                       float(obj["seconds"]), RouteStats.as_stats(obj["stats"]))

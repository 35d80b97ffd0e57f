"""Writing one micro-batch of one output stream through its sink (the ``foreachBatch`` function).

On the driver, :class:`EpochWriter` refuses batches once a graceful stop began,
calls ``sink.begin_epoch``, runs one Spark job whose tasks write their partition
through ``sink.build(partition_id, epoch_id)`` (:class:`PartitionWrite`), and
reports the batch. Spark commits the batch to the checkpoint only after this
returns, which is what makes the sinks' delivery guarantees hold.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sinks.base import Sink
from streaming.job.accounting import BatchReport, diff_stats
from streaming.job.exceptions import StopRequestedError
from streaming.job.outputs import OutputStream, ToRecord

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["EpochWriter", "PartitionWrite", "plain_rows"]

log = logging.getLogger(__name__)

WRITE_CHUNK = 1000
PARK_TIMEOUT_S = 300.0


def _plain(value: Any, typ: pa.DataType) -> Any:
    """Arrow's Python form, with maps as dicts (Arrow gives lists of pairs)."""
    if value is None:
        return None
    if pa.types.is_map(typ):
        return {k: _plain(v, typ.item_type) for k, v in value}
    if pa.types.is_struct(typ):
        return {f.name: _plain(value.get(f.name), f.type) for f in typ}
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return [_plain(v, typ.value_type) for v in value]
    return value


def _has_map(typ: pa.DataType) -> bool:
    if pa.types.is_map(typ):
        return True
    if pa.types.is_struct(typ):
        return any(_has_map(f.type) for f in typ)
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return _has_map(typ.value_type)
    return False


def plain_rows(batch: pa.RecordBatch) -> list[dict[str, Any]]:
    """The rows of ``batch`` as JSON-ready dicts."""
    rows = batch.to_pylist()
    mapped = [f for f in batch.schema if _has_map(f.type)]
    for row in rows:
        for f in mapped:
            row[f.name] = _plain(row[f.name], f.type)
    return rows


class PartitionWrite:
    """The ``mapInArrow`` function that writes one partition of one batch; yields its record count."""

    def __init__(self, sink: Sink, to_record: ToRecord, epoch_id: int) -> None:
        self.sink = sink
        self.to_record = to_record
        self.epoch_id = epoch_id

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        partition_id = context.partitionId() if context is not None else 0
        writer = self.sink.build(partition_id, self.epoch_id)
        written = 0
        try:
            for batch in batches:
                rows = plain_rows(batch)
                for start in range(0, len(rows), WRITE_CHUNK):
                    records = [self.to_record(r) for r in rows[start:start + WRITE_CHUNK]]
                    writer.write_batch(records)
                    written += len(records)
        except BaseException:
            writer.abort()
            raise
        writer.close()
        yield pa.RecordBatch.from_pydict({"written": [written]}, schema=pa.schema([("written", pa.int64())]))


class EpochWriter:
    """The ``foreachBatch`` function of one output stream (runs on the driver)."""

    def __init__(self, output: OutputStream, sink: Sink, stats: Any | None, stop: threading.Event,
                 report: Callable[[BatchReport], None]) -> None:
        self.output = output
        self.sink = sink
        self.stats = stats
        self.stop = stop
        self.report = report
        self.lock = threading.Lock()  # held while a batch writes; a graceful stop waits for it
        self.last_written: int | None = None
        self.query: Any | None = None  # the StreamingQuery, set by the runner once started
        self._stats_before: dict[str, Any] = {}

    def __call__(self, df: DataFrame, epoch_id: int) -> None:
        with self.lock:
            refused = self.stop.is_set()
            if not refused:
                self._write(df, epoch_id)
        if refused:
            self._refuse(df, epoch_id)

    def _refuse(self, df: DataFrame, epoch_id: int) -> None:
        """A batch that starts after a graceful stop began: write nothing, end the query as stopped.

        The batch waits until ``query.stop()`` has marked the query terminated
        (the runner calls it once the batch before has committed), then aborts
        with a JVM ``InterruptedException``. Spark treats a foreachBatch
        function that fails with a py4j-reported interruption while its query is
        terminated as stopped, not failed (``StreamExecution.isInterruptionException``):
        no error, the batch stays uncommitted and runs again on restart. The
        message is kept short and ends with that report, because Spark matches
        it with a regular expression that overflows the stack on long text.
        """
        deadline = time.monotonic() + PARK_TIMEOUT_S
        while time.monotonic() < deadline and (self.query is None or self.query.isActive):
            time.sleep(0.05)
        refused = f"{self.output.name}: batch {epoch_id} refused, the job is stopping"
        log.info("%s; it runs again on restart", refused)
        jvm = df.sparkSession.sparkContext._jvm
        assert jvm is not None
        try:
            jvm.java.lang.Thread.currentThread().interrupt()
            jvm.java.lang.Thread.sleep(1)
        except Exception as exc:  # py4j.protocol.Py4JJavaError carrying java.lang.InterruptedException
            java = "java.lang.InterruptedException" if "InterruptedException" in str(exc) else type(exc).__name__
            raise StopRequestedError(f"{refused}; {type(exc).__module__}.{type(exc).__name__}: "
                                     f"An error occurred while calling Thread.sleep: {java}") from None
        raise StopRequestedError(refused)

    def _write(self, df: DataFrame, epoch_id: int) -> None:
        started = time.perf_counter()
        self.sink.begin_epoch(epoch_id)
        rows = df.mapInArrow(PartitionWrite(self.sink, self.output.to_record, epoch_id),
                             "written long").collect()
        written = sum(int(r["written"]) for r in rows)
        stats: dict[str, Any] = {}
        if self.stats is not None:
            now = dict(self.stats.value)
            now["failed_by_expectation"] = dict(now.get("failed_by_expectation", {}))
            stats = diff_stats(now, self._stats_before)
            self._stats_before = now
        self.last_written = epoch_id
        self.report(BatchReport(self.output.name, epoch_id, self.output.counts_as, written,
                                time.perf_counter() - started, stats))

"""The ``foreachBatch`` function of the job's one query: write every output of a micro-batch, then report.

On the driver, :class:`BatchFunction` refuses batches once a graceful stop began,
writes the batch's output frame to its destination (a ``sinks.base.Output``), tells
the notifier about the findings if one is set (the webhook; after the durable write,
on the driver: a retried task never posts), and reports one progress line. The
stateful steps must run once per batch: an output that reads the frame once (Spark's
Kafka sink) writes it in one Spark job that also counts the records per kind
(``observe``); otherwise (the files sink writes per kind, the notifier reads the
findings back) the frame is cached first. Spark commits the batch to the
checkpoint only after this returns, which is what the delivery guarantees rest on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from configwatch.contract import ALERTS
from sinks.base import Notifier, Output
from streaming.job.accounting import BatchReport, diff_stats
from streaming.job.exceptions import StopRequestedError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

__all__ = ["BatchFunction"]

log = logging.getLogger(__name__)

PARK_TIMEOUT_S = 300.0


class BatchFunction:
    """Writes one micro-batch's output records (runs on the driver)."""

    def __init__(self, output: Output, kinds: Collection[str], notifier: Notifier | None, stats: Any | None,
                 stop: threading.Event, report: Callable[[BatchReport], None]) -> None:
        self.output = output
        self.kinds = tuple(kinds)
        self.notifier = notifier
        self.stats = stats
        self.stop = stop
        self.report = report
        self.lock = threading.Lock()  # held while a batch writes; a graceful stop waits for it
        self.last_written: int | None = None
        self.query: Any | None = None  # the StreamingQuery, set by the runner once started
        self._stats_before: dict[str, Any] = {}

    def attach(self, stream: DataStreamWriter) -> DataStreamWriter:
        """Make this the ``foreachBatch`` function of ``stream``."""
        return stream.foreachBatch(self)

    def started(self, query: StreamingQuery) -> None:
        self.query = query

    def begin_stop(self) -> int | None:
        """Refuse every batch from now on; wait for a batch that is writing and return its id."""
        self.stop.set()
        with self.lock:
            return self.last_written

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
        refused = f"batch {epoch_id} refused, the job is stopping"
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
        if self.notifier is None and self.output.one_pass:
            written = self._write_counting(df, epoch_id)
        else:
            written = self._write_cached(df, epoch_id)
        stats: dict[str, Any] = {}
        if self.stats is not None:
            now = dict(self.stats.value)
            now["failed_by_expectation"] = dict(now.get("failed_by_expectation", {}))
            stats = diff_stats(now, self._stats_before)
            self._stats_before = now
        self.last_written = epoch_id
        self.report(BatchReport(epoch_id, written, time.perf_counter() - started, stats))

    def _write_counting(self, df: DataFrame, epoch_id: int) -> dict[str, int]:
        """One Spark job: the write, counting the records of each kind on the way."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        counts = Observation(f"batch-{epoch_id}")
        observed = df.observe(counts, *[F.sum((F.col("kind") == k).cast("long")).alias(k) for k in self.kinds])
        self.output.write(observed, epoch_id, self.kinds)
        return {kind: int(n) for kind, n in counts.get.items() if n}

    def _write_cached(self, df: DataFrame, epoch_id: int) -> dict[str, int]:
        """The frame cached, counted, written per kind, and the findings read back for the notifier."""
        df.persist()
        try:
            written = {str(r["kind"]): int(r["count"]) for r in df.groupBy("kind").count().collect()}
            if written:
                self.output.write(df, epoch_id, sorted(written))
            if self.notifier is not None and written.get(ALERTS):
                from pyspark.sql import functions as F

                values = [str(r["value"]) for r in df.where(F.col("kind") == ALERTS).select("value").collect()]
                self.notifier.notify(values, epoch_id)
        finally:
            df.unpersist()
        return written

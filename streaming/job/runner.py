"""Run the streaming job: one query (read once, decode once, every output), progress lines, graceful stop.

``StreamingJob`` wires source -> ``streaming.pipeline`` -> :class:`BatchFunction`
-> the output (Kafka topics or replay files), with one checkpoint at
``<checkpoint root>/job``. ``run_job`` is the entry point of ``configwatch run``:
it adds SIGINT/SIGTERM handling.

Graceful stop: the stop flag makes every batch that has not started writing
refuse to run (it writes nothing and ends as an interruption once the query is
stopped, so Spark keeps it uncommitted for the next run); a batch that is
writing finishes, and the job waits until Spark has committed it before it
stops the query. So a stop never loses a batch and never has a batch written
twice. A second signal stops at once.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from pyspark.errors import StreamingQueryException

from configwatch.contract import OUTPUT_KINDS
from configwatch.reachability import check_broker
from configwatch.settings import Settings
from sinks.base import Output
from sinks.registry import build_notifier, build_output
from streaming.job.accounting import BatchReport, new_stats_accumulator
from streaming.job.batches import BatchFunction
from streaming.job.checkpoint import check_checkpoint
from streaming.job.exceptions import JobError, StopRequestedError
from streaming.job.options import FILES, JobOptions
from streaming.job.preflight import topic_exists
from streaming.pipeline import pipeline
from streaming.session import SparkSettings, build_spark_session
from streaming.sources import files_source, kafka_source

__all__ = ["QUERY_NAME", "JobResult", "JobWaiter", "StreamingJob", "make_output", "run_job"]

log = logging.getLogger(__name__)

STOP_DEADLINE_S = 120.0
QUERY_NAME = "job"  # also the checkpoint sub-directory


def _print(line: str) -> None:
    print(line, flush=True)


@dataclass
class JobResult:
    """Totals of a run: batches, records in, verdicts, records out per kind, and times.

    ``batch_ms`` is the time of the batch function (the stateful steps and the write);
    ``decode_ms``/``gx_ms`` sum the decode UDF's own clock over its tasks.
    """

    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("batches", "records_in", "invalid", "expectation_failed", "batch_ms", "decode_ms", "gx_ms",
         *OUTPUT_KINDS), 0))
    stopped_by_signal: bool = False

    def add(self, report: BatchReport) -> None:
        t = self.totals
        t["batches"] += 1
        t["records_in"] += report.records_in
        t["invalid"] += int(report.stats.get("invalid", 0))
        t["expectation_failed"] += int(report.stats.get("expectation_failed", 0))
        t["batch_ms"] += round(report.seconds * 1000)
        t["decode_ms"] += round(float(report.stats.get("decode_seconds", 0.0)) * 1000)
        t["gx_ms"] += round(float(report.stats.get("gx_seconds", 0.0)) * 1000)
        for kind, n in report.written.items():
            t[kind] = t.get(kind, 0) + n

    def line(self) -> str:
        t = self.totals
        return (f"total: {t['records_in']} records in, {t['invalid']} invalid ({t['expectation_failed']} by "
                f"expectations); out {t['alerts']} findings, {t['quarantine']} quarantined, {t['gauges']} gauge "
                f"updates in {t['batches']} batch{'' if t['batches'] == 1 else 'es'}")


@contextlib.contextmanager
def _jvm_ignores_sigterm() -> Iterator[None]:
    """Launch Spark's JVM with SIGTERM ignored (an ignored signal survives exec; the JVM then keeps it so).

    A SIGTERM sent to the whole process group (``timeout``, ``kill -- -PGID``, a
    service manager) would otherwise kill the JVM under the graceful stop; the
    Python driver alone handles it and stops the queries. (PySpark already
    starts the JVM with SIGINT ignored.) Signals in this window, the JVM's
    start, are ignored.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _NotRefusal(logging.Filter):
    """Drops py4j's error record for a batch refused during a graceful stop (an expected abort)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, StopRequestedError)


def _quiet_refused_batches() -> None:
    logger = logging.getLogger("py4j.clientserver")
    if not any(isinstance(f, _NotRefusal) for f in logger.filters):
        logger.addFilter(_NotRefusal())


def make_output(options: JobOptions, bootstrap: str | None) -> Output:
    """The ``--sink`` destination of every output kind."""
    return build_output(options.sink, bootstrap=bootstrap, topics=options.topics)


class StreamingJob:
    """The job's query: ``start`` it, then ``wait`` (``request_stop`` from any thread)."""

    def __init__(self, settings: Settings, options: JobOptions, bootstrap: str | None,
                 out: Callable[[str], None] = _print) -> None:
        self.settings = settings
        self.options = options
        self.bootstrap = bootstrap
        self.out = out
        self.result = JobResult()
        self._stop = threading.Event()
        self._query: Any | None = None
        self._batches: BatchFunction | None = None
        self._report_lock = threading.Lock()

    # -- setup ---------------------------------------------------------------------------------
    def prepare(self) -> Output:
        """Preflight checks and the output's destinations (topics, directories); no Spark yet."""
        if self.options.needs_kafka:
            assert self.bootstrap is not None
            check_broker(self.bootstrap, self.options.connect_timeout_s)
            if self.options.source.kind != FILES and not topic_exists(self.bootstrap, self.options.input_topic):
                log.warning("input topic %s does not exist yet; the job waits for it", self.options.input_topic)
        output = make_output(self.options, self.bootstrap)
        output.prepare()
        return output

    def _raw(self, spark: Any) -> Any:
        o = self.options
        if o.source.kind == FILES:
            return files_source(spark, str(o.source.directory), max_files_per_trigger=o.max_files_per_trigger)
        assert self.bootstrap is not None
        return kafka_source(spark, self.bootstrap, o.input_topic, starting_offsets=o.starting_offsets,
                            max_offsets_per_trigger=o.max_offsets_per_trigger)

    def _on_report(self, report: BatchReport) -> None:
        with self._report_lock:
            self.result.add(report)
        if report.records_in or any(report.written.values()):
            self.out(report.line())

    def start(self, output: Output | None = None) -> None:
        """Start the query; ``output``: what :meth:`prepare` returned, if the caller prepared it already."""
        output = output or self.prepare()
        _quiet_refused_batches()
        with _jvm_ignores_sigterm():
            spark = build_spark_session(SparkSettings(master=self.settings.spark_master,
                                                      driver_memory=self.settings.driver_memory,
                                                      log_file=self.options.spark_log))
        kinds = self.options.kinds
        checkpoint = self.options.checkpoint_for(QUERY_NAME)
        check_checkpoint(spark, checkpoint)
        stats = new_stats_accumulator(spark.sparkContext)
        frame = pipeline(self._raw(spark), self.settings, validate=self.options.expectations, kinds=kinds,
                         stats=stats)
        notifier = build_notifier(self.settings.webhook_url)
        batches = BatchFunction(output, kinds, notifier, stats, self._stop, self._on_report)
        stream = (batches.attach(frame.writeStream).queryName(QUERY_NAME).outputMode("append")
                  .option("checkpointLocation", checkpoint))
        if self.options.available_now:
            stream = stream.trigger(availableNow=True)
        else:
            stream = stream.trigger(processingTime=self.options.trigger_interval)
        self._query = stream.start()
        batches.started(self._query)
        self._batches = batches
        log.info("job started: %s -> %s, %s (%s; checkpoint %s; Spark's own log %s)",
                 self.options.source, output.description, output.guarantee, ", ".join(kinds), checkpoint,
                 self.options.spark_log)
        if notifier is not None:
            log.info("notifying %s after each batch's durable write", notifier.description)

    # -- running and stopping ----------------------------------------------------------------------
    def request_stop(self) -> None:
        """Ask for a graceful stop (safe from signal handlers and other threads)."""
        self._stop.set()

    @staticmethod
    def _failure(query: Any) -> str | None:
        exc = query.exception()
        if exc is None:
            return None
        text = str(exc)
        if "StopRequestedError" in text:
            return None
        return next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)

    @property
    def query(self) -> Any | None:
        """The running streaming query (None before ``start``)."""
        return self._query

    @staticmethod
    def _ended(query: Any, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the query to end; wakes as it ends, not at the next poll."""
        try:
            return bool(query.awaitTermination(timeout_s)) or not query.isActive
        except StreamingQueryException:  # ended by an error, which _failure reads
            return True

    def wait(self, poll_s: float = 0.5) -> JobResult:
        """Block until the query ends (available-now) or a stop is requested; raise JobError on failure."""
        query = self._query
        assert query is not None, "start() first"
        while True:
            ended = self._ended(query, poll_s)
            if ended:
                failure = self._failure(query)
                if failure:
                    self._stop.set()
                    raise JobError(f"the job's query failed: {failure}")
                return self.result
            if self._stop.is_set():
                self.result.stopped_by_signal = True
                self.stop(graceful=True)
                return self.result

    def wait_in_background(self) -> JobWaiter:
        """``wait()`` on a daemon thread, for callers that keep the main thread (signals, a UI)."""
        return JobWaiter(self).start()

    def stop(self, *, graceful: bool) -> None:
        """Stop the query; graceful: let a writing batch finish and commit first."""
        self._stop.set()
        query, batches = self._query, self._batches
        if query is None or batches is None or not query.isActive:
            return
        deadline = time.monotonic() + STOP_DEADLINE_S
        if graceful:
            last = batches.begin_stop()  # a batch that is writing finishes; later ones refuse to run
            while last is not None and query.isActive and time.monotonic() < deadline:
                progress = query.lastProgress
                if progress is not None and int(progress.get("batchId", -1)) >= last:
                    break  # progress is reported after the commit log entry is written
                time.sleep(0.1)
        query.stop()
        log.info("job stopped")


class JobWaiter:
    """A started job's ``wait()`` on a daemon thread: ``ended`` is set when it returns; ``failure`` holds its error."""

    def __init__(self, job: StreamingJob) -> None:
        self.job = job
        self.ended = threading.Event()
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="job-wait", daemon=True)

    def _run(self) -> None:
        try:
            self.job.wait()
        except BaseException as exc:  # handed to the caller through ``failure``
            self.failure = exc
        finally:
            self.ended.set()

    def start(self) -> JobWaiter:
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 180.0) -> None:
        """Ask the job to stop gracefully and wait up to ``timeout_s`` for ``wait()`` to return."""
        self.job.request_stop()
        self._thread.join(timeout_s)


def run_job(settings: Settings, options: JobOptions, bootstrap: str | None, *,
            out: Callable[[str], None] = _print, stop_spark: bool = True) -> JobResult:
    """Run until stopped (SIGINT/SIGTERM) or, with available-now, until caught up; print totals.

    ``stop_spark``: end the Spark application afterwards (a cluster master's executors leave with it).
    """
    job = StreamingJob(settings, options, bootstrap, out)
    signals = 0

    def on_signal(signum: int, frame: FrameType | None) -> None:
        nonlocal signals
        signals += 1
        if signals == 1:
            log.info("%s: stopping after the running batch (again to stop at once)", signal.Signals(signum).name)
            job.request_stop()
        else:
            raise KeyboardInterrupt

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        job.start()
        try:
            result = job.wait()
        except KeyboardInterrupt:
            job.stop(graceful=False)
            raise
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if stop_spark:
            _stop_spark()
    out(result.line())
    return result


def _stop_spark() -> None:
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is not None:
        session.stop()

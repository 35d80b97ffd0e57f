"""The sink contract: a picklable factory that holds only settings, and a per-partition writer.

How the job drives a sink (``streaming.job``): for each micro-batch (``epoch_id``)
of one output stream,

1. on the driver, once: ``sink.begin_epoch(epoch_id)`` (default: nothing);
2. on the executors, for every partition of that batch:
   ``writer = sink.build(partition_id, epoch_id)``, then ``writer.write_batch(records)``
   zero or more times (chunks of :class:`SinkRecord`), then ``writer.close()``.
   If anything raises, the job calls ``writer.abort()`` instead of ``close()`` and
   re-raises: the Spark task fails and the whole batch is retried;
3. the batch is committed to the query's checkpoint only after every partition's
   ``close()`` returned.

Before the first batch the driver calls ``sink.prepare()`` once (create topics,
directories); it must be idempotent.

Delivery guarantee, stated by each implementation in ``Sink.guarantee``:

- ``close()`` returning means every record written to that writer is durable at the
  destination. A writer that cannot deliver raises :class:`sinks.exceptions.SinkWriteError`
  from ``write_batch`` or ``close``; it never drops records silently. With step 3
  this gives at-least-once for every sink.
- A batch can be written twice only when the job dies between step 2 and step 3
  (crash, kill -9). A sink that makes a rewrite of the same ``(epoch_id, partition_id)``
  replace the first write is exactly-once (``files``); one that appends is
  at-least-once (``kafka``, where consumers dedupe by record key). A graceful stop
  (SIGINT/SIGTERM) lets the running batch commit first, so it never causes a rewrite.

A factory is pickled to the executors, so it holds settings only (no sockets,
files or clients); writers may share a per-process client cache.

The job itself sees two protocols only, built by ``sinks.registry`` from the
``--sink`` target and ``--webhook-url``: an :class:`Output` writes a micro-batch's
output frame (every kind) in one Spark job; a :class:`Notifier` is told about a
batch's findings on the driver, after the Output's durable write.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["AT_LEAST_ONCE", "EXACTLY_ONCE", "Notifier", "Output", "Sink", "SinkRecord", "SinkWriter"]

EXACTLY_ONCE = "exactly-once"
AT_LEAST_ONCE = "at-least-once"


@dataclass(frozen=True, slots=True)
class SinkRecord:
    """One output record: a contract JSON object and its key.

    ``key`` is the contract's record key (alerts: ``alert_id``; gauges:
    ``<name>/<version>``; quarantine: the source coordinates), ``None`` when the
    stream has none. ``tombstone`` marks a deletion of ``key``: a Kafka sink writes
    a null value, a file sink writes ``value`` (which says so, e.g. ``removed: true``).
    """

    key: str | None
    value: Mapping[str, Any]
    tombstone: bool = False


class SinkWriter(ABC):
    """Writes the records of one partition of one micro-batch. Lives on an executor."""

    @abstractmethod
    def write_batch(self, records: Sequence[SinkRecord]) -> None:
        """Write ``records`` (may buffer); raise SinkWriteError when they cannot be delivered."""

    @abstractmethod
    def close(self) -> None:
        """Flush: when this returns, every record written is durable. Raise SinkWriteError otherwise."""

    def abort(self) -> None:  # noqa: B027 - optional hook, nothing to discard by default
        """Give up after an error: discard what can be discarded, release resources. Never raises."""

    def __enter__(self) -> SinkWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            self.close()
        else:
            self.abort()


class Sink(ABC):
    """A picklable factory of writers for one output stream (alerts, quarantine or gauges).

    Subclasses are small frozen dataclasses of settings. ``guarantee`` is
    :data:`EXACTLY_ONCE` or :data:`AT_LEAST_ONCE` (see the module docstring).
    """

    guarantee: ClassVar[str] = AT_LEAST_ONCE

    @property
    @abstractmethod
    def description(self) -> str:
        """Where records go, for logs (e.g. ``kafka topic client-config-alerts``); no secrets."""

    def prepare(self) -> None:  # noqa: B027 - optional hook
        """Driver side, once before the first batch: create the destination if absent. Idempotent."""

    def begin_epoch(self, epoch_id: int) -> None:  # noqa: B027 - optional hook
        """Driver side, before the partitions of ``epoch_id`` are written (e.g. clear a half-written retry)."""

    @abstractmethod
    def build(self, partition_id: int, epoch_id: int) -> SinkWriter:
        """Return the writer for one partition of one micro-batch (runs on an executor)."""


class Output(Protocol):
    """Where the job writes a micro-batch's output frame (``udfs.pipeline.FINAL_SCHEMA``: kind, key, value,
    tombstone), every kind in one go; ``guarantee`` as for a :class:`Sink`. ``one_pass``: ``write`` reads
    the frame once (one Spark job), so the job need not cache the frame before writing it."""

    @property
    def guarantee(self) -> str: ...

    @property
    def one_pass(self) -> bool: ...

    @property
    def description(self) -> str: ...

    def prepare(self) -> None: ...

    def write(self, frame: DataFrame, epoch_id: int, kinds: Iterable[str]) -> None: ...


class Notifier(Protocol):
    """Told about a batch's findings (contract JSON texts) on the driver, after its durable write."""

    @property
    def description(self) -> str: ...

    def notify(self, findings: Iterable[str], epoch_id: int) -> None: ...

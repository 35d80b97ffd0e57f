"""A primary sink plus a best-effort copy: the alerts' Kafka (or files) destination and the webhook.

Every record goes to the primary writer first. ``close`` closes the primary (its
guarantee, errors and all: a failure fails the task and the batch is retried),
and only then hands the records to the best-effort writer, whose failures are
logged and swallowed. So the best-effort copy can never stop the job, never delay
the primary's durability, and never sees a record the primary did not deliver.
Delivery guarantee: the primary's.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from sinks.base import Sink, SinkRecord, SinkWriter

__all__ = ["FanOutSink", "FanOutWriter"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FanOutSink(Sink):
    """``primary`` with its guarantee, plus ``best_effort`` fed after each successful primary close."""

    primary: Sink
    best_effort: Sink

    @property
    def guarantee(self) -> str:  # type: ignore[override]
        return self.primary.guarantee

    @property
    def description(self) -> str:
        return f"{self.primary.description} (+ {self.best_effort.description}, best effort)"

    def prepare(self) -> None:
        self.primary.prepare()
        try:
            self.best_effort.prepare()
        except Exception:  # a best-effort destination must not keep the job from starting
            log.warning("%s: prepare failed; continuing without it for now", self.best_effort.description)

    def begin_epoch(self, epoch_id: int) -> None:
        self.primary.begin_epoch(epoch_id)

    def build(self, partition_id: int, epoch_id: int) -> FanOutWriter:
        return FanOutWriter(self.primary.build(partition_id, epoch_id), self.best_effort, partition_id, epoch_id)


class FanOutWriter(SinkWriter):
    """Writes through the primary; replays the records to the best-effort sink after the primary closed."""

    def __init__(self, primary: SinkWriter, best_effort: Sink, partition_id: int, epoch_id: int) -> None:
        self.primary = primary
        self.best_effort = best_effort
        self.partition_id = partition_id
        self.epoch_id = epoch_id
        self._records: list[SinkRecord] = []

    def write_batch(self, records: Sequence[SinkRecord]) -> None:
        self.primary.write_batch(records)
        self._records.extend(records)

    def close(self) -> None:
        self.primary.close()
        records, self._records = self._records, []
        if not records:
            return
        try:
            writer = self.best_effort.build(self.partition_id, self.epoch_id)
            writer.write_batch(records)
            writer.close()
        except Exception:  # best effort: the primary copy is already durable
            log.warning("%s: %d record(s) not delivered", self.best_effort.description, len(records))

    def abort(self) -> None:
        self._records = []
        self.primary.abort()

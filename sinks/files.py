"""The files sink: JSON Lines under one directory per output stream, exactly once.

Each partition of each micro-batch becomes one file,
``part-<epoch>-<partition>.jsonl``, written under a hidden temporary name and
renamed into place on ``close()`` (atomic on one filesystem), so readers never
see half a file. A retried batch rewrites the same names, and ``begin_epoch``
first removes whatever a failed attempt of that epoch left, so a batch lands
exactly once however often it runs (a stop/restart, a crash, a task retry).

Delivery guarantee: exactly-once per (output directory, checkpoint). Starting
over with a new checkpoint into the same directory rewrites epochs from 0 on:
give a new checkpoint a new directory.

:class:`FilesOutput` is what the job uses: ``DIR/<kind>/part-<epoch>-<partition>.jsonl``,
one ``mapInArrow`` writer per partition of each kind.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, ClassVar

import pyarrow as pa

from configwatch.contract import OUTPUT_KINDS
from sinks.base import EXACTLY_ONCE, Sink, SinkRecord, SinkWriter
from sinks.encoding import to_json
from sinks.exceptions import SinkSetupError, SinkWriteError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["FilesOutput", "FilesSink", "FilesWriter", "part_name"]

log = logging.getLogger(__name__)


def part_name(epoch_id: int, partition_id: int) -> str:
    """The file one partition of one batch lands in (sorts by epoch, then partition)."""
    return f"part-{epoch_id:010d}-{partition_id:05d}.jsonl"


class FilesWriter(SinkWriter):
    """Appends JSON lines to a hidden temporary file; ``close()`` renames it into place."""

    def __init__(self, directory: Path, epoch_id: int, partition_id: int) -> None:
        self._final = directory / part_name(epoch_id, partition_id)
        self._tmp = directory / f".{self._final.name}.{os.getpid()}.tmp"
        self._out: IO[str] | None = None

    def write_batch(self, records: Sequence[SinkRecord]) -> None:
        if not records:
            return
        try:
            if self._out is None:
                self._out = open(self._tmp, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()/abort()
            self._out.writelines(to_json(r.value) + "\n" for r in records)
        except OSError as exc:
            raise SinkWriteError(f"cannot write {self._tmp.name} in {self._tmp.parent}: {exc.strerror}") from exc

    def close(self) -> None:
        if self._out is None:
            return  # nothing written: no empty files
        try:
            self._out.flush()
            os.fsync(self._out.fileno())
            self._out.close()
            self._out = None
            os.replace(self._tmp, self._final)
        except OSError as exc:
            raise SinkWriteError(f"cannot commit {self._final}: {exc.strerror}") from exc

    def abort(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None
        self._tmp.unlink(missing_ok=True)


@dataclass(frozen=True)
class FilesSink(Sink):
    """JSON Lines files in ``directory`` (e.g. ``OUT/quarantine``)."""

    directory: str
    guarantee: ClassVar[str] = EXACTLY_ONCE

    @property
    def description(self) -> str:
        return f"files in {self.directory}"

    def prepare(self) -> None:
        try:
            Path(self.directory).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SinkSetupError(f"cannot create the output directory {self.directory}: {exc.strerror}") from exc

    def begin_epoch(self, epoch_id: int) -> None:
        """Remove what an earlier attempt of this epoch wrote (its partitioning may differ now)."""
        directory = Path(self.directory)
        for path in directory.glob(f"part-{epoch_id:010d}-*.jsonl"):
            log.info("removing %s, written by an earlier attempt of batch %d", path.name, epoch_id)
            path.unlink(missing_ok=True)
        for path in directory.glob(f".part-{epoch_id:010d}-*.tmp"):
            path.unlink(missing_ok=True)

    def build(self, partition_id: int, epoch_id: int) -> FilesWriter:
        return FilesWriter(Path(self.directory), epoch_id, partition_id)


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

    guarantee: ClassVar[str] = EXACTLY_ONCE
    one_pass: ClassVar[bool] = False  # one write per kind

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

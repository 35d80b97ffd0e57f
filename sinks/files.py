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
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, ClassVar

from sinks.base import EXACTLY_ONCE, Sink, SinkRecord, SinkWriter
from sinks.encoding import to_json
from sinks.exceptions import SinkSetupError, SinkWriteError

__all__ = ["FilesSink", "FilesWriter", "part_name"]

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

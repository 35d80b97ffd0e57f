"""Apply the Arrow decode UDF (``udfs.decode``) to a DataFrame of raw records.

One function serves both sources: Kafka rows (``value`` binary + coordinates)
decode one record per row; replay rows (``value`` = a whole file + ``file``)
decode one record per line, with ``file`` and ``line`` as coordinates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from udfs.decode import DecodeStats, decode_batches, decode_file_batches, file_output_schema, output_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["DecodeUdf", "decode", "one_task_per_core"]


class DecodeUdf:
    """The picklable ``mapInArrow`` function: settings only, plus an optional stats accumulator."""

    def __init__(self, *, files: bool, validate: bool, stats: Any | None = None) -> None:
        self.files = files
        self.validate = validate
        self.stats = stats  # a pyspark Accumulator of DecodeStats dicts (see streaming.job.accounting)

    def _report(self) -> Callable[[DecodeStats], None] | None:
        if self.stats is None:
            return None
        acc = self.stats
        return lambda s: acc.add(s.to_dict())

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        body = decode_file_batches if self.files else decode_batches
        return body(batches, validate=self.validate, report=self._report())


def one_task_per_core(raw: DataFrame) -> DataFrame:
    """``raw`` in as many partitions as the session has cores (never more than it has), each read whole.

    A Python task costs about 0.2 s before it works, and more tasks than cores run in waves
    (measured 2026-11-25; git log docs/benchmarks.md); so a Python stage over the source gets one task per core.
    """
    return raw.coalesce(raw.sparkSession.sparkContext.defaultParallelism)


def decode(raw: DataFrame, *, validate: bool = True, stats: Any | None = None) -> DataFrame:
    """``raw`` from ``streaming.sources``; returns one typed row per record (see ``udfs.schema``).

    Valid rows have ``reason`` null; invalid rows carry the quarantine reason. One task per core.
    ``validate`` runs the GX suite on each batch; ``stats`` is an accumulator
    that receives each batch's :class:`udfs.decode.DecodeStats` as a dict.
    """
    files = "file" in raw.columns
    arrow_out = file_output_schema() if files else output_schema(to_arrow_schema(raw.schema))
    udf = DecodeUdf(files=files, validate=validate, stats=stats)
    return one_task_per_core(raw).mapInArrow(udf, from_arrow_schema(arrow_out))

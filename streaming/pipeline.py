"""The job's one streaming query: read once, decode once, one keyed step, one output frame.

::

    raw --mapInArrow(RouteUdf: udfs.decode + GX + udfs.pipeline.route)--> routed rows (state_key)
        --groupBy(state_key).transformWithStateInPandas(KeyedStep)--> kind, key, value, tombstone

Every per-record step is Python over Arrow or pandas data (``udfs``); Spark reads, shuffles,
keeps the state (RocksDB, in the checkpoint) and writes. The keyed step is
``streaming.keyed``; what it computes is ``udfs.steps``.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema

from configwatch.contract import OUTPUT_KINDS
from configwatch.secrets import SecretStr
from configwatch.settings import Settings
from streaming.decode import DecodeUdf, one_task_per_core
from streaming.keyed import KeyedStep
from udfs.gauges import GaugeConfig
from udfs.pipeline import FINAL_SCHEMA, ROUTED_SCHEMA, route

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["RouteUdf", "gauge_config", "pipeline"]


def gauge_config(settings: Settings) -> GaugeConfig:
    """The gauge transition's knobs from the job settings (``--connection-ttl`` seconds, checked by Settings)."""
    ttl = settings.connection_ttl
    return GaugeConfig(ttl_ms=None if ttl is None else max(1, round(ttl * 1000)),
                       fingerprint_key=settings.fingerprint_key)


class RouteUdf(DecodeUdf):
    """The ``mapInArrow`` body: decode (GX included) and route each Arrow batch, in one Python call."""

    def __init__(self, *, files: bool, validate: bool, key: SecretStr, gauges: GaugeConfig,
                 kinds: Collection[str], stats: Any | None = None) -> None:
        super().__init__(files=files, validate=validate, stats=stats)
        self.key = key
        self.gauges = gauges
        self.kinds = tuple(kinds)

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in super().__call__(batches):
            if batch.num_rows:
                routed = route(pa.Table.from_batches([batch]), self.key, int(time.time() * 1000), self.gauges,
                               self.kinds)
                yield from routed.to_batches()


def pipeline(raw: DataFrame, settings: Settings, *, validate: bool = True, kinds: Collection[str] = OUTPUT_KINDS,
             stats: Any | None = None) -> DataFrame:
    """Output records (``FINAL_SCHEMA``: kind, key, value, tombstone) of ``raw`` from ``streaming.sources``."""
    gauges = gauge_config(settings)
    udf = RouteUdf(files="file" in raw.columns, validate=validate, key=settings.fingerprint_key, gauges=gauges,
                   kinds=kinds, stats=stats)
    routed = one_task_per_core(raw).mapInArrow(udf, from_arrow_schema(ROUTED_SCHEMA))
    # Timers (the lease) need processing time; without a lease "None" keeps idle triggers free of batches.
    time_mode = "ProcessingTime" if gauges.ttl_ms is not None else "None"
    return routed.groupBy("state_key").transformWithStateInPandas(
        KeyedStep(settings.fingerprint_key, gauges), from_arrow_schema(FINAL_SCHEMA), "Append", time_mode)

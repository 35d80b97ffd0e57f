"""The job's one streaming pipeline: read once, decode once, keyed state steps, one output frame.

New checkpoints (``StateLayout.gauges_on_jvm``)::

    raw --mapInArrow(decode + udfs.pipeline.route)--> routed rows (state_key)
        --one shuffle by state_key, read by both branches (Spark reuses the exchange)-->
          conn|<n> keys: the JVM gauge steps (streaming.jvm_gauges) --> gauge and usage records
          other keys:    transformWithStateInPandas(FinalStep): detection, pass rows --> findings, quarantine
        --union--> kind, key, value, tombstone

Checkpoints begun before keep their plan: ``StateStep`` (detection and connection
buckets) then ``TotalsStep`` (gauge totals), both Python keyed steps.

The Python steps keep detection state per ``fleet|``/``group|`` key (JSON text as the one
row of a ListState; a ``fleet|<peer group>`` key holds all its config keys); pass keys
(finished records) keep nothing. The gauge state is per connection bucket (one entry per
connection) and per name and version (counts, one entry per client instance): in RocksDB,
read in process by the JVM steps, through the state server by the Python ones. State lives
with the query's checkpoint; it holds fingerprints, masked names and numbers, never a
config value.

Why ListState and not ValueState for the detection JSON: Spark 4.0.0's state server
reads a ValueState update with a single socket read, so a large value arrives
truncated (``invalid pickle opcode``); ListState rows travel as an Arrow stream.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.stateful_processor import ExpiredTimerInfo, TimerValues

from configwatch.contract import OUTPUT_KINDS
from configwatch.secrets import SecretStr
from configwatch.settings import Settings
from streaming import jvm_pipeline
from streaming.decode import DecodeUdf, one_task_per_core
from streaming.jvm_gauges import gauge_records
from udfs.gauges import GaugeConfig
from udfs.pipeline import DEFAULT_LAYOUT, FINAL_SCHEMA, MID_SCHEMA, ROUTED_SCHEMA, StateLayout, route
from udfs.steps import STATE_SCHEMAS, connection_variables, expire_step, final_step, first_step, second_step

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["FinalStep", "RouteUdf", "StateStep", "TotalsStep", "gauge_config", "pipeline"]



def _now_ms(timer_values: TimerValues | None = None) -> int:
    """The batch's processing time (ProcessingTime mode), else the worker's clock."""
    now = timer_values.getCurrentProcessingTimeInMs() if timer_values is not None else -1
    return now if now >= 0 else int(time.time() * 1000)


def gauge_config(settings: Settings, layout: StateLayout = DEFAULT_LAYOUT) -> GaugeConfig:
    """The gauge transition's knobs from the job settings (``--connection-ttl`` seconds, checked by Settings)."""
    ttl = settings.connection_ttl
    return layout.gauges(GaugeConfig(ttl_ms=None if ttl is None else max(1, round(ttl * 1000)),
                                     fingerprint_key=settings.fingerprint_key))


class RouteUdf(DecodeUdf):
    """The ``mapInArrow`` body: decode (GX included) and route each Arrow batch, in one Python call."""

    def __init__(self, *, files: bool, validate: bool, key: SecretStr, gauges: GaugeConfig,
                 kinds: Collection[str], stats: Any | None = None, fleet_per_key: bool = False) -> None:
        super().__init__(files=files, validate=validate, stats=stats)
        self.key = key
        self.gauges = gauges
        self.kinds = tuple(kinds)
        self.fleet_per_key = fleet_per_key

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in super().__call__(batches):
            if batch.num_rows:
                routed = route(pa.Table.from_batches([batch]), self.key, int(time.time() * 1000), self.gauges,
                               self.kinds, fleet_per_key=self.fleet_per_key)
                yield from routed.to_batches()


class _SparkState:
    """``udfs.steps.KeyedState`` over a processor's state variables (each call is a round trip to the JVM)."""

    def __init__(self, handle: StatefulProcessorHandle, names: Iterable[str]) -> None:
        self._handle = handle
        self._vars: dict[str, Any] = {}
        for name in names:
            kind, *schemas = STATE_SCHEMAS[name]
            if kind == "list":  # one row: a ListState travels as Arrow, read whole (see the module docstring)
                self._vars[name] = handle.getListState(name, schemas[0])
            elif kind == "value":
                self._vars[name] = handle.getValueState(name, schemas[0])
            else:
                self._vars[name] = handle.getMapState(name, schemas[0], schemas[1])

    def get(self, name: str) -> tuple[Any, ...] | None:
        var = self._vars[name]
        if STATE_SCHEMAS[name][0] == "list":
            rows = list(var.get())
            return tuple(rows[0]) if rows else None
        value = var.get()
        return None if value is None else tuple(value)

    def put(self, name: str, value: tuple[Any, ...]) -> None:
        var = self._vars[name]
        if STATE_SCHEMAS[name][0] == "list":
            var.put([value])
        else:
            var.update(value)

    def clear(self, name: str) -> None:
        self._vars[name].clear()

    def map_get(self, name: str, key: str) -> tuple[Any, ...] | None:
        value = self._vars[name].getValue((key,))
        return None if value is None else tuple(value)

    def map_put(self, name: str, key: str, value: tuple[Any, ...]) -> None:
        self._vars[name].updateValue((key,), value)

    def map_remove(self, name: str, key: str) -> None:
        self._vars[name].removeKey((key,))

    def map_items(self, name: str) -> Iterator[tuple[str, tuple[Any, ...]]]:
        for k, v in self._vars[name].iterator():
            yield str(k[0]), tuple(v)

    def timer_set(self) -> bool:
        return bool(list(self._handle.listTimers()))

    def set_timer(self, at_ms: int) -> None:
        self._handle.registerTimer(at_ms)


class StateStep(StatefulProcessor):
    """First keyed step (``udfs.steps.first_step``): detection state and connection buckets."""

    def __init__(self, key: SecretStr, gauges: GaugeConfig) -> None:
        self._key = key
        self._gauges = gauges

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._state = _SparkState(handle, ("detect", *connection_variables(self._gauges)))

    def handleInputRows(  # noqa: N802 - PySpark's name
            self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues,  # noqa: N803
    ) -> Iterator[pd.DataFrame]:
        frame = pd.concat(list(rows), ignore_index=True)
        return first_step(str(key[0]), frame, self._state, self._key, self._gauges, _now_ms(timerValues))

    def handleExpiredTimer(  # noqa: N802 - PySpark's name
            self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo,  # noqa: N803
    ) -> Iterator[pd.DataFrame]:
        return expire_step(self._state, self._gauges, _now_ms(timerValues))

    def close(self) -> None:
        pass


class FinalStep(StatefulProcessor):
    """The last keyed step when the gauges run on the JVM (``udfs.steps.final_step``): detection, records out."""

    def __init__(self, key: SecretStr) -> None:
        self._key = key

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._state = _SparkState(handle, ("detect",))

    def handleInputRows(  # noqa: N802 - PySpark's name
            self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues,  # noqa: N803
    ) -> Iterator[pd.DataFrame]:
        frame = pd.concat(list(rows), ignore_index=True)
        return final_step(str(key[0]), frame, self._state, self._key, _now_ms(timerValues))

    def close(self) -> None:
        pass


class TotalsStep(StatefulProcessor):
    """Second keyed step (``udfs.steps.second_step``): records on, gauge keys fold their deltas."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._state = _SparkState(handle, ("totals", "instances", "usage", "usage_instances", "usage_totals"))

    def handleInputRows(  # noqa: N802 - PySpark's name
            self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues,  # noqa: N803
    ) -> Iterator[pd.DataFrame]:
        return second_step(pd.concat(list(rows), ignore_index=True), self._state, _now_ms(timerValues))

    def close(self) -> None:
        pass


def pipeline(raw: DataFrame, settings: Settings, *, validate: bool = True, kinds: Collection[str] = OUTPUT_KINDS,
             stats: Any | None = None, layout: StateLayout = DEFAULT_LAYOUT) -> DataFrame:
    """Output records (``FINAL_SCHEMA``: kind, key, value, tombstone) of ``raw`` from ``streaming.sources``.

    ``layout``: how state keys are formed, as the checkpoint pins it (``streaming.job.layout``).
    """
    gauges = gauge_config(settings, layout)
    if layout.detection_on_jvm:  # new checkpoints: one JVM pass per record, one shuffle, JVM keyed steps
        return jvm_pipeline.plan(raw, settings.fingerprint_key, gauges, kinds, validate=validate, stats=stats,
                                 key_partitions=layout.key_partitions, one_step=layout.one_keyed_step)
    files = "file" in raw.columns
    udf = RouteUdf(files=files, validate=validate, key=settings.fingerprint_key, gauges=gauges, kinds=kinds,
                   stats=stats, fleet_per_key=layout.fleet_per_key)
    routed = one_task_per_core(raw).mapInArrow(udf, from_arrow_schema(ROUTED_SCHEMA))
    if layout.gauges_on_jvm:  # new checkpoints: one shuffle, read by the JVM gauge steps and the Python step
        # Both branches read this shuffle whole: a filter per branch (conn| keys to the JVM, the rest to
        # Python) is pushed below the exchange by Spark's optimizer, which then plans two exchanges and
        # runs the route mapInArrow twice. So each step skips the other's keys (udfs.steps.final_step). A filter
        # kept above the exchange by a non-deterministic term measured no faster (docs/benchmarks.md, 2026-11-25).
        shuffled = routed.repartition("state_key")
        found = shuffled.groupBy("state_key").transformWithStateInPandas(
            FinalStep(settings.fingerprint_key), from_arrow_schema(FINAL_SCHEMA), "Append", "None")
        return found.unionByName(gauge_records(shuffled, gauges))
    # Timers (the lease) need processing time; without a lease "None" keeps idle triggers free of batches.
    time_mode = "ProcessingTime" if gauges.ttl_ms is not None else "None"
    mid = routed.groupBy("state_key").transformWithStateInPandas(
        StateStep(settings.fingerprint_key, gauges), from_arrow_schema(MID_SCHEMA), "Append", time_mode)
    return mid.groupBy("route").transformWithStateInPandas(
        TotalsStep(), from_arrow_schema(FINAL_SCHEMA), "Append", "None")

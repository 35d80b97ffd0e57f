"""The gauge stream: decoded valid events -> per-version connection gauge updates, in Spark state.

``gauge_stream(valid, config)`` keeps the open-connection table of the whole
fleet in one ``transformWithStateInPandas`` group (the state transition is
``udfs.gauges.advance``; why one group and this API: docs/gauges.md and
docs/benchmarks.md). The result is an update-mode stream of gauge rows
(``udfs.gauges.OUTPUT_SCHEMA``); run it as its own query with its own
checkpoint (``QUERY_NAME``, ``OUTPUT_MODE``, ``SPARK_CONF``) and turn rows into sink records
with ``gauge_sink_record``: a key reaching zero becomes a tombstone on Kafka and
a ``removed: true`` record in files.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.stateful_processor import ExpiredTimerInfo, TimerValues

from configwatch.contract import CONFIG_PUSH, CONNECTION_CLOSED, CONNECTION_OPENED
from configwatch.records import Gauge
from configwatch.settings import Settings
from sinks.base import SinkRecord
from udfs.gauges import INPUT_COLUMNS, OUTPUT_SCHEMA, STATE_SCHEMA, GaugeConfig, GaugeState, advance

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import Column, DataFrame

__all__ = [
    "OUTPUT_MODE",
    "OUTPUT_TYPE",
    "QUERY_NAME",
    "SPARK_CONF",
    "STATE_TYPE",
    "GaugeProcessor",
    "gauge_config",
    "gauge_input",
    "gauge_sink_record",
    "gauge_stream",
]

QUERY_NAME: Final = "gauges"  # also the checkpoint sub-directory
OUTPUT_MODE: Final = "update"
OUTPUT_TYPE: Final = from_arrow_schema(OUTPUT_SCHEMA)
STATE_TYPE: Final = from_arrow_schema(STATE_SCHEMA)
_GROUP: Final = "gauge_group"
# The whole state is one group, so one state partition: more would only add empty
# stateful tasks to every batch (measured in docs/benchmarks.md). The job sets this
# on the session while it starts the gauge query; the checkpoint keeps it afterwards.
# The state is one value rewritten every batch, so each retained batch on disk is a full copy
# of the fleet's table (100 by default: 2.9 GB at 1M connections, docs/benchmarks.md); ten
# is plenty to restart from.
SPARK_CONF: Final = {"spark.sql.shuffle.partitions": "1", "spark.sql.streaming.minBatchesToRetain": "10"}


def gauge_config(settings: Settings) -> GaugeConfig:
    """The transition's knobs from the job settings (``--connection-ttl`` seconds, checked by Settings)."""
    ttl = settings.connection_ttl
    return GaugeConfig(ttl_ms=None if ttl is None else max(1, round(ttl * 1000)),
                       fingerprint_key=settings.fingerprint_key)


def _order_columns(valid: DataFrame) -> tuple[Column, Column]:
    """Source coordinates as two longs that order events after ``timestamp_ms``.

    Kafka: partition, offset. Replay files: a hash of the file name, then the line
    (lines of one file keep their order; files are ordered by event time only).
    """
    from pyspark.sql import functions as F

    if "partition" in valid.columns and "offset" in valid.columns:
        return F.col("partition").cast("long"), F.col("offset").cast("long")
    if "file" in valid.columns and "line" in valid.columns:
        return F.xxhash64("file"), F.col("line").cast("long")
    return F.lit(None).cast("long"), F.lit(None).cast("long")


def gauge_input(valid: DataFrame, config: GaugeConfig) -> DataFrame:
    """The events the gauges read, narrowed to ``INPUT_COLUMNS`` before the shuffle.

    Connection events always; with a lease also any other event that names a
    connection (it shows the connection is alive). Rows with a quarantine
    ``reason`` are dropped here too, so invalid records can never touch state.
    """
    from pyspark.sql import functions as F

    wanted = [CONNECTION_OPENED, CONNECTION_CLOSED] + ([CONFIG_PUSH] if config.ttl_ms is not None else [])
    cond = F.col("event").isin(wanted) & F.col("connection_id").isNotNull() & F.col("timestamp_ms").isNotNull()
    if "reason" in valid.columns:
        cond = cond & F.col("reason").isNull()
    partition, offset = _order_columns(valid)
    fields = [F.col(name) for name in INPUT_COLUMNS[:6]]
    return valid.where(cond).select(*fields, partition.alias("partition"), offset.alias("offset"))


def _now_ms(timer_values: TimerValues) -> int:
    """The batch's processing time (ProcessingTime mode, i.e. with a lease), else the worker's clock."""
    now = timer_values.getCurrentProcessingTimeInMs()
    return now if now >= 0 else int(time.time() * 1000)


class GaugeProcessor(StatefulProcessor):
    """The one group's state: ``udfs.gauges.GaugeState`` as the single row of a ListState, plus one timer.

    Per micro-batch: one state read, one write, and with a lease one timer listed,
    deleted and registered (each Python state call is a round trip to the JVM).
    A ListState, not a ValueState: Spark 4.0.0 sends a ValueState update as one
    protobuf message that its state server reads with a single ``InputStream.read``,
    which truncates large values (``invalid pickle opcode``); ListState values
    travel as an Arrow stream, read in full.
    """

    def __init__(self, config: GaugeConfig) -> None:
        self._config = config

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._handle = handle
        self._state = handle.getListState("gauges", STATE_TYPE)

    def handleInputRows(  # noqa: N802 - PySpark's name
            self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues,  # noqa: N803
    ) -> Iterator[pd.DataFrame]:
        return self._step(rows, _now_ms(timerValues))

    def handleExpiredTimer(  # noqa: N802 - PySpark's name
            self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo,  # noqa: N803
    ) -> Iterator[pd.DataFrame]:
        return self._step(iter(()), _now_ms(timerValues))

    def _step(self, rows: Iterator[pd.DataFrame], now_ms: int) -> Iterator[pd.DataFrame]:
        stored = list(self._state.get())  # one row, or none before the first batch
        result = advance(GaugeState.from_row(stored[0] if stored else None), rows, now_ms, self._config)
        self._state.put([result.state.to_row()])
        if self._config.ttl_ms is not None:
            for ts in list(self._handle.listTimers()):
                self._handle.deleteTimer(ts)
            expiry = result.state.next_expiry_ms(self._config)
            if expiry is not None:
                self._handle.registerTimer(expiry)
        if not result.gauges.empty:
            yield result.gauges

    def close(self) -> None:
        pass


def gauge_stream(valid: DataFrame, config: GaugeConfig | Settings | None = None) -> DataFrame:
    """Gauge updates (``OUTPUT_SCHEMA`` rows, update mode) from the decoded valid event stream.

    ``config``: the transition's knobs, or the job settings to read them from (the default:
    ``Settings.load()``, so software names/versions the secret scan flags are redacted).
    """
    from pyspark.sql import functions as F

    if config is None:
        config = Settings.load()
    if isinstance(config, Settings):
        config = gauge_config(config)
    time_mode = "ProcessingTime" if config.ttl_ms is not None else "None"
    return (
        gauge_input(valid, config)
        .withColumn(_GROUP, F.lit(0))
        .groupBy(_GROUP)
        .transformWithStateInPandas(GaugeProcessor(config), OUTPUT_TYPE, "Update", time_mode)
    )


def gauge_sink_record(row: Mapping[str, Any]) -> SinkRecord:
    """One gauge row as a sink record: key ``<name>/<version>``; a removal is a tombstone."""
    gauge = Gauge(row["client_software_name"], row["client_software_version"], int(row["connections"]),
                  int(row["client_instances"]), int(row["updated_at_ms"]), bool(row["removed"]))
    return SinkRecord(key=gauge.key, value=gauge.to_dict(), tombstone=gauge.removed)

"""The state-API variants that bench.gauge_state_apis compares (the chosen one lives in streaming.gauges)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout
from pyspark.sql.streaming.stateful_processor import TimerValues

from streaming.gauges import OUTPUT_TYPE, STATE_TYPE, gauge_stream
from udfs.gauges import FLEET_KEY, FLEET_NAME, FLEET_VERSION, GaugeConfig, GaugeState, advance

__all__ = ["build", "native", "roundtrip"]

_GROUP = "gauge_group"


def _aipws_step(config: GaugeConfig) -> Any:
    def step(key: tuple[Any, ...], frames: Iterator[pd.DataFrame], state: GroupState) -> Iterator[pd.DataFrame]:
        now_ms = state.getCurrentProcessingTimeMs()
        result = advance(GaugeState.from_row(state.getOption), frames, now_ms, config)
        state.update(result.state.to_row())
        expiry = result.state.next_expiry_ms(config)
        if expiry is not None:
            state.setTimeoutDuration(max(1, expiry - now_ms))
        if not result.gauges.empty:
            yield result.gauges

    return step


class ConnectionStage(StatefulProcessor):
    """Stage 1 of the chained design: one group per connection_id; emits +1/-1 per gauge key."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._conn = handle.getValueState("conn", "name string, version string, instance string, opened_ms long")
        self._closed = handle.getValueState("closed", "closed_ms long")

    def handleInputRows(  # noqa: N802 - PySpark's name
            self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues,  # noqa: N803
    ) -> Iterator[pd.DataFrame]:
        df = pd.concat(list(rows)).sort_values(["timestamp_ms", "partition", "offset"])
        conn = self._conn.get()
        closed = self._closed.get()
        closed_ms = closed[0] if closed else None
        start, deltas = conn, []
        for event, ts, name, version, inst in zip(df["event"], df["timestamp_ms"], df["client_software_name"],
                                                  df["client_software_version"], df["client_instance_id"],
                                                  strict=True):
            if conn is not None:
                if ts >= conn[3] and event == "connection_closed":
                    conn, closed_ms = None, int(ts)
            elif event == "connection_closed":
                closed_ms = max(closed_ms or ts, int(ts))
            elif event == "connection_opened" and (closed_ms is None or ts > closed_ms):
                conn = (name or "unknown", version or "unknown", inst or None, int(ts))
        if conn != start:
            for c, sign in ((start, -1), (conn, 1)):
                if c is not None:
                    deltas += [(f"{c[0]}/{c[1]}", c[0], c[1], c[2], sign),
                               (FLEET_KEY, FLEET_NAME, FLEET_VERSION, c[2], sign)]
            if conn is None:
                self._conn.clear()
            else:
                self._conn.update(conn)
        if closed_ms is not None and (closed is None or closed[0] != closed_ms):
            self._closed.update((closed_ms,))
        if deltas:
            yield pd.DataFrame(deltas, columns=["key", "name", "version", "instance", "delta"])

    def close(self) -> None:
        pass


class VersionStage(StatefulProcessor):
    """Stage 2 of the chained design: one group per gauge key; MapState instance -> open connections."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._totals = handle.getValueState("totals", "connections long, instances long")
        self._instances = handle.getMapState("instances", "instance string", "open long")

    def handleInputRows(  # noqa: N802 - PySpark's name
            self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues,  # noqa: N803
    ) -> Iterator[pd.DataFrame]:
        df = pd.concat(list(rows))
        totals = self._totals.get() or (0, 0)
        conns, insts = totals
        for inst, delta in zip(df["instance"], df["delta"], strict=True):
            conns += int(delta)
            if inst:
                old = self._instances.getValue((inst,))
                before = old[0] if old else 0
                after = before + int(delta)
                if after > 0:
                    self._instances.updateValue((inst,), (after,))
                else:
                    self._instances.removeKey((inst,))
                insts += (after > 0) - (before > 0)
        if (conns, insts) != tuple(totals):
            name, version = df["name"].iloc[0], df["version"].iloc[0]
            if conns > 0:
                self._totals.update((conns, insts))
            else:
                self._totals.clear()
            yield pd.DataFrame([(key[0], name, version, conns, insts, timerValues.getCurrentProcessingTimeInMs(),
                                 conns <= 0, 0)],
                               columns=["key", "client_software_name", "client_software_version", "connections",
                                        "client_instances", "updated_at_ms", "removed", "expired"])

    def close(self) -> None:
        pass


def build(variant: str, events: DataFrame) -> DataFrame:
    """The gauge stream of ``events`` (columns ``udfs.gauges.INPUT_COLUMNS``) through ``variant``."""
    if variant == "aipws":
        return (events.withColumn(_GROUP, F.lit(0)).groupBy(_GROUP)
                .applyInPandasWithState(_aipws_step(GaugeConfig()), OUTPUT_TYPE, STATE_TYPE, "update",
                                        GroupStateTimeout.NoTimeout))
    if variant == "tws":
        return gauge_stream(events, GaugeConfig())
    if variant == "tws-chain":
        deltas = events.groupBy("connection_id").transformWithStateInPandas(
            ConnectionStage(), "key string, name string, version string, instance string, delta long",
            "Append", "None")
        return deltas.groupBy("key").transformWithStateInPandas(VersionStage(), OUTPUT_TYPE, "Update", "None")
    if variant == "native-chain":
        return _native_chain(events)
    raise ValueError(variant)


def _native_chain(events: DataFrame) -> DataFrame:
    """Two chained streaming aggregations (Spark refuses them unless its correctness check is off)."""
    opened, closed = F.col("event") == "connection_opened", F.col("event") == "connection_closed"
    per_conn = events.groupBy("connection_id").agg(
        F.min(F.when(opened, F.col("timestamp_ms"))).alias("opened"),
        F.max(F.when(closed, F.col("timestamp_ms"))).alias("closed"),
        F.first(F.when(opened, F.coalesce("client_software_name", F.lit("unknown"))), ignorenulls=True).alias("n"),
        F.first(F.when(opened, F.coalesce("client_software_version", F.lit("unknown"))), ignorenulls=True).alias("v"),
        F.first(F.when(opened, F.col("client_instance_id")), ignorenulls=True).alias("i"),
    )
    open_now = per_conn.where(F.col("opened").isNotNull()
                              & (F.col("closed").isNull() | (F.col("closed") < F.col("opened"))))
    return open_now.groupBy("n", "v").agg(F.count(F.lit(1)).alias("connections"),
                                         F.size(F.collect_set("i")).alias("client_instances")).select(
        F.concat_ws("/", "n", "v").alias("key"), F.col("n").alias("client_software_name"),
        F.col("v").alias("client_software_version"), F.col("connections"),
        F.col("client_instances").cast("long"), F.lit(0).cast("long").alias("updated_at_ms"),
        F.lit(False).alias("removed"), F.lit(0).cast("long").alias("expired"))


def native(spark: SparkSession) -> dict[str, Any]:
    """Try the gauges with Spark's own operators: per-connection aggregate, then per-version aggregate."""
    events = spark.readStream.format("rate").load().select(
        F.concat(F.lit("c"), (F.col("value") % 100).cast("string")).alias("connection_id"),
        F.when(F.col("value") % 3 == 0, "connection_closed").otherwise("connection_opened").alias("event"),
        F.lit("java").alias("name"), F.lit("3.9").alias("version"), F.col("value").alias("timestamp_ms"),
    )
    per_conn = events.groupBy("connection_id").agg(
        F.min(F.when(F.col("event") == "connection_opened", F.col("timestamp_ms"))).alias("opened"),
        F.max(F.when(F.col("event") == "connection_closed", F.col("timestamp_ms"))).alias("closed"),
        F.first("name").alias("name"), F.first("version").alias("version"),
    )
    per_version = per_conn.where(F.col("opened").isNotNull() & (F.col("closed").isNull()
                                                                 | (F.col("closed") < F.col("opened")))) \
        .groupBy("name", "version").count()
    out: dict[str, Any] = {"variant": "native"}
    check = "spark.sql.streaming.statefulOperator.checkCorrectness.enabled"
    for checked in ("true", "false"):
        spark.conf.set(check, checked)
        for mode in ("update", "complete", "append"):
            try:
                q = per_version.writeStream.outputMode(mode).format("memory").queryName(f"native_{mode}").start()
                q.stop()
                out[f"{mode}, correctness check {checked}"] = "started"
            except Exception as exc:  # the point is to record Spark's refusal
                out[f"{mode}, correctness check {checked}"] = str(exc).splitlines()[0][:160]
    spark.conf.unset(check)
    return out


class _RoundTrip(StatefulProcessor):
    def init(self, handle: StatefulProcessorHandle) -> None:
        self._map = handle.getMapState("m", "k string", "v long")
        self._value = handle.getValueState("blob", STATE_TYPE)
        self._list = handle.getListState("blob_list", STATE_TYPE)

    def handleInputRows(  # noqa: N802 - PySpark's name
            self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues,  # noqa: N803
    ) -> Iterator[pd.DataFrame]:
        from bench.gauge_workload import connection_events
        from udfs.gauges import INPUT_COLUMNS

        for _ in rows:
            pass
        n = 2000
        t0 = time.perf_counter()
        for i in range(n):
            self._map.updateValue((f"k{i}",), (i,))
        t1 = time.perf_counter()
        for i in range(n):
            self._map.getValue((f"k{i}",))
        t2 = time.perf_counter()
        evs = connection_events(100_000, close_share=0, dup_share=0, unknown_close_share=0)
        frame = pd.DataFrame([{c: e.to_dict().get(c) for c in INPUT_COLUMNS} for e in evs], columns=list(INPUT_COLUMNS))
        row = advance(GaugeState.empty(), frame, 0).state.to_row()
        t3 = time.perf_counter()
        self._list.put([row])
        t4 = time.perf_counter()
        back = list(self._list.get())
        t5 = time.perf_counter()
        assert bytes(back[0][1]) == row[1]
        try:
            self._value.update(row)
            value_update = "ok"
        except Exception as exc:  # Spark 4.0.0 truncates large ValueState updates
            value_update = str(exc).splitlines()[0][:120]
        yield pd.DataFrame([(1e6 * (t1 - t0) / n, 1e6 * (t2 - t1) / n, 1e3 * (t4 - t3), 1e3 * (t5 - t4),
                             len(row[1]) + len(row[2]), value_update)],
                           columns=["map_update_us", "map_get_us", "list_put_ms", "list_get_ms", "blob_bytes",
                                    "value_update_of_blob"])

    def close(self) -> None:
        pass


def roundtrip(spark: SparkSession) -> dict[str, Any]:
    """Time one MapState call and one whole-state ValueState update/get inside a TWS worker."""
    df = spark.readStream.format("rate").option("rowsPerSecond", 1).load().withColumn("g", F.lit(0))
    out = df.groupBy("g").transformWithStateInPandas(
        _RoundTrip(), "map_update_us double, map_get_us double, list_put_ms double, list_get_ms double, "
        "blob_bytes long, value_update_of_blob string",
        "Update", "None")
    q = out.writeStream.outputMode("update").format("memory").queryName("roundtrip").start()
    try:
        while not spark.catalog.tableExists("roundtrip") or spark.table("roundtrip").count() == 0:
            if q.exception() is not None:
                raise RuntimeError(str(q.exception()))
            q.awaitTermination(1)
        row = spark.table("roundtrip").first()
    finally:
        q.stop()
    assert row is not None
    return {"variant": "roundtrip", **{k: round(v, 2) if isinstance(v, float) else v for k, v in row.asDict().items()}}

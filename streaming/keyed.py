"""The job's keyed step as a Spark ``StatefulProcessor`` over ``transformWithStateInPandas``.

:class:`KeyedStep` runs ``udfs.steps.keyed_step`` per ``state_key``: pass rows on,
detection per ``fleet|``/``group|`` key, and the connection gauges on the ``conn`` key.
Its state lives in the query's checkpoint (RocksDB); every state call is a round trip
to the JVM's state server, so the steps read and write only the entries a batch names
(``docs/gauges.md``).

When a query starts, Spark runs ``init`` in a fresh Python process on the driver (it
registers the state variables), so this module imports nothing heavy at the top: the
step's code (pandas, pyarrow, the rules) is imported on the first call in a worker,
where the daemon (``streaming.worker_daemon``) has loaded it already.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle

from configwatch.secrets import SecretStr

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql.streaming.stateful_processor import ExpiredTimerInfo, TimerValues

    from udfs.gauges import GaugeConfig

__all__ = ["KeyedStep"]


def _now_ms(timer_values: TimerValues | None = None) -> int:
    """The batch's processing time (ProcessingTime mode), else the worker's clock."""
    now = timer_values.getCurrentProcessingTimeInMs() if timer_values is not None else -1
    return now if now >= 0 else int(time.time() * 1000)


def _concat(rows: Iterator[pd.DataFrame]) -> pd.DataFrame:
    import pandas as pd

    frames = list(rows)
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


class _SparkState:
    """``udfs.steps.KeyedState`` over a processor's state variables (each call is a round trip to the JVM)."""

    def __init__(self, handle: StatefulProcessorHandle) -> None:
        from udfs.steps import STATE_SCHEMAS

        self._handle = handle
        self._vars: dict[str, Any] = {}
        for name, (kind, *schemas) in STATE_SCHEMAS.items():
            if kind == "list":
                self._vars[name] = handle.getListState(name, schemas[0])
            elif kind == "value":
                self._vars[name] = handle.getValueState(name, schemas[0])
            else:
                self._vars[name] = handle.getMapState(name, schemas[0], schemas[1])

    def get(self, name: str) -> tuple[Any, ...] | None:
        value = self._vars[name].get()
        return None if value is None else tuple(value)

    def put(self, name: str, value: tuple[Any, ...]) -> None:
        self._vars[name].update(value)

    def rows(self, name: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self._vars[name].get()]

    def put_rows(self, name: str, rows: list[tuple[Any, ...]]) -> None:
        self._vars[name].put(rows)

    def append_rows(self, name: str, rows: list[tuple[Any, ...]]) -> None:
        self._vars[name].appendList(rows)

    def map_get(self, name: str, key: tuple[str, ...]) -> tuple[Any, ...] | None:
        value = self._vars[name].getValue(key)
        return None if value is None else tuple(value)

    def map_put(self, name: str, key: tuple[str, ...], value: tuple[Any, ...]) -> None:
        self._vars[name].updateValue(key, value)

    def map_remove(self, name: str, key: tuple[str, ...]) -> None:
        self._vars[name].removeKey(key)

    def map_items(self, name: str) -> Iterator[tuple[tuple[str, ...], tuple[Any, ...]]]:
        for k, v in self._vars[name].iterator():
            yield tuple(str(part) for part in k), tuple(v)

    def timer_set(self) -> bool:
        return bool(list(self._handle.listTimers()))

    def set_timer(self, at_ms: int) -> None:
        self._handle.registerTimer(at_ms)


class KeyedStep(StatefulProcessor):
    """The keyed step (``udfs.steps.keyed_step``): pass rows, detection state, the connection gauges."""

    def __init__(self, key: SecretStr, gauges: GaugeConfig) -> None:
        self._key = key
        self._gauges = gauges

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._state = _SparkState(handle)

    def handleInputRows(  # noqa: N802 - PySpark's name
            self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues,  # noqa: N803
    ) -> Iterator[pd.DataFrame]:
        from udfs.steps import keyed_step

        return keyed_step(str(key[0]), _concat(rows), self._state, self._key, self._gauges, _now_ms(timerValues))

    def handleExpiredTimer(  # noqa: N802 - PySpark's name
            self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo,  # noqa: N803
    ) -> Iterator[pd.DataFrame]:
        from udfs.steps import expire_step

        return expire_step(self._state, self._gauges, _now_ms(timerValues))

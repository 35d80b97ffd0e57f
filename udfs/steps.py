"""The job's keyed step, once, over an abstract per-key state (Spark's, or dicts).

:func:`keyed_step` runs per ``state_key`` of ``udfs.pipeline.ROUTED_SCHEMA`` rows and
returns ``FINAL_SCHEMA`` rows (kind, key, value, tombstone): pass rows go out as they
are, a ``fleet|``/``group|`` key runs detection against its state
(``udfs.rules.stateful.step``), and the one ``conn`` key runs the connection gauges
(``udfs.gauge_state``). That is the whole pipeline after routing, in Spark
(``streaming.keyed``: one ``transformWithStateInPandas`` operator) and in memory
(:class:`udfs.memory.MemoryPipeline`: tests, the bench peers). Every step reads and
writes only through a :class:`KeyedState`, the state of the key being processed:
``streaming.keyed`` backs it with Spark's state variables (RocksDB), ``MemoryPipeline``
with dicts.

State variables (``STATE_SCHEMAS``): ``detect`` (the detection JSON of a ``fleet|``/``group|``
key, the one row of a list) and the ``conn`` key's: its connections (``udfs.gauge_store``) and
gauge totals and usage (``udfs.gauge_state``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final, Protocol

import pandas as pd

from configwatch.contract import ALERTS
from configwatch.secrets import SecretStr
from udfs import gauge_state
from udfs.gauge_state import INSTANCES, TOTALS, USAGE_INSTANCES, USAGE_STATE
from udfs.gauge_store import CLOCK, ENTRIES, RECENT, RECENT_SEEN, SEEN, Clock
from udfs.gauges import Conn, GaugeConfig, Totals
from udfs.pipeline import CONN, final_rows, key_kind
from udfs.rules.findings import contract_json
from udfs.rules.stateful import PASS, step
from udfs.schema import state_ddl

__all__ = ["DETECT", "STATE_SCHEMAS", "KeyedState", "expire_step", "keyed_step"]

DETECT: Final = "detect"
_FILTER: Final = "capacity long, count long, probes long, bits binary"  # a udfs.seen filter per row
# Each state variable's Spark schema: (kind, value schema) for values and lists, (kind, key schema, value schema)
# for maps. A list holds what may outgrow one socket read of Spark 4.0.0's state server (it reads a ValueState
# update with a single read, so a large one arrives truncated; ListState rows travel as Arrow).
STATE_SCHEMAS: Final = {
    DETECT: ("list", "state string"),
    ENTRIES: ("map", "connection_id string", f"{state_ddl(Conn)}, closed_ms long"),
    RECENT: ("list", "newest_ms long, markers long, cids string, closed binary"),
    SEEN: ("list", _FILTER),
    RECENT_SEEN: ("list", _FILTER),
    CLOCK: ("value", state_ddl(Clock)),
    TOTALS: ("map", "gauge string", state_ddl(Totals)),
    INSTANCES: ("map", "gauge string, instance string", "connections long"),
    USAGE_STATE: ("map", "gauge string", "connections long, instances long, overflow long, pairs string, ids string"),
    USAGE_INSTANCES: ("map", "gauge string, instance string", "connections long"),
}


class KeyedState(Protocol):
    """The state of the key being processed: values, lists and maps of tuples, and one timer."""

    def get(self, name: str) -> tuple[Any, ...] | None: ...

    def put(self, name: str, value: tuple[Any, ...]) -> None: ...

    def rows(self, name: str) -> list[tuple[Any, ...]]: ...

    def put_rows(self, name: str, rows: list[tuple[Any, ...]]) -> None: ...

    def append_rows(self, name: str, rows: list[tuple[Any, ...]]) -> None: ...

    def map_get(self, name: str, key: tuple[str, ...]) -> tuple[Any, ...] | None: ...

    def map_put(self, name: str, key: tuple[str, ...], value: tuple[Any, ...]) -> None: ...

    def map_remove(self, name: str, key: tuple[str, ...]) -> None: ...

    def map_items(self, name: str) -> Iterator[tuple[tuple[str, ...], tuple[Any, ...]]]: ...

    def timer_set(self) -> bool: ...

    def set_timer(self, at_ms: int) -> None: ...


def keyed_step(state_key: str, frame: pd.DataFrame, state: KeyedState, key: SecretStr, config: GaugeConfig,
               now_ms: int) -> Iterator[pd.DataFrame]:
    """One ``state_key``'s routed rows: pass rows on, detection keys through ``step``, ``conn`` through gauges."""
    kind = key_kind(state_key)
    if kind == CONN:
        yield from gauge_state.connections(frame, state, config, now_ms)
    elif kind == PASS:
        yield final_rows(frame["kind"], frame["out_key"], frame["finding"])
    else:
        stored = state.rows(DETECT)
        found, new_state = step(state_key, frame, str(stored[0][0]) if stored else None, key, now_ms)
        if new_state is not None:
            state.put_rows(DETECT, [(new_state,)])
        if found.num_rows:
            yield final_rows(ALERTS, found.column("alert_id").to_pylist(), contract_json(found))


def expire_step(state: KeyedState, config: GaugeConfig, now_ms: int) -> Iterator[pd.DataFrame]:
    """The ``conn`` key's lease timer fired: drop the connections whose lease ran out."""
    yield from gauge_state.expire(state, config, now_ms)

"""The job's pipeline in one process, with its state in dicts: for tests and the bench peers.

:class:`MemoryPipeline` runs the job's Python steps per micro-batch
(``udfs.pipeline.route``, then ``udfs.steps.first_step`` per ``state_key`` and
``udfs.steps.second_step`` per ``route``), with the same state variables kept in
dictionaries instead of Spark's state stores. Timers (the lease) are not run here.
In Spark, a new checkpoint runs the gauge half of the two steps as their JVM twins
(``udfs.flow``); ``tests/test_gauges_jvm.py`` holds the two to the same records.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import pyarrow as pa

from configwatch.contract import OUTPUT_KINDS
from configwatch.secrets import SecretStr
from udfs.gauges import GaugeConfig
from udfs.pipeline import FINAL_SCHEMA, route
from udfs.steps import first_step, second_step

__all__ = ["MemoryPipeline", "OutputRecord"]


@dataclass(frozen=True, slots=True)
class OutputRecord:
    """One record the job writes: its kind (alerts, quarantine, gauges), key, contract JSON, tombstone."""

    kind: str
    key: str
    value: str
    tombstone: bool


class _DictState:
    """``udfs.steps.KeyedState`` over dicts, scoped to one grouping key at a time."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], tuple[Any, ...]] = {}
        self.maps: dict[tuple[str, str], dict[str, tuple[Any, ...]]] = {}
        self.timers: dict[str, int] = {}
        self.key = ""

    def get(self, name: str) -> tuple[Any, ...] | None:
        return self.values.get((self.key, name))

    def put(self, name: str, value: tuple[Any, ...]) -> None:
        self.values[(self.key, name)] = tuple(value)

    def clear(self, name: str) -> None:
        self.values.pop((self.key, name), None)

    def map_get(self, name: str, key: str) -> tuple[Any, ...] | None:
        return self.maps.get((self.key, name), {}).get(key)

    def map_put(self, name: str, key: str, value: tuple[Any, ...]) -> None:
        self.maps.setdefault((self.key, name), {})[key] = tuple(value)

    def map_remove(self, name: str, key: str) -> None:
        self.maps.get((self.key, name), {}).pop(key, None)

    def map_items(self, name: str) -> Iterator[tuple[str, tuple[Any, ...]]]:
        yield from list(self.maps.get((self.key, name), {}).items())

    def timer_set(self) -> bool:
        return self.key in self.timers

    def set_timer(self, at_ms: int) -> None:
        self.timers[self.key] = at_ms


def _groups(frame: pd.DataFrame, column: str) -> Iterator[tuple[str, pd.DataFrame]]:
    for key, rows in sorted(frame.groupby(column, sort=False).indices.items()):
        yield str(key), frame.iloc[rows].reset_index(drop=True)


@dataclass
class MemoryPipeline:
    """The two keyed steps over one state in memory; ``process`` one decoded micro-batch at a time."""

    key: SecretStr
    gauges: GaugeConfig = field(default_factory=GaugeConfig)
    kinds: Collection[str] = OUTPUT_KINDS
    _first: _DictState = field(default_factory=_DictState)
    _second: _DictState = field(default_factory=_DictState)

    def process(self, decoded: pa.Table, now_ms: int) -> list[OutputRecord]:
        """The output records of one batch of decoded rows (``udfs.decode`` output with coordinates)."""
        routed = route(decoded, self.key, now_ms, self.gauges, self.kinds).to_pandas()
        mids = []
        for state_key, rows in _groups(routed, "state_key"):
            self._first.key = state_key
            mids += list(first_step(state_key, rows, self._first, self.key, self.gauges, now_ms))
        if not mids:
            return []
        mid = pd.concat(mids, ignore_index=True)
        finals = []
        for route_key, rows in _groups(mid, "route"):
            self._second.key = route_key
            finals += list(second_step(rows, self._second, now_ms))
        if not finals:
            return []
        out = pd.concat(finals, ignore_index=True)[FINAL_SCHEMA.names]
        return [OutputRecord(str(k), str(key), str(v), bool(t))
                for k, key, v, t in out.itertuples(index=False, name=None)]

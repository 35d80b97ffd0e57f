"""The job's pipeline in one process, with its state in dicts: for tests and the bench peers.

:class:`MemoryPipeline` runs the job's Python steps per micro-batch
(``udfs.pipeline.route``, then ``udfs.steps.keyed_step`` per ``state_key``) with the
same state variables kept in dictionaries instead of Spark's state stores; Spark
runs the same functions (``streaming.keyed``). Timers (the lease) are not run here.
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
from udfs.steps import keyed_step

__all__ = ["MemoryPipeline", "OutputRecord"]


@dataclass(frozen=True, slots=True)
class OutputRecord:
    """One record the job writes: its kind (alerts, quarantine, gauges), key, contract JSON, tombstone."""

    kind: str
    key: str
    value: str
    tombstone: bool


class _DictState:
    """``udfs.steps.KeyedState`` over dicts, scoped to one state key at a time."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], tuple[Any, ...]] = {}
        self.lists: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
        self.maps: dict[tuple[str, str], dict[tuple[str, ...], tuple[Any, ...]]] = {}
        self.timers: dict[str, int] = {}
        self.key = ""

    def get(self, name: str) -> tuple[Any, ...] | None:
        return self.values.get((self.key, name))

    def put(self, name: str, value: tuple[Any, ...]) -> None:
        self.values[(self.key, name)] = tuple(value)

    def rows(self, name: str) -> list[tuple[Any, ...]]:
        return list(self.lists.get((self.key, name), []))

    def put_rows(self, name: str, rows: list[tuple[Any, ...]]) -> None:
        self.lists[(self.key, name)] = [tuple(r) for r in rows]

    def append_rows(self, name: str, rows: list[tuple[Any, ...]]) -> None:
        self.lists.setdefault((self.key, name), []).extend(tuple(r) for r in rows)

    def map_get(self, name: str, key: tuple[str, ...]) -> tuple[Any, ...] | None:
        return self.maps.get((self.key, name), {}).get(key)

    def map_put(self, name: str, key: tuple[str, ...], value: tuple[Any, ...]) -> None:
        self.maps.setdefault((self.key, name), {})[key] = tuple(value)

    def map_remove(self, name: str, key: tuple[str, ...]) -> None:
        self.maps.get((self.key, name), {}).pop(key, None)

    def map_items(self, name: str) -> Iterator[tuple[tuple[str, ...], tuple[Any, ...]]]:
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
    """The keyed step over one state in memory; ``process`` one decoded micro-batch at a time."""

    key: SecretStr
    gauges: GaugeConfig = field(default_factory=GaugeConfig)
    kinds: Collection[str] = OUTPUT_KINDS
    _state: _DictState = field(default_factory=_DictState)

    def process(self, decoded: pa.Table, now_ms: int) -> list[OutputRecord]:
        """The output records of one batch of decoded rows (``udfs.decode`` output with coordinates)."""
        routed = route(decoded, self.key, now_ms, self.gauges, self.kinds).to_pandas()
        finals = []
        for state_key, rows in _groups(routed, "state_key"):
            self._state.key = state_key
            finals += list(keyed_step(state_key, rows, self._state, self.key, self.gauges, now_ms))
        if not finals:
            return []
        out = pd.concat(finals, ignore_index=True)[FINAL_SCHEMA.names]
        return [OutputRecord(str(k), str(key), str(v), bool(t))
                for k, key, v, t in out.itertuples(index=False, name=None)]

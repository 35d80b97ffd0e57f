"""The Great Expectations (GX 1.x) suite that checks every decoded batch, row by row.

The suite runs inside the decode UDF on the Arrow batch it just decoded (no
second scan of the DataFrame): valid rows become a pandas frame of the checked
columns, GX validates it, and each failing row is reported with the name of the
expectation, which the decode UDF turns into the quarantine reason
``expectation:<name>``. The suite and its ephemeral context are built once per
Python worker (GX takes seconds to import) and reused for every batch.

The expectations form a catalog (``CATALOG``): name, what it checks, the one
sentence a quarantine record carries.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from configwatch.contract import CONFIG_TYPES, EVENT_TYPES, SCHEMA_VERSION, SECURITY_PROTOCOLS

__all__ = [
    "CATALOG",
    "CHECKED_COLUMNS",
    "ENTRIES",
    "EVENTS",
    "EVENT_COLUMNS",
    "MAX_FUTURE_MS",
    "MIN_TIMESTAMP_MS",
    "BatchValidator",
    "ExpectationSpec",
    "Validation",
    "get_validator",
]

log = logging.getLogger(__name__)

MIN_TIMESTAMP_MS = 1_293_840_000_000  # 2011-01-01T00:00:00Z, Kafka's first release
MAX_FUTURE_MS = 24 * 3600 * 1000  # one day of clock skew past processing time

EVENTS = "events"
ENTRIES = "entries"


@dataclass(frozen=True)
class ExpectationSpec:
    """One catalog entry: a stable name, the frame it runs on, the GX expectation, a sentence."""

    name: str
    frame: str  # EVENTS (one row per event) or ENTRIES (one row per configs entry)
    detail: str
    make: Callable[[Any], Any]  # great_expectations.expectations module -> Expectation


CATALOG: tuple[ExpectationSpec, ...] = (
    ExpectationSpec("schema_version_not_null", EVENTS, "schema_version is null",
                    lambda gxe: gxe.ExpectColumnValuesToNotBeNull(column="schema_version")),
    ExpectationSpec("event_not_null", EVENTS, "event is null",
                    lambda gxe: gxe.ExpectColumnValuesToNotBeNull(column="event")),
    ExpectationSpec("timestamp_ms_not_null", EVENTS, "timestamp_ms is null",
                    lambda gxe: gxe.ExpectColumnValuesToNotBeNull(column="timestamp_ms")),
    ExpectationSpec("schema_version_is_1", EVENTS, "schema_version is not 1",
                    lambda gxe: gxe.ExpectColumnValuesToBeInSet(column="schema_version",
                                                                value_set=[SCHEMA_VERSION])),
    ExpectationSpec("event_in_set", EVENTS, "event is not a contract event",
                    lambda gxe: gxe.ExpectColumnValuesToBeInSet(column="event", value_set=list(EVENT_TYPES))),
    ExpectationSpec("security_protocol_in_set", EVENTS,
                    "security_protocol is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL",
                    lambda gxe: gxe.ExpectColumnValuesToBeInSet(column="security_protocol",
                                                                value_set=list(SECURITY_PROTOCOLS))),
    ExpectationSpec("timestamp_ms_in_window", EVENTS,
                    "timestamp_ms is before 2011 or more than a day after processing time",
                    lambda gxe: gxe.ExpectColumnValuesToBeBetween(
                        column="timestamp_ms", min_value={"$PARAMETER": "min_timestamp_ms"},
                        max_value={"$PARAMETER": "max_timestamp_ms"})),
    ExpectationSpec("config_type_in_enum", ENTRIES, "a configs entry's type is not a ConfigDef.Type name",
                    lambda gxe: gxe.ExpectColumnValuesToBeInSet(column="type", value_set=list(CONFIG_TYPES))),
)
_BY_NAME = {spec.name: spec for spec in CATALOG}
EVENT_COLUMNS = ["schema_version", "event", "timestamp_ms", "security_protocol"]
CHECKED_COLUMNS = [*EVENT_COLUMNS, "configs"]  # what ``BatchValidator.validate`` reads


@dataclass
class Validation:
    """What GX found in one batch: failing row positions (first failure wins) and the cost."""

    rows: int
    failures: dict[int, str] = field(default_factory=dict)  # row position -> expectation name
    failed_by_name: dict[str, int] = field(default_factory=dict)
    errors: int = 0  # expectations GX could not evaluate (rows then pass: the contract already held)
    seconds: float = 0.0

    def detail(self, name: str) -> str:
        return _BY_NAME[name].detail


class BatchValidator:
    """An ephemeral GX context with the suite on two pandas assets (events, entries)."""

    def __init__(self) -> None:
        os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
        import great_expectations as gx
        import great_expectations.expectations as gxe
        from great_expectations.data_context.types.base import ProgressBarsConfig

        context = gx.get_context(mode="ephemeral")
        context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
        source = context.data_sources.add_pandas("configwatch")
        self._batches: dict[str, Any] = {}
        self._suites: dict[str, Any] = {}
        self._names: dict[str, list[str]] = {}
        self._failing: dict[str, bool] = {EVENTS: False, ENTRIES: False}
        for frame in (EVENTS, ENTRIES):
            asset = source.add_dataframe_asset(frame)
            self._batches[frame] = asset.add_batch_definition_whole_dataframe(frame)
            suite = gx.ExpectationSuite(name=f"configwatch-{frame}")
            names = []
            for spec in CATALOG:
                if spec.frame == frame:
                    expectation = spec.make(gxe)
                    expectation.meta = {"name": spec.name}
                    suite.add_expectation(expectation)
                    names.append(spec.name)
            self._suites[frame] = context.suites.add(suite)
            self._names[frame] = names

    def _run(self, frame: str, df: Any, params: dict[str, int], result: Validation,
             row_of: np.ndarray | None) -> None:
        batch = self._batches[frame].get_batch(batch_parameters={"dataframe": df})
        # A pass/fail run costs about 2/3 of one that lists failing rows. While batches pass, try
        # that first; after a failing batch, list rows at once (garbage tends to come in runs).
        if not self._failing[frame]:
            outcome = batch.validate(self._suites[frame], expectation_parameters=params,
                                     result_format={"result_format": "BOOLEAN_ONLY"})
            if outcome.success:
                return
        outcome = batch.validate(self._suites[frame], expectation_parameters=params,
                                 result_format={"result_format": "COMPLETE"})
        self._failing[frame] = not outcome.success
        for item in outcome.results:
            name = (item.expectation_config.meta or {}).get("name", item.expectation_config.type)
            if item.exception_info and item.exception_info.get("raised_exception"):
                result.errors += 1
                log.warning("expectation %s could not be evaluated on this batch", name)
                continue
            if item.success:
                continue
            indices = item.result.get("unexpected_index_list") or []
            for index in indices:
                row = int(row_of[index]) if row_of is not None else int(index)
                result.failures.setdefault(row, name)
            result.failed_by_name[name] = result.failed_by_name.get(name, 0) + len(indices)

    def validate(self, table: pa.Table, now_ms: int | None = None) -> Validation:
        """Validate decoded valid rows (at least ``CHECKED_COLUMNS``); failure positions index ``table``."""
        started = time.perf_counter()
        result = Validation(rows=table.num_rows)
        if table.num_rows == 0:
            return result
        now = int(time.time() * 1000) if now_ms is None else now_ms
        params = {"min_timestamp_ms": MIN_TIMESTAMP_MS, "max_timestamp_ms": now + MAX_FUTURE_MS}
        events = table.select(EVENT_COLUMNS).to_pandas()
        self._run(EVENTS, events, params, result, None)
        configs = table["configs"].combine_chunks()
        flat = pc.list_flatten(configs)
        if len(flat):
            entries = pa.table({"type": pc.struct_field(flat, "type")}).to_pandas()
            self._run(ENTRIES, entries, params, result, pc.list_parent_indices(configs).to_numpy())
        result.seconds = time.perf_counter() - started
        return result


_VALIDATOR: BatchValidator | None = None


def get_validator() -> BatchValidator:
    """The worker's one validator (built on first use, then reused)."""
    global _VALIDATOR
    if _VALIDATOR is None:
        started = time.perf_counter()
        _VALIDATOR = BatchValidator()
        log.info("GX suite built in %.1f s", time.perf_counter() - started)
    return _VALIDATOR

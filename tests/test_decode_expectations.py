"""The Great Expectations suite inside the decode stage: row-level failures become
``expectation:<name>`` quarantine reasons, counted per batch; the suite is built once per worker.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pytest

from configwatch.samples import sample_events
from tests.invalid_records import EXPECTATION_CASES, SECRET, InvalidCase, base_event
from udfs.decode import decode_values
from udfs.expectations import CATALOG, MAX_FUTURE_MS, get_validator
from udfs.schema import EVENT_SCHEMA


@pytest.mark.parametrize("case", EXPECTATION_CASES, ids=[c.name for c in EXPECTATION_CASES])
def test_contract_valid_rows_failing_an_expectation_are_quarantined(case: InvalidCase) -> None:
    good = [e.to_json().encode() for e in sample_events(20)]
    raws = [*good[:7], case.raw, *good[7:]]
    decoded, stats = decode_values(pa.array(raws, pa.binary()), validator=get_validator())
    rows = decoded.to_pylist()
    assert [r["reason"] for r in rows] == [None] * 7 + [case.reason] + [None] * 13
    name = case.reason.split(":", 1)[1]
    assert rows[7]["detail"] == next(s.detail for s in CATALOG if s.name == name)
    assert SECRET not in rows[7]["detail"]
    assert rows[7]["event"] is None and rows[7]["configs"] is None
    assert (stats.valid, stats.invalid, stats.expectation_failed) == (20, 1, 1)
    assert stats.failed_by_expectation == {name: 1}
    assert stats.gx_batches == 1 and stats.gx_seconds > 0


def test_the_timestamp_window_follows_processing_time() -> None:
    raw = json.dumps(base_event(timestamp_ms=2_000_000_000_000)).encode()
    values = pa.array([raw], pa.binary())
    late, _ = decode_values(values, validator=get_validator(), now_ms=2_000_000_000_000 - MAX_FUTURE_MS)
    early, _ = decode_values(values, validator=get_validator(), now_ms=2_000_000_000_000 - MAX_FUTURE_MS - 1)
    assert late.column("reason").to_pylist() == [None]
    assert early.column("reason").to_pylist() == ["expectation:timestamp_ms_in_window"]


def _table(rows: list[dict[str, object]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=EVENT_SCHEMA)


def test_entry_types_and_required_fields_are_checked_row_by_row() -> None:
    entry_ok = {"key": "acks", "value": "1", "type": "STRING", "is_default": True}
    rows = [
        {"schema_version": 1, "event": "config_push", "timestamp_ms": 1_790_000_000_000, "configs": [entry_ok]},
        {"schema_version": 1, "event": "config_push", "timestamp_ms": 1_790_000_000_000,
         "configs": [entry_ok, dict(entry_ok, type="SECRET")]},
        {"schema_version": 1, "event": "connection_opened", "timestamp_ms": None},
        {"schema_version": 3, "event": "connection_opened", "timestamp_ms": 1_790_000_000_000},
        {"schema_version": 1, "event": "reboot", "timestamp_ms": 1_790_000_000_000},
    ]
    result = get_validator().validate(_table(rows), now_ms=1_790_000_000_000)
    assert result.failures == {1: "config_type_in_enum", 2: "timestamp_ms_not_null", 3: "schema_version_is_1",
                               4: "event_in_set"}
    assert result.errors == 0


def test_the_suite_is_built_once_per_worker() -> None:
    assert get_validator() is get_validator()


def test_the_catalog_names_are_unique_and_cover_the_issue() -> None:
    names = [s.name for s in CATALOG]
    assert len(names) == len(set(names))
    for needed in ("timestamp_ms_not_null", "schema_version_is_1", "event_in_set", "security_protocol_in_set",
                   "timestamp_ms_in_window", "config_type_in_enum"):
        assert needed in names


def test_a_partition_is_validated_in_one_gx_call_with_rows_kept_in_place() -> None:
    from udfs.decode import DecodeStats, decode_batches

    good = [e.to_json().encode() for e in sample_events(30)]
    batches, expected = [], {}
    offset = 0
    for b in range(3):
        raws: list[bytes | None] = list(good)
        raws[5 + b] = EXPECTATION_CASES[b].raw
        raws[20] = b"garbage"
        expected[offset + 5 + b] = EXPECTATION_CASES[b].reason
        expected[offset + 20] = "not_json"
        batches.append(pa.RecordBatch.from_pydict({"value": pa.array(raws, pa.binary()),
                                                   "offset": pa.array(range(offset, offset + 30), pa.int64())}))
        offset += 30
    reports: list[DecodeStats] = []
    rows = [r for out in decode_batches(batches, report=reports.append) for r in out.to_pylist()]
    assert [r["offset"] for r in rows] == list(range(90))
    assert {r["offset"]: r["reason"] for r in rows if r["reason"]} == expected
    assert all(r["event"] is None for r in rows if r["reason"])
    assert len(reports) == 1 and reports[0].gx_batches == 1  # one GX call for the partition's 90 rows
    assert (reports[0].records, reports[0].valid, reports[0].invalid, reports[0].expectation_failed) == (90, 84, 6, 3)


def test_the_worker_daemon_preloads_the_suite_before_it_forks() -> None:
    # The daemon swallows a failed preload (workers then load lazily): this catches one that broke.
    code = ("import gc, logging, sys; logging.basicConfig(level=logging.ERROR)\n"
            "import streaming.worker_daemon as d, udfs.expectations as e\n"
            "d._preload(); gc.freeze()\n"
            "print(e._VALIDATOR is not None, 'pandas' in sys.modules, 'udfs.steps' in sys.modules,"
            " gc.get_freeze_count() > 0)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert "could not preload" not in done.stderr, done.stderr
    assert done.stdout.split() == ["True"] * 4

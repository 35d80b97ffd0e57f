"""The decode UDF body, without Spark: every invalid kind of section 3, valid rows field by field,
and the Arrow fast path agreeing with the exact per-row path (json.loads + validate_event).
"""

from __future__ import annotations

import json
import random
import sys
import threading

import numpy as np
import pyarrow as pa
import pytest

from configwatch import verdicts
from configwatch.errors import ContractError
from configwatch.records import Event, validate_event
from configwatch.samples import sample_events
from tests.invalid_records import INVALID_CASES, SECRET, base_event, tricky_valid_records
from udfs.classify import parse_record
from udfs.decode import decode_batch, decode_file_batches, decode_values, output_schema
from udfs.fastjson import _BISECT_FLOOR, SEGMENT_ROWS, _segments, fast_parse
from udfs.schema import DECODED_FIELDS
from udfs.split_lines import split_lines


def _values(raws: list[bytes | None]) -> pa.Array:
    return pa.array(raws, pa.binary())


@pytest.mark.parametrize("case", INVALID_CASES, ids=[c.name for c in INVALID_CASES])
def test_each_invalid_kind_gets_its_reason_and_no_payload(case: object) -> None:
    from tests.invalid_records import InvalidCase

    assert isinstance(case, InvalidCase)
    valid = json.dumps(base_event()).encode()
    decoded, stats = decode_values(_values([valid, case.raw, valid]))
    rows = decoded.to_pylist()
    assert [r["reason"] for r in rows] == [None, case.reason, None]
    bad = rows[1]
    assert all(bad[f.name] is None for f in DECODED_FIELDS[:-3]), "an invalid row carries no event fields"
    assert bad["detail"] and SECRET not in bad["detail"]
    assert bad["size_bytes"] == (len(case.raw) if case.raw is not None else 0)
    assert (stats.records, stats.valid, stats.invalid) == (3, 2, 1)


@pytest.mark.parametrize("case", INVALID_CASES, ids=[c.name for c in INVALID_CASES])
def test_the_reason_is_validate_events_reason(case: object) -> None:
    from tests.invalid_records import InvalidCase

    assert isinstance(case, InvalidCase)
    with pytest.raises(ContractError) as caught:
        parse_record(case.raw)
    assert caught.value.reason == case.reason
    if case.reason not in ("not_json",):
        with pytest.raises(ContractError) as direct:
            validate_event(json.loads(case.raw or b""))
        assert direct.value.reason == case.reason


def _verdicts_in_a_fresh_thread(raws: list[bytes]) -> list[tuple[str, str] | None]:
    """``parse_record``'s verdicts on ``raws``, read in a fresh thread: ``json.loads`` refuses nesting deeper
    than the recursion limit less its caller's stack depth, so a fresh thread fixes the deepest it reads."""
    def verdict(raw: bytes) -> tuple[str, str] | None:
        try:
            parse_record(raw)
        except ContractError as err:
            return err.reason, err.detail
        return None

    out: list[list[tuple[str, str] | None]] = []
    thread = threading.Thread(target=lambda: out.append([verdict(raw) for raw in raws]))
    thread.start()
    thread.join()
    return out[0]


def test_the_deepest_readable_record_with_an_escape_gets_a_verdict_not_a_crash() -> None:
    # json.loads reads it; the lone-surrogate check once recursed one level deeper and its
    # RecursionError escaped parse_record.
    low, high = 1, sys.getrecursionlimit() + 1  # the deepest nesting of arrays read: reads low, refuses high
    while high - low > 1:
        mid = (low + high) // 2
        verdict = _verdicts_in_a_fresh_thread([b"[" * mid + b"]" * mid])[0]
        low, high = (mid, high) if verdict is not None and verdict[0] == "not_object" else (low, mid)
    deep = b"[" * low + b'"\\u0041"' + b"]" * low
    lone = b"[" * low + b'"\\ud800"' + b"]" * low
    assert _verdicts_in_a_fresh_thread([deep, lone]) == [
        (verdicts.NOT_OBJECT.reason, verdicts.NOT_OBJECT.detail),
        (verdicts.LONE_SURROGATE.reason, verdicts.LONE_SURROGATE.detail)]


def test_valid_records_decode_field_by_field() -> None:
    events = sample_events(30)
    decoded, stats = decode_values(_values([e.to_json().encode() for e in events]))
    assert stats.valid == 30 and stats.fast_rows == 30
    for event, row in zip(events, decoded.to_pylist(), strict=True):
        assert row["reason"] is None and row["detail"] is None
        assert row["size_bytes"] == len(event.to_json().encode())
        for name in ("schema_version", "event", "timestamp_ms", "broker_id", "connection_id", "client_instance_id",
                     "client_software_name", "client_software_version", "client_id", "principal", "listener",
                     "security_protocol", "client_address", "request_size_bytes"):
            assert row[name] == getattr(event, name), name
        if event.configs is None:
            assert row["configs"] is None
        else:
            assert [(c["key"], c["value"], c["type"], c["is_default"], bool(c["redacted"]), c["fingerprint"])
                    for c in row["configs"]] == [
                (c.key, c.value, c.type, c.is_default, c.redacted, c.fingerprint) for c in event.configs]


def test_redacted_entries_keep_their_fingerprint() -> None:
    entry = {"key": "sasl.jaas.config", "value": None, "type": "PASSWORD", "is_default": False, "redacted": True,
             "fingerprint": "0123456789abcdef"}
    decoded, _ = decode_values(_values([json.dumps(base_event(configs=[entry])).encode()]))
    assert decoded.to_pylist()[0]["configs"] == [entry]


def test_connection_events_decode_without_configs() -> None:
    raw = json.dumps(base_event(event="connection_closed", configs=[{"junk": True}])).encode()
    for exact in (False, True):
        decoded, _ = decode_values(_values([raw]), exact_only=exact)
        row = decoded.to_pylist()[0]
        assert row["reason"] is None and row["event"] == "connection_closed" and row["configs"] is None


def test_pass_through_columns_follow_their_rows() -> None:
    raws = [json.dumps(base_event()).encode(), b"junk", json.dumps(base_event(event="nope")).encode()]
    batch = pa.RecordBatch.from_pydict({
        "value": pa.array(raws, pa.binary()), "topic": ["t", "t", "t"], "partition": pa.array([0, 1, 2], pa.int32()),
        "offset": pa.array([10, 11, 12], pa.int64()),
    })
    out, _ = decode_batch(batch)
    assert out.schema == output_schema(batch.schema)
    rows = out.to_pylist()
    assert [(r["partition"], r["offset"], r["reason"]) for r in rows] == [
        (0, 10, None), (1, 11, "not_json"), (2, 12, "unknown_event")]


def _all_paths_agree(raws: list[bytes | None]) -> set[str]:
    fast, fast_stats = decode_values(_values(raws))
    exact, _ = decode_values(_values(raws), exact_only=True)
    assert fast.to_pylist() == exact.to_pylist()
    # The fast path never accepts a record the exact path rejects.
    accepted = fast_parse(_values(raws)).positions
    for pos in accepted:
        parse_record(raws[pos])
    assert fast_stats.fast_rows == len(accepted)
    return {r for r in fast.column("reason").to_pylist() if r}


def test_fast_and_exact_paths_agree_on_the_catalog() -> None:
    valid = [e.to_json().encode() for e in sample_events(40)]
    raws: list[bytes | None] = valid + [c.raw for c in INVALID_CASES] + tricky_valid_records()  # type: ignore[operator]
    random.Random(3).shuffle(raws)
    _all_paths_agree(raws)


def _mutations(raw: bytes, rng: random.Random) -> bytes:
    obj = json.loads(raw)
    choice = rng.randrange(8)
    if choice == 0:
        return raw[: rng.randrange(1, len(raw))]
    if choice == 1:
        i = rng.randrange(len(raw))
        return raw[:i] + bytes([rng.randrange(256)]) + raw[i + 1:]
    key = rng.choice(list(obj))
    if choice == 2:
        del obj[key]
    elif choice == 3:
        obj[key] = rng.choice([None, True, 1, 1.5, "x", [], {}, 2**70, -1, ""])
    elif choice == 4 and obj.get("configs"):
        entry = rng.choice(obj["configs"])
        field = rng.choice(["key", "value", "type", "is_default", "redacted", "fingerprint"])
        entry[field] = rng.choice([None, True, 3, "x", [], "BOOLEAN", "bogus"])
    elif choice == 5:
        obj["event"] = rng.choice(["config_push", "connection_opened", "connection_closed", "x", 7])
    elif choice == 6:
        obj["client_software_version"] = rng.choice(["1.0", "1.0-", ".1", "a b", "ü", "", None, "9"])
    else:
        obj["schema_version"] = rng.choice([1, 2, 0, "1", True, None, 1.0])
    return json.dumps(obj).encode()


def test_fast_and_exact_paths_agree_on_random_mutations() -> None:
    rng = random.Random(20261121)
    sources = [e.to_json().encode() for e in sample_events(60)] + [json.dumps(base_event()).encode()]
    raws: list[bytes | None] = [_mutations(rng.choice(sources), rng) for _ in range(3000)]
    raws += sources
    rng.shuffle(raws)
    reasons: set[str] = set()
    for start in range(0, len(raws), 500):  # batches, as the worker sees them
        reasons |= _all_paths_agree(raws[start:start + 500])
    assert len(reasons) >= 15, reasons  # the mutations reach many kinds of section 3


def test_a_bad_row_does_not_push_its_batch_off_the_fast_path() -> None:
    raws: list[bytes | None] = [e.to_json().encode() for e in sample_events(1000)]
    raws[500] = b'{"schema_version": "1"}'
    _, stats = decode_values(_values(raws))
    assert stats.invalid == 1
    assert stats.fast_rows == 999  # the read is cut at the row the reader names: only that row went per-row


def test_sparse_bad_rows_across_a_big_batch_stay_off_the_per_row_path() -> None:
    # The realistic case: a few wrongly typed records spread over a 5,000-row batch.
    raws: list[bytes | None] = [e.to_json().encode() for e in sample_events(5000)]
    for i in range(250, 5000, 500):
        raws[i] = b'{"schema_version": 1, "event": "config_push", "timestamp_ms": "yesterday", "configs": []}'
    _, stats = decode_values(_values(raws))
    assert stats.invalid == 10 and stats.fast_rows == 4990


def test_a_bad_row_the_reader_cannot_name_is_bisected() -> None:
    raws: list[bytes | None] = [e.to_json().encode() for e in sample_events(1000)]
    raws[300] = b'{"schema_version": 1}{"schema_version": 1}'  # two objects on one line: no row in the error
    _, stats = decode_values(_values(raws))
    assert stats.invalid == 1
    assert stats.fast_rows >= 999 - _BISECT_FLOOR  # only the bad row's smallest slice went per-row


def test_segments_are_runs_of_candidates_cut_at_segment_rows() -> None:
    mask = np.ones(2 * SEGMENT_ROWS + 10, dtype=bool)
    mask[[0, 5, SEGMENT_ROWS + 5]] = False
    assert _segments(mask) == [(1, 5), (6, SEGMENT_ROWS + 5),
                               (SEGMENT_ROWS + 6, 2 * SEGMENT_ROWS + 6), (2 * SEGMENT_ROWS + 6, 2 * SEGMENT_ROWS + 10)]
    assert _segments(np.zeros(4, dtype=bool)) == []


def test_bad_rows_nulls_and_non_objects_at_segment_edges_cost_only_themselves() -> None:
    raws: list[bytes | None] = [e.to_json().encode() for e in sample_events(3 * SEGMENT_ROWS)]
    odd = {0: None, SEGMENT_ROWS - 1: b'{"schema_version": "1"}', SEGMENT_ROWS: b'["a", "list"]',
           2 * SEGMENT_ROWS: b'{"schema_version": 1}{"schema_version": 1}', 3 * SEGMENT_ROWS - 1: b"\xff{}"}
    for pos, raw in odd.items():
        raws[pos] = raw
    reasons = _all_paths_agree(raws)
    decoded, stats = decode_values(_values(raws))
    assert [r is not None for r in decoded.column("reason").to_pylist()] == [i in odd for i in range(len(raws))]
    assert stats.fast_rows >= len(raws) - len(odd) - _BISECT_FLOOR and reasons


def test_event_round_trip_of_decoded_rows() -> None:
    events = sample_events(9)
    decoded, _ = decode_values(_values([e.to_json().encode() for e in events]))
    for event, row in zip(events, decoded.to_pylist(), strict=True):
        d = {k: v for k, v in row.items() if v is not None and k not in ("reason", "detail", "size_bytes")}
        if d.get("configs"):
            d["configs"] = [{k: v for k, v in c.items() if v is not None} for c in d["configs"]]
        assert Event.from_dict(d) == event


def test_split_lines_counts_from_one_and_skips_blank_lines() -> None:
    text = 'first\r\n\n  \nfourth\nfifth'
    table = split_lines(pa.array([text, "", "only\n"]), pa.array(["a.jsonl", "b.jsonl", "c.jsonl"]))
    assert table.to_pylist() == [
        {"value": b"first", "file": "a.jsonl", "line": 1},
        {"value": b"fourth", "file": "a.jsonl", "line": 4},
        {"value": b"fifth", "file": "a.jsonl", "line": 5},
        {"value": b"only", "file": "c.jsonl", "line": 1},
    ]


def test_replay_files_decode_with_file_and_line() -> None:
    lines = [e.to_json() for e in sample_events(5)]
    lines.insert(2, "not json")
    batch = pa.RecordBatch.from_pydict({"value": ["\n".join(lines) + "\n"], "file": ["file:/r/x.jsonl"]})
    rows = [r for out in decode_file_batches([batch], validate=False) for r in out.to_pylist()]
    assert [(r["file"], r["line"], r["reason"]) for r in rows] == [
        ("file:/r/x.jsonl", i, "not_json" if i == 3 else None) for i in range(1, 7)]

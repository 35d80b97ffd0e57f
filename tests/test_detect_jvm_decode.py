"""The JVM decoder and GX suite twins (``Decoder``, ``Expectations``) against Python, record by record.

Python's side: ``udfs.decode.decode_values(..., exact_only=True)`` (``parse_record``, ``validate_event``,
the rows of ``_slow_rows``) and the real GX suite (``BatchValidator``, ``apply_expectations``). The
Java answers are compared as JSON text, so ``true`` never passes for ``1``.
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

import pyarrow as pa
import pytest

from bench.workload import workload_records
from configwatch.contract import SECURITY_PROTOCOLS, SOFTWARE_MAX_CHARS
from streaming.jvm_spec import spec
from streaming.jvm_spec.decode import nesting_verdicts
from tests.invalid_records import EXPECTATION_CASES, INVALID_CASES, base_event, tricky_valid_records
from tests.jvm_pushes import KEY
from tests.jvmprobe import probe
from udfs.decode import decode_values
from udfs.expectations import MAX_FUTURE_MS, MIN_TIMESTAMP_MS, BatchValidator
from udfs.schema import EVENT_SCHEMA

START_MS = 1_790_000_000_000


def _b64(raw: bytes | None) -> str | None:
    return None if raw is None else base64.b64encode(raw).decode()


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _python(raws: list[bytes | None]) -> list[str]:
    """Python's verdict on each record, as the probe's JSON line."""
    decoded, _ = decode_values(pa.array(raws, pa.binary()), exact_only=True)
    out = []
    for row in decoded.to_pylist():
        fields = None if row["reason"] else {name: row[name] for name in EVENT_SCHEMA.names}
        out.append(_dumps({"reason": row["reason"], "detail": row["detail"], "size_bytes": row["size_bytes"],
                           "row": fields}))
    return out


def _java(raws: list[bytes | None]) -> list[str]:
    return probe("DecoderProbe", [{"b64": _b64(r)} for r in raws], raw=True)


def _assert_same(raws: list[bytes | None]) -> list[str]:
    expected, got = _python(raws), _java(raws)
    for raw, e, g in zip(raws, expected, got, strict=True):
        assert g == e, f"record {raw[:300]!r}" if raw is not None else "null record"
    return expected


def _reasons(lines: list[str]) -> set[str]:
    return {json.loads(line)["reason"] for line in lines} - {None}


def test_realistic_records_decode_as_in_python() -> None:
    raws: list[bytes | None] = []
    for seed in (5, 11, 23):
        # 150 simulated clients replayed (simulating costs ~8 ms a client): the records' mix is the bench's
        raws += [r.value for r in workload_records(2000, KEY, seed=seed, start_ms=START_MS, base_clients=150)]
    lines = _assert_same(raws)
    valid = [json.loads(line) for line in lines if json.loads(line)["reason"] is None]
    assert len(valid) > 5500 and _reasons(lines)  # both sides saw valid and malformed records
    assert {v["row"]["event"] for v in valid} == {"config_push", "connection_opened", "connection_closed"}


def test_catalogued_invalid_and_tricky_records() -> None:
    raws: list[bytes | None] = [c.raw for c in INVALID_CASES + EXPECTATION_CASES] + list(tricky_valid_records())
    lines = _assert_same(raws)
    assert [json.loads(line)["reason"] for line in lines[:len(INVALID_CASES)]] == [c.reason for c in INVALID_CASES]


# --- fuzz ---

_FIELD_VALUES: list[Any] = [None, True, False, 0, 1, -1, 1.0, "1", "", "x", [], {}, [1], {"a": 1}, 2**63 - 1, 2**63,
                            -(2**63), -(2**63) - 1, 10**30, float("nan"), float("inf"), -0.0, "\u00e9\U0001f600"]


def _event(rng: random.Random) -> dict[str, Any]:
    kind = rng.choice(["config_push", "connection_opened", "connection_closed"])
    event = base_event(event=kind)
    if kind != "config_push":
        event.pop("configs")
        if rng.random() < 0.5:
            event["request_versions"] = [{"api_key": k, "version": rng.randrange(12)} for k in range(rng.randrange(4))]
            event["request_versions_overflow"] = rng.randrange(3)
    return event


def _entry_mutation(event: dict[str, Any], rng: random.Random) -> None:
    entries = event.setdefault("configs", [])
    if not isinstance(entries, list) or not entries:
        event["configs"] = entries = [{"key": "acks", "value": "1", "type": "STRING", "is_default": False}]
    entry = rng.choice(entries)
    if not isinstance(entry, dict):
        return
    field = rng.choice(["key", "value", "type", "is_default", "redacted", "fingerprint", "extra"])
    if rng.random() < 0.3:
        entry.pop(field, None)
    else:
        entry[field] = rng.choice([*_FIELD_VALUES, "BOOLEAN", "PASSWORD", "bogus", "string", "0123456789abcdef"])


def _request_versions(rng: random.Random) -> Any:
    return rng.choice([
        [], [{"api_key": 1, "version": 2}], [{"api_key": 1}], [{"version": 1}], [1], [None], "x", {"api_key": 1},
        [{"api_key": "1", "version": 2}], [{"api_key": 1.0, "version": 2}], [{"api_key": True, "version": 2}],
        [{"api_key": 2**63, "version": 0}], [{"api_key": 1, "version": -(2**63)}], [{"api_key": None, "version": 1}],
        [{"api_key": 1, "version": 2, "extra": [1, {"b": None}]}], [{"api_key": 1, "version": 2}, []],
    ])


def _software(rng: random.Random) -> Any:
    return rng.choice([
        "a", "1", "a-", "-a", ".a", "a.", "a.b", "a..b", "a--b", "a_b", "a b", "a\n", "\na", "\u00fc", "a\u00fcb",
        "A" * SOFTWARE_MAX_CHARS, "A" * (SOFTWARE_MAX_CHARS + 1), "a" + "-" * (SOFTWARE_MAX_CHARS - 2) + "b",
        "a" + "." * (SOFTWARE_MAX_CHARS - 1) + "b", "\U0001f600", "a\U0001f600", "", None, 3, "3.9.1", "\u0661",
        "a\u200bb", "\uff21\uff22\uff23",
    ])


def _object_mutation(raw_event: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    event = dict(raw_event)
    choice = rng.randrange(8)
    name = rng.choice([*event, "extra"])
    if choice == 0:
        event.pop(name, None)
    elif choice == 1:
        event[name] = rng.choice(_FIELD_VALUES)
    elif choice == 2:
        _entry_mutation(event, rng)
    elif choice == 3:
        event["request_versions"] = _request_versions(rng)
    elif choice == 4:
        event[rng.choice(["client_software_name", "client_software_version"])] = _software(rng)
    elif choice == 5:
        event["event"] = rng.choice(["config_push", "connection_opened", "connection_closed", "x", 7, None])
    elif choice == 6:
        event["schema_version"] = rng.choice([1, 2, 0, "1", True, None, 1.0, -1])
    else:
        event["configs"] = rng.choice([None, [], "x", {}, [1], [None], [[]], [{"key": None}]])
    return event


_TEXT_EDITS: list[tuple[bytes, bytes]] = [
    (b"}", b",}"), (b"]", b",]"), (b'"', b"'"), (b":", b" : "), (b",", b" ,\t\n\r"), (b",", b",,"), (b":", b"::"),
    (b"{", b"{/* c */"), (b",", b", // c\n"), (b" ", b"\x0c"), (b" ", b"\x0b"), (b" ", b"\xc2\xa0"),
    (b" ", b"\xe2\x80\xa8"), (b" ", b"\xe3\x80\x80"), (b"1", b"01"), (b"1", b"+1"), (b"1", b"1."), (b"1", b".1"),
    (b"1", b"1e"), (b"1", b"1E+"), (b"1", b"1e5"), (b"1", b"1E-5"), (b"1", b"1.0"), (b"1", b"-0"), (b"1", b"-"),
    (b"true", b"True"), (b"true", b"tru"), (b"null", b"nul"), (b"null", b"NaN"), (b"null", b"-NaN"),
    (b"null", b"Infinity"), (b"null", b"-Infinity"), (b"null", b"-Inf"), (b"a", b"\\u0061"), (b"a", b"\\U0061"),
    (b"a", b"\\x61"), (b"a", b"\\u00e9"), (b"a", b"\\ud83d\\ude00"), (b"a", b"\\ud83d"), (b"a", b"\\ude00"),
    (b"a", b"\\ude00\\ud83d"), (b"a", b"\\ud83d\\ud83d\\ude00"), (b"a", b"\\ud83d\\ud83d"),
    (b"a", b"\\udbff\\udfff"), (b"a", b"\\ud83d\\u0041"), (b"a", b"\\ud83d\\n"),
    (b"a", b"\\uD83D\\uDE00"), (b"a", b"\\u12G4"), (b"a", b"\\u12"), (b"a", b"\\/"), (b"a", b"\\b\\f\\n\\r\\t"),
    (b"a", b"\x00"), (b"a", b"\x1f"), (b"a", b"\x7f"), (b"a", b"\t"), (b"a", b"\n"), (b"a", b"\xc3\xa9"),
    (b"a", b"\xf0\x9f\x98\x80"), (b"a", b"\xc0\xa1"), (b"a", b"\xe0\x80\xa1"), (b"a", b"\xed\xa0\x80"),
    (b"a", b"\xf4\x90\x80\x80"), (b"a", b"\xf8\x88\x80\x80\x80"), (b"a", b"\xe2\x82"), (b"a", b"\x80"),
    (b"a", b"\xff"), (b"a", b"\xef\xbb\xbf"), (b'"', b'"\\'), (b"{", b"{{"), (b"}", b"}}"), (b"[", b"[["),
]


def _text_mutation(raw: bytes, rng: random.Random) -> bytes:
    choice = rng.randrange(10)
    if choice == 0:
        return raw[: rng.randrange(len(raw) + 1)]
    if choice == 1:
        i = rng.randrange(len(raw))
        return raw[:i] + bytes([rng.randrange(256)]) + raw[i + 1:]
    if choice == 2:
        i = rng.randrange(len(raw))
        return raw[:i] + raw[i + 1:]
    if choice == 3:
        return rng.choice([b"\xef\xbb\xbf", b" ", b"\n", b"\x00", b"\xc2\xa0", b"\xff\xfe"]) + raw
    if choice == 4:
        return raw + rng.choice([b" ", b"\r\n", b"\x00", b" {}", b"x", b",", b"\xc2\xa0", b"\xef\xbb\xbf"])
    old, new = rng.choice(_TEXT_EDITS)
    positions = [i for i in range(len(raw)) if raw.startswith(old, i)]
    if not positions:
        return raw
    i = rng.choice(positions)
    return raw[:i] + new + raw[i + len(old):]


def _duplicates(event: dict[str, Any], rng: random.Random) -> bytes:
    """The event's JSON with one field written twice (a different value first or last)."""
    name = rng.choice(list(event))
    other = rng.choice([*(json.dumps(v) for v in _FIELD_VALUES), '"\\ud800"', '"\\ud83d\\ude00"'])
    pair = [f"{json.dumps(name)}:{json.dumps(event[name])}", f"{json.dumps(name)}:{other}"]
    rng.shuffle(pair)
    rest = [f"{json.dumps(k)}:{json.dumps(v)}" for k, v in event.items() if k != name]
    return ("{" + ",".join(rest + pair) + "}").encode()


def _fuzz_records(n: int, seed: int) -> list[bytes | None]:
    rng = random.Random(seed)
    out: list[bytes | None] = []
    for _ in range(n):
        event = _event(rng)
        for _ in range(rng.randrange(1, 3)):
            event = _object_mutation(event, rng)
        kind = rng.randrange(4)
        raw = _duplicates(event, rng) if kind == 0 else json.dumps(event, ensure_ascii=rng.random() < 0.5).encode()
        if kind >= 2:
            raw = _text_mutation(raw, rng)
        out.append(raw)
    return out


def test_fuzzed_records_decode_as_in_python() -> None:
    raws = _fuzz_records(5000, seed=20260512)
    raws += [None, b"", b" ", b"\n", b"null", b"[]", b"{}", b"1", b"NaN", b'"x"', b"true", b"\xef\xbb\xbf{}",
             json.dumps([base_event()]).encode(), b"{" + b" " * 1000 + b"}"]
    lines = _assert_same(raws)
    reasons = _reasons(lines)
    assert len(reasons) >= 25, reasons  # the mutations reach most of section 3
    assert sum(json.loads(line)["reason"] is None for line in lines) > 500


def test_every_field_dropped_retyped_and_duplicated() -> None:
    raws: list[bytes | None] = []
    rng = random.Random(9)
    for kind in ("config_push", "connection_opened", "connection_closed"):
        event = base_event(event=kind, request_versions=[{"api_key": 3, "version": 12}], request_versions_overflow=0)
        for name in [*event, "extra"]:
            raws.append(json.dumps({k: v for k, v in event.items() if k != name}).encode())
            raws += [json.dumps({**event, name: value}).encode() for value in _FIELD_VALUES]
            raws += [_duplicates({**event, "zz": 1}, rng) for _ in range(3)]
            raws.append(json.dumps({**event, "request_versions": _request_versions(rng)}).encode())
        for name in ["key", "value", "type", "is_default", "redacted", "fingerprint", "extra"]:
            for value in [*_FIELD_VALUES, "BOOLEAN", "SECRET", "_drop"]:
                entry = {"key": "k", "value": "v", "type": "STRING", "is_default": False, "redacted": True,
                         "fingerprint": "0123456789abcdef", name: value}
                entry = {k: v for k, v in entry.items() if v != "_drop"}
                raws.append(json.dumps({**event, "configs": [{"key": "a", "type": "INT", "is_default": True}, entry]})
                            .encode())
    lines = _assert_same(raws)
    assert len(_reasons(lines)) >= 40


def test_ints_at_the_digit_limit_and_int64_edges() -> None:
    import sys

    limit = sys.get_int_max_str_digits()
    raws: list[bytes | None] = []
    for digits in (limit - 1, limit, limit + 1):
        for sign in ("", "-"):
            number = sign + "9" * digits
            for field in ("ignored", "timestamp_ms"):
                raws.append(json.dumps(base_event()).replace('"broker_id"', f'"{field}": {number}, "x"').encode())
            raws.append(json.dumps(base_event()).replace('"broker_id": 1', f'"broker_id": {number}.5').encode())
    for value in (2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 10**18, 10**19, -(10**19), 0):
        raws.append(json.dumps(base_event(timestamp_ms=value, broker_id=value)).encode())
        raws.append(json.dumps(base_event(request_size_bytes=value)).encode())
    _assert_same(raws)


def test_nesting_at_the_limit_reads_as_in_python() -> None:
    deepest = spec()["decode"]["max_nesting"]
    raws: list[bytes | None] = []
    cases: list[tuple[int, bytes]] = []
    for depth in (deepest - 2, deepest - 1, deepest, deepest + 1, deepest + 2, 3 * deepest):
        inner = depth - 1  # the record's object is one level
        cases.append((depth, json.dumps(base_event()).replace('"broker_id"', '"x": ' + "[" * inner + "]" * inner
                                                                + ', "broker_id"').encode()))
        cases.append((depth, b"[" * depth + b"]" * depth))
        cases.append((depth, b"{" + b'"a":{' * (depth - 1) + b"}" * depth))
        cases.append((depth, b"[" * depth))  # unterminated: too deep before it is seen to be cut
        cases.append((depth, b"[" * depth + b'"\\u0041"' + b"]" * depth))  # json.dumps re-reads it
    raws = [raw for _, raw in cases]
    expected = nesting_verdicts(raws)
    got = [json.loads(line) for line in _java(raws)]
    for (depth, raw), e, g in zip(cases, expected, got, strict=True):
        assert (g["reason"], g["detail"]) == (e if e is not None else (None, None)), (depth, raw[:80])
    assert {g["detail"] for g in got} >= {"the record nests too deeply to be read", "the record is not valid JSON"}


# --- the GX suite ---


def _gx_records() -> list[bytes]:
    now = START_MS
    stamps = [MIN_TIMESTAMP_MS - 1, MIN_TIMESTAMP_MS, MIN_TIMESTAMP_MS + 1, now, now + MAX_FUTURE_MS - 1,
              now + MAX_FUTURE_MS, now + MAX_FUTURE_MS + 1, 0, -1, 2**63 - 1, -(2**63)]
    protocols: list[str | None] = [*SECURITY_PROTOCOLS, None, "", "plaintext", "SASL_MAGIC", "SSL ", "S\u00c9L"]
    raws = []
    for i, (stamp, protocol) in enumerate((s, p) for s in stamps for p in protocols):
        event = base_event(timestamp_ms=stamp, security_protocol=protocol)
        if i % 3 == 1:
            event = base_event(event="connection_closed", timestamp_ms=stamp, security_protocol=protocol)
            del event["configs"]
        raws.append(json.dumps(event).encode())
    return raws + [c.raw for c in EXPECTATION_CASES if c.raw is not None] + [b"junk"]


@pytest.fixture(scope="module")
def validator() -> BatchValidator:
    return BatchValidator()


@pytest.mark.parametrize("now_ms", [START_MS, MIN_TIMESTAMP_MS - MAX_FUTURE_MS, MIN_TIMESTAMP_MS - MAX_FUTURE_MS - 1,
                                    0])
def test_gx_suite_verdicts_are_pythons(validator: BatchValidator, now_ms: int) -> None:
    raws = _gx_records()
    decoded, _ = decode_values(pa.array(raws, pa.binary()), exact_only=True)
    valid = [i for i, r in enumerate(decoded.column("reason").to_pylist()) if r is None]
    checked = validator.validate(decoded.take(valid), now_ms)
    first = {valid[row]: name for row, name in checked.failures.items()}
    after, _ = decode_values(pa.array(raws, pa.binary()), validator=validator, now_ms=now_ms, exact_only=True)
    got = probe("ExpectationsProbe", [{"b64": _b64(r), "now_ms": now_ms} for r in raws], raw=True)
    for i, (raw, row, line) in enumerate(zip(raws, after.to_pylist(), got, strict=True)):
        fields = None if row["reason"] else {name: row[name] for name in EVENT_SCHEMA.names}
        expected = _dumps({"name": first.get(i), "reason": row["reason"], "detail": row["detail"], "row": fields})
        assert line == expected, raw[:200]
    names = set(first.values())
    if now_ms == START_MS:  # the window holds: both expectations fail somewhere, some rows fail both
        assert names == {"security_protocol_in_set", "timestamp_ms_in_window"}
    if now_ms < MIN_TIMESTAMP_MS - MAX_FUTURE_MS:  # min above max: GX cannot evaluate the window, rows pass it
        assert names == {"security_protocol_in_set"}


def test_an_expectation_type_without_a_jvm_evaluator_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = spec()
    doc["expectations"]["suite"][0]["expectation"] = {
        "type": "expect_column_values_to_match_regex", "kwargs": {"column": "event", "regex": "^c"}}
    monkeypatch.setattr("tests.jvmprobe.spec_json", lambda: json.dumps(doc))
    with pytest.raises(AssertionError, match=r"IllegalArgumentException.*expect_column_values_to_match_regex"):
        probe("ExpectationsProbe", [{"b64": None, "now_ms": START_MS}])
    doc["expectations"]["suite"][0]["expectation"] = {
        "type": "expect_column_values_to_be_in_set", "kwargs": {"column": "event", "value_set": ["x"], "mostly": 0.5}}
    with pytest.raises(AssertionError, match=r"IllegalArgumentException.*mostly"):
        probe("ExpectationsProbe", [{"b64": None, "now_ms": START_MS}])

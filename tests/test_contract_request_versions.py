"""The ``request_versions`` field of ``connection_closed`` (gateway proxy mode), without Kafka or Spark.

The contract stays at schema_version 1: events with the field and events without it
validate, round-trip and decode on both decode paths (the Arrow fast path and the
exact per-row one), which agree on every mutation of the field. The gateway side:
``RequestUsage`` keeps a bounded, sorted set, and the registry publishes it with
``connection_closed`` only.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pyarrow as pa
import pytest

from configwatch.contract import CONNECTION_CLOSED, CONNECTION_OPENED, MAX_REQUEST_VERSIONS, SCHEMA_VERSION
from configwatch.errors import ContractError
from configwatch.records import Event, validate_event
from policy.api import RequestContext
from policy.gateway.registry import ConnectionRegistry
from policy.gateway.usage import RequestUsage
from tests.gateway_helpers import ListSink
from udfs.classify import parse_record
from udfs.decode import decode_values
from udfs.fastjson import fast_parse
from udfs.schema import EVENT_SCHEMA

PAIRS = ((0, 9), (3, 12), (18, 4))


def _closed(**extra: Any) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "event": CONNECTION_CLOSED, "timestamp_ms": 1_790_000_000_000,
            "connection_id": "127.0.0.1:9092-127.0.0.1:50000-1", "client_software_name": "kafka-python",
            "client_software_version": "3.0.12", **extra}


def _raw(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def _values(raws: list[bytes]) -> pa.Array:
    return pa.array(raws, pa.binary())


def test_the_field_round_trips_as_objects_on_the_wire_and_pairs_in_python() -> None:
    event = Event(event=CONNECTION_CLOSED, timestamp_ms=1, connection_id="c", request_versions=PAIRS,
                  request_versions_overflow=3)
    wire = json.loads(event.to_json())
    assert wire["request_versions"] == [{"api_key": 0, "version": 9}, {"api_key": 3, "version": 12},
                                        {"api_key": 18, "version": 4}]
    assert wire["request_versions_overflow"] == 3 and wire["schema_version"] == 1
    assert Event.from_json(event.to_json()) == event
    old = Event(event=CONNECTION_CLOSED, timestamp_ms=1, connection_id="c")
    assert "request_versions" not in old.to_dict() and Event.from_json(old.to_json()) == old


def test_the_decoded_schema_has_the_field_derived_from_the_contract() -> None:
    field = EVENT_SCHEMA.field("request_versions")
    assert field.type == pa.list_(pa.struct([("api_key", pa.int64()), ("version", pa.int64())]))
    assert EVENT_SCHEMA.field("request_versions_overflow").type == pa.int64()


@pytest.mark.parametrize(("value", "reason"), [
    ({"api_key": 0, "version": 1}, "wrong_type:request_versions"),
    ("0:1", "wrong_type:request_versions"),
    ([[0, 1]], "wrong_type:request_versions[]"),
    ([None], "wrong_type:request_versions[]"),
    ([{"version": 1}], "missing_field:request_versions[].api_key"),
    ([{"api_key": 0}], "missing_field:request_versions[].version"),
    ([{"api_key": "0", "version": 1}], "wrong_type:request_versions[].api_key"),
    ([{"api_key": 0, "version": True}], "wrong_type:request_versions[].version"),
    ([{"api_key": 0, "version": 1.5}], "wrong_type:request_versions[].version"),
    ([{"api_key": 2**70, "version": 1}], "wrong_type:request_versions[].api_key"),
])
def test_a_malformed_field_is_invalid_with_its_reason_on_both_paths(value: Any, reason: str) -> None:
    with pytest.raises(ContractError) as caught:
        validate_event(_closed(request_versions=value))
    assert caught.value.reason == reason
    raws = [_raw(_closed()), _raw(_closed(request_versions=value))]
    for exact in (False, True):
        decoded, _ = decode_values(_values(raws), exact_only=exact)
        assert decoded.column("reason").to_pylist() == [None, reason]
    assert 1 not in fast_parse(_values(raws)).positions  # the fast path never accepts it


def test_old_and_new_events_decode_side_by_side() -> None:
    raws = [_raw(_closed()), _raw(_closed(request_versions=[{"api_key": 0, "version": 2, "extra": "ignored"}],
                                          request_versions_overflow=4)),
            _raw(_closed(request_versions=[])), _raw({**_closed(), "event": CONNECTION_OPENED})]
    for exact in (False, True):
        decoded, stats = decode_values(_values(raws), exact_only=exact)
        assert stats.invalid == 0
        rows = decoded.to_pylist()
        assert [r["request_versions"] for r in rows] == [None, [{"api_key": 0, "version": 2}], [], None]
        assert [r["request_versions_overflow"] for r in rows] == [None, 4, None, None]


def _mutate(rng: random.Random) -> bytes:
    pairs: list[Any] = [{"api_key": rng.randrange(70), "version": rng.randrange(14)} for _ in range(rng.randrange(4))]
    choice = rng.randrange(6)
    if choice == 1 and pairs:
        pairs[rng.randrange(len(pairs))][rng.choice(["api_key", "version"])] = rng.choice(
            [None, True, 1.5, "3", [], {}, 2**70, -1])
    elif choice == 2 and pairs:
        del pairs[rng.randrange(len(pairs))][rng.choice(["api_key", "version"])]
    elif choice == 3:
        pairs.append(rng.choice([None, 7, "x", [1, 2], {}]))
    obj = _closed(request_versions=pairs)
    if choice == 4:
        obj["request_versions"] = rng.choice([None, {}, "x", 3, True])
    elif choice == 5:
        obj["request_versions_overflow"] = rng.choice([None, 0, 5, "5", 1.5, True, []])
    return _raw(obj)


def test_fast_and_exact_paths_agree_on_random_mutations_of_the_field() -> None:
    rng = random.Random(16)
    raws = [_mutate(rng) for _ in range(1500)]
    fast, fast_stats = decode_values(_values(raws))
    exact, _ = decode_values(_values(raws), exact_only=True)
    assert fast.to_pylist() == exact.to_pylist()
    accepted = fast_parse(_values(raws)).positions
    for pos in accepted:
        parse_record(raws[pos])  # the fast path never accepts what the exact path rejects
    assert fast_stats.fast_rows == len(accepted) > 0
    assert 0 < fast_stats.invalid < len(raws)


def test_request_usage_keeps_distinct_sorted_pairs_up_to_the_cap_and_counts_the_rest() -> None:
    usage = RequestUsage()
    for key, version in [(3, 12), (0, 9), (3, 12), (18, 4), (0, 9)]:
        usage.record(key, version)
    assert usage.event_fields() == {"request_versions": ((0, 9), (3, 12), (18, 4))}
    full = RequestUsage()
    for key in range(MAX_REQUEST_VERSIONS + 5):
        full.record(key, 0)
    full.record(0, 0)  # already recorded: neither kept again nor counted
    full.record(999, 1)
    full.record(999, 1)  # a pair past the cap counts each time it is sent
    fields = full.event_fields()
    assert len(fields["request_versions"]) == MAX_REQUEST_VERSIONS
    assert fields["request_versions_overflow"] == 5 + 2
    assert RequestUsage().event_fields() == {"request_versions": ()}


def test_the_registry_adds_the_usage_to_connection_closed_only() -> None:
    sink = ListSink()
    registry = ConnectionRegistry(sink)
    context = RequestContext(connection_id="c1", client_software_name="kafka-python",
                             client_software_version="3.0.12")
    registry.register(context)
    usage = RequestUsage()
    usage.record(18, 4)
    usage.record(0, 9)
    assert registry.unregister("c1", usage.event_fields())
    assert not registry.unregister("never-registered", usage.event_fields())
    opened, closed = sink.events
    assert (opened.event, opened.request_versions) == (CONNECTION_OPENED, None)
    assert (closed.event, closed.request_versions, closed.client_software_name) == (
        CONNECTION_CLOSED, ((0, 9), (18, 4)), "kafka-python")
    validate_event(closed.to_dict())

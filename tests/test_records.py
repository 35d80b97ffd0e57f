"""The record contract in Python: validation reasons and JSON round trips."""

from __future__ import annotations

import json
import traceback
from typing import Any

import pytest

from configwatch.errors import ContractError
from configwatch.records import ConfigEntry, Event, Finding, Gauge, QuarantineRecord

BASE: dict[str, Any] = {"schema_version": 1, "event": "connection_opened", "timestamp_ms": 1,
                        "connection_id": "c1"}


@pytest.mark.parametrize(("payload", "reason"), [
    (b"\xff\xfe", "not_json"),
    (b"{nope", "not_json"),
    (b"[1,2]", "not_object"),
    (json.dumps({**BASE, "schema_version": 2}).encode(), "bad_schema_version"),
    (json.dumps({**BASE, "event": "config_pull"}).encode(), "unknown_event"),
    (json.dumps({k: v for k, v in BASE.items() if k != "timestamp_ms"}).encode(), "missing_field:timestamp_ms"),
    (json.dumps({**BASE, "timestamp_ms": "1"}).encode(), "wrong_type:timestamp_ms"),
    (json.dumps({**BASE, "timestamp_ms": True}).encode(), "wrong_type:timestamp_ms"),
    (json.dumps({**BASE, "client_software_name": "bad name!"}).encode(), "bad_software_name"),
    (json.dumps({**BASE, "client_software_version": "-1.0"}).encode(), "bad_software_version"),
    (json.dumps({k: v for k, v in BASE.items() if k != "connection_id"}).encode(), "missing_field:connection_id"),
    (json.dumps({**BASE, "event": "config_push"}).encode(), "missing_field:configs"),
    (json.dumps({**BASE, "event": "config_push", "configs": [{"value": "1", "type": "INT",
                                                               "is_default": True}]}).encode(),
     "missing_field:configs[].key"),
    (json.dumps({**BASE, "event": "config_push", "configs": [{"key": "a", "value": "1", "type": "NUMBER",
                                                               "is_default": True}]}).encode(),
     "bad_config_type"),
])
def test_invalid_records_have_stable_reasons(payload: bytes, reason: str) -> None:
    with pytest.raises(ContractError) as err:
        Event.from_json(payload)
    assert err.value.reason == reason
    assert payload.decode(errors="replace") not in str(err.value) or len(payload) < 3


@pytest.mark.parametrize("payload", [b'{"configs": [{"key": "sasl.jaas.config", "value": "S3CRET"',
                                     b'\xff{"configs": [{"key": "sasl.jaas.config", "value": "S3CRET"}]}'])
def test_an_unreadable_record_is_one_verdict_that_holds_no_part_of_it(payload: bytes) -> None:
    with pytest.raises(ContractError) as err:
        Event.from_json(payload)
    assert str(err.value) == "not_json: the record is not UTF-8 JSON"
    # The decoder's own error holds the whole record (JSONDecodeError.doc, UnicodeDecodeError.object): not chained.
    assert err.value.__cause__ is None and err.value.__suppress_context__
    assert "S3CRET" not in "".join(traceback.format_exception(err.value))


def test_reprs_leave_config_values_out() -> None:
    entry = ConfigEntry("sasl.jaas.config", "S3CRET", "PASSWORD", False)
    event = Event(event="config_push", timestamp_ms=1, connection_id="c1", configs=(entry,))
    assert "S3CRET" not in repr(entry) and "S3CRET" not in repr(event) and "c1" in repr(event)
    assert entry != ConfigEntry("sasl.jaas.config", "other", "PASSWORD", False)  # still compared


def test_empty_software_name_is_unknown() -> None:
    e = Event.from_json(json.dumps({**BASE, "client_software_name": ""}))
    assert e.software == ("unknown", "unknown")


def test_kafka_key_prefers_client_instance_id() -> None:
    e = Event.from_json(json.dumps({**BASE, "client_instance_id": "abc"}))
    assert e.kafka_key() == b"abc"
    assert Event.from_json(json.dumps(BASE)).kafka_key() == b"c1"


def test_output_records_round_trip() -> None:
    f = Finding(alert_id="a", kind="anomaly", rule="r", severity="low", keys=("acks",), message="m",
                event_timestamp_ms=1, detected_at_ms=2, evidence={"fingerprint": "00"})
    assert Finding.from_json(f.to_json()) == f
    g = Gauge("librdkafka", "2.6.1", 3, 2, 5)
    assert Gauge.from_json(g.to_json()) == g and g.key == "librdkafka/2.6.1"
    q = QuarantineRecord("not_json", "d", {"topic": "t", "partition": 0, "offset": 4}, 10, 7)
    assert QuarantineRecord.from_json(q.to_json()) == q

"""A catalog of invalid input records, one per kind of the contract's section 3 (plus the GX checks),
each with the quarantine reason the job must give it. Shared by the decode and job tests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["EXPECTATION_CASES", "INVALID_CASES", "InvalidCase", "base_event", "tricky_valid_records"]

SECRET = "s3cr3t-DO-NOT-LEAK-7f3a"  # planted in invalid payloads: must never reach quarantine


def base_event(**overrides: Any) -> dict[str, Any]:
    """A valid config_push (holding a sensitive-looking value) to break in one place."""
    event: dict[str, Any] = {
        "schema_version": 1, "event": "config_push", "timestamp_ms": 1_790_000_000_000, "broker_id": 1,
        "connection_id": "10.0.0.5:9092-10.0.0.12:51344-7",
        "client_instance_id": "0b6c4c36-1d1c-4f8e-9d2e-3c3f0e0e5a11",
        "client_software_name": "apache-kafka-java", "client_software_version": "3.9.1", "client_id": "app",
        "principal": "User:alice", "listener": "PLAINTEXT", "security_protocol": "PLAINTEXT",
        "client_address": "10.0.0.12", "request_size_bytes": 321,
        "configs": [
            {"key": "acks", "value": "all", "type": "STRING", "is_default": True},
            {"key": "sasl.jaas.config", "value": SECRET, "type": "PASSWORD", "is_default": False},
        ],
    }
    event.update(overrides)
    return event


def _without(name: str, **overrides: Any) -> dict[str, Any]:
    event = base_event(**overrides)
    del event[name]
    return event


def _entry(**changes: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"key": "sasl.jaas.config", "value": SECRET, "type": "PASSWORD", "is_default": False}
    entry.update(changes)
    return {k: v for k, v in entry.items() if v is not _DROP}


_DROP = object()


@dataclass(frozen=True)
class InvalidCase:
    name: str
    raw: bytes | None
    reason: str


def _j(obj: Any) -> bytes:
    return json.dumps(obj).encode()


INVALID_CASES: tuple[InvalidCase, ...] = (
    InvalidCase("no value", None, "not_json"),
    InvalidCase("empty", b"", "not_json"),
    InvalidCase("not json", f"password={SECRET}".encode(), "not_json"),
    InvalidCase("truncated json", _j(base_event())[:-7], "not_json"),
    InvalidCase("not utf-8", _j(base_event()).replace(b"app", b"\xff\xfe"), "not_json"),
    InvalidCase("utf-16", json.dumps(base_event()).encode("utf-16"), "not_json"),
    InvalidCase("two objects", _j(base_event()) + b" " + _j(base_event()), "not_json"),
    InvalidCase("json array", _j([base_event()]), "not_object"),
    InvalidCase("json string", _j(SECRET), "not_object"),
    InvalidCase("schema_version 2", _j(base_event(schema_version=2)), "bad_schema_version"),
    InvalidCase("schema_version string", _j(base_event(schema_version="1")), "wrong_type:schema_version"),
    InvalidCase("schema_version missing", _j(_without("schema_version")), "missing_field:schema_version"),
    InvalidCase("event missing", _j(_without("event")), "missing_field:event"),
    InvalidCase("unknown event", _j(base_event(event="config_pull")), "unknown_event"),
    InvalidCase("timestamp missing", _j(_without("timestamp_ms")), "missing_field:timestamp_ms"),
    InvalidCase("timestamp null", _j(base_event(timestamp_ms=None)), "missing_field:timestamp_ms"),
    InvalidCase("timestamp string", _j(base_event(timestamp_ms="1790000000000")), "wrong_type:timestamp_ms"),
    InvalidCase("timestamp float", _j(base_event(timestamp_ms=1.5)), "wrong_type:timestamp_ms"),
    InvalidCase("timestamp beyond int64", _j(base_event(timestamp_ms=2**64)), "wrong_type:timestamp_ms"),
    InvalidCase("broker_id bool", _j(base_event(broker_id=True)), "wrong_type:broker_id"),
    InvalidCase("client_id number", _j(base_event(client_id=42)), "wrong_type:client_id"),
    InvalidCase("principal object", _j(base_event(principal={"user": SECRET})), "wrong_type:principal"),
    InvalidCase("configs missing", _j(_without("configs")), "missing_field:configs"),
    InvalidCase("configs object", _j(base_event(configs={"key": "acks"})), "wrong_type:configs"),
    InvalidCase("entry not object", _j(base_event(configs=[SECRET])), "wrong_type:configs[]"),
    InvalidCase("entry lacks key", _j(base_event(configs=[_entry(key=_DROP)])), "missing_field:configs[].key"),
    InvalidCase("entry key null", _j(base_event(configs=[_entry(key=None)])), "missing_field:configs[].key"),
    InvalidCase("entry lacks type", _j(base_event(configs=[_entry(type=_DROP)])), "missing_field:configs[].type"),
    InvalidCase("entry lacks is_default", _j(base_event(configs=[_entry(is_default=_DROP)])),
                "missing_field:configs[].is_default"),
    InvalidCase("entry value number", _j(base_event(configs=[_entry(value=12345)])), "wrong_type:configs[].value"),
    InvalidCase("entry is_default string", _j(base_event(configs=[_entry(is_default="no")])),
                "wrong_type:configs[].is_default"),
    InvalidCase("entry redacted string", _j(base_event(configs=[_entry(redacted="yes")])),
                "wrong_type:configs[].redacted"),
    InvalidCase("entry bad type", _j(base_event(configs=[_entry(type="SECRET")])), "bad_config_type"),
    InvalidCase("connection event without connection_id",
                _j(_without("connection_id", event="connection_opened", configs=None)), "missing_field:connection_id"),
    InvalidCase("bad software name", _j(base_event(client_software_name="kafka java!")), "bad_software_name"),
    InvalidCase("software name ends with dash", _j(base_event(client_software_name="librdkafka-")),
                "bad_software_name"),
    InvalidCase("bad software version", _j(base_event(client_software_version="3.9.1 (beta)")),
                "bad_software_version"),
    InvalidCase("lone surrogate", _j(base_event(client_id="\ud800")), "not_json"),
)

# Contract-valid records that the Great Expectations suite rejects.
EXPECTATION_CASES: tuple[InvalidCase, ...] = (
    InvalidCase("security_protocol unknown", _j(base_event(security_protocol="SASL_MAGIC")),
                "expectation:security_protocol_in_set"),
    InvalidCase("timestamp before 2011", _j(base_event(timestamp_ms=946_684_800_000)),
                "expectation:timestamp_ms_in_window"),
    InvalidCase("timestamp far future", _j(base_event(timestamp_ms=4_102_444_800_000)),
                "expectation:timestamp_ms_in_window"),
)


def tricky_valid_records() -> list[bytes]:
    """Valid records that stress the fast path: escapes, unicode, extra fields, nulls, odd spacing."""
    return [
        _j(base_event(client_id="caf\u00e9-\U0001f600")),
        json.dumps(base_event(client_id="caf\u00e9-\U0001f600"), ensure_ascii=False).encode(),
        _j(base_event(client_id='quote " and \\ backslash and \n newline')),
        _j(base_event(extra_field={"nested": [1, 2, {"x": None}]}, another=3.25)),
        _j(base_event(broker_id=None, client_instance_id=None, client_software_name=None)),
        _j(base_event(client_software_name="", client_software_version="")),
        _j(base_event(configs=[])),
        _j(base_event(configs=[_entry(value=None, redacted=True, fingerprint="0123456789abcdef")])),
        _j(base_event(configs=[{"key": "x", "value": "1", "type": "INT", "is_default": True, "future": [1]}])),
        _j(_without("configs", event="connection_opened")),
        _j(base_event(event="connection_closed", configs="ignored for connection events")),
        _j(base_event(event="connection_opened", configs=[{"junk": 1}])),
        b'{ "schema_version" : 1 ,\t"event":"connection_closed", "timestamp_ms":1790000000000,'
        b'"connection_id":"c1"}',
        b'{"schema_version":1,"event":"connection_closed","timestamp_ms":1790000000000,"connection_id":"c1",'
        b'"connection_id":"c2"}',
        b'{"schema_version":1,"event":"connection_opened","timestamp_ms":-0,"connection_id":"c"}'.replace(
            b"-0", b"1790000000000"),
        b'{"schema_version":1,"event":"connection_opened","timestamp_ms":1790000000000,"connection_id":"c",'
        b'"ignored":NaN}',
        b'  {"schema_version":1,"event":"connection_opened","timestamp_ms":1790000000000,"connection_id":"c"}  ',
        b'{"schema_version":1,"event":"connection_opened","timestamp_ms":1790000000000,"connection_id":"c",'
        b'"big":123456789012345678901234567890}',
        b'{"schema_version":1,"event":"connection_opened","timestamp_ms":9223372036854775807,"connection_id":"c"}',
    ]

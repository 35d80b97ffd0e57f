"""Security posture findings from connection events, through the job's functions in memory (no Spark)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from configwatch.contract import ALERTS, CONNECTION_CLOSED, CONNECTION_OPENED
from configwatch.records import Event, Finding
from configwatch.secrets import SecretStr
from udfs.decode import decode_values
from udfs.memory import MemoryPipeline
from udfs.rules.catalog import POSTURE, rule
from udfs.rules.posture import POSTURE_RULES

KEY = SecretStr("posture-test-key")
T0 = 1_790_000_000_000


def _batch(events: list[Event]) -> pa.Table:
    decoded, _ = decode_values(pa.array([e.to_json().encode() for e in events], pa.binary()))
    n = decoded.num_rows
    return (decoded.append_column("topic", pa.array(["client-configs"] * n, pa.string()))
            .append_column("partition", pa.array([0] * n, pa.int32()))
            .append_column("offset", pa.array(range(n), pa.int64())))


def _opened(n: int, **posture: Any) -> Event:
    return Event(event=CONNECTION_OPENED, timestamp_ms=T0 + n, connection_id=f"gw:9192-10.0.0.{n}:5000-{n}",
                 client_software_name="apache-kafka-java", client_software_version="3.9.0",
                 client_id=posture.pop("client_id", f"app-{n}"), **posture)


def _findings(events: list[Event]) -> list[Finding]:
    out = MemoryPipeline(KEY).process(_batch(events), T0 + 1000)
    return [Finding.from_json(r.value) for r in out if r.kind == ALERTS]


def test_each_weak_posture_gets_its_rule_and_a_strong_one_none() -> None:
    events = [
        _opened(1, security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN", principal="User:alice"),
        _opened(2, security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-512", principal="User:bob"),
        _opened(3, security_protocol="SSL", tls_version="TLSv1.1", tls_cipher="ECDHE-RSA-AES128-SHA",
                client_certificate=True, principal="User:CN=carol"),
        _opened(4, security_protocol="SASL_SSL", tls_version="TLSv1.3", tls_cipher="TLS_AES_256_GCM_SHA384",
                sasl_mechanism="SCRAM-SHA-512", principal="User:dave"),
        _opened(5, security_protocol="PLAINTEXT", principal="User:ANONYMOUS"),  # no TLS offered: nothing to move to
        _opened(6, security_protocol="PLAINTEXT", principal="User:ANONYMOUS", tls_offered_at="kafka.example:9093"),
        _opened(7, security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-512", principal="User:erin",
                tls_offered_at="kafka.example:9093"),  # authenticated: its own (medium) rule, not this one
        Event(event=CONNECTION_CLOSED, timestamp_ms=T0 + 9, connection_id="gw:9192-10.0.0.1:5000-1",
              security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN"),
    ]
    found = {f.client_id: f for f in _findings(events)}
    assert {k: f.rule for k, f in found.items()} == {"app-1": "posture-plain-over-plaintext",
                                                    "app-2": "posture-sasl-over-plaintext",
                                                    "app-3": "posture-weak-tls",
                                                    "app-6": "posture-plaintext-tls-offered",
                                                    "app-7": "posture-sasl-over-plaintext"}
    assert found["app-6"].severity == "low" and found["app-6"].evidence["tls_offered_at"] == "kafka.example:9093"
    for f in found.values():
        entry = rule(f.rule)
        assert (f.kind, f.severity, f.keys, f.message) == (POSTURE, entry.severity, entry.keys, entry.rationale)
        assert f.client_software_name == "apache-kafka-java" and f.event_timestamp_ms is not None
    assert found["app-1"].severity == "critical" and found["app-1"].principal == "User:alice"
    assert found["app-3"].evidence == {"security_protocol": "SSL", "tls_version": "TLSv1.1",
                                       "tls_cipher": "ECDHE-RSA-AES128-SHA", "client_certificate": True}


def test_one_client_connecting_many_times_gets_one_alert_id() -> None:
    events = [_opened(n, client_id="same-app", security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN")
              for n in range(1, 6)]
    found = _findings(events)
    assert len(found) == 5 and len({f.alert_id for f in found}) == 1


def test_a_secret_in_a_principal_is_masked_in_the_finding() -> None:
    planted = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    found = _findings([_opened(1, security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                               principal=f"User:{planted}")])
    assert len(found) == 1
    assert planted not in found[0].to_json()


def test_every_posture_rule_is_in_the_catalog_as_a_posture_rule() -> None:
    assert {rule(r).kind for r in POSTURE_RULES} == {POSTURE}

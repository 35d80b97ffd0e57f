"""The dashboard's state, pure (no Kafka): gauges with tombstones and fleet totals, the alert
feed's de-duplication and bounds, the client LRU, fingerprinting of pushed configs, the change log.
"""

from __future__ import annotations

import json
import threading

import pytest

from configwatch.errors import ContractError
from configwatch.records import ConfigEntry, Gauge
from configwatch.secrets import SecretStr, fingerprint
from sinks.dashboard.alerts import AlertFeed, parse_finding
from sinks.dashboard.changes import Change, ChangeFeed
from sinks.dashboard.clients import ClientConfigs, ClientView, SafeEntry, view_bytes
from sinks.dashboard.fleet import FleetGauges, parse_gauge
from sinks.dashboard.redact import safe_views
from tests.dashboard_helpers import config_push, finding

KEY = SecretStr("unit-key")


def g(name: str, version: str, conns: int, inst: int = 1, removed: bool = False) -> Gauge:
    return Gauge(name, version, conns, inst, 1, removed)


def test_fleet_keeps_the_last_value_per_key_and_drops_tombstones() -> None:
    fleet = FleetGauges()
    assert fleet.apply("a/1", g("a", "1", 3))
    assert fleet.apply("a/1", g("a", "1", 5, 2))
    assert not fleet.apply("a/1", g("a", "1", 5, 2)), "same value: no change"
    assert fleet.apply("b/2", g("b", "2", 1))
    assert fleet.apply("b/10", g("b", "10", 4))
    assert [x.key for x in fleet.snapshot()] == ["a/1", "b/2", "b/10"], "versions sort numerically"
    assert fleet.apply("b/2", None)
    assert not fleet.apply("b/2", None), "tombstone of an absent key changes nothing"
    assert fleet.apply("b/10", g("b", "10", 0))  # zero connections removes too
    assert fleet.apply("a/1", g("a", "1", 5, 2, removed=True)) and fleet.snapshot() == []


def test_fleet_totals_sum_the_gauges() -> None:
    fleet = FleetGauges()
    fleet.apply("a/1", g("a", "1", 3, 2))
    fleet.apply("a/2", g("a", "2", 4, 4))
    fleet.apply("b/1", g("b", "1", 1, 1))
    t = fleet.totals()
    assert (t.connections, t.client_instances, t.software_versions, t.software_names, t.source) == (8, 7, 3, 2, "sum")
    fleet.apply("a/2", None)
    t = fleet.totals()
    assert (t.connections, t.client_instances, t.software_versions) == (4, 3, 2)


@pytest.mark.parametrize("value", [
    {"client_software_name": "a", "client_software_version": "1", "connections": "3", "client_instances": 1,
     "updated_at_ms": 1},
    {"client_software_name": "a", "client_software_version": "1", "connections": 3, "updated_at_ms": 1},
    {"client_software_name": "a", "client_software_version": "1", "connections": -1, "client_instances": 0,
     "updated_at_ms": 1},
    {"client_software_name": None, "client_software_version": "1", "connections": 1, "client_instances": 0,
     "updated_at_ms": 1},
    {"client_software_name": "a", "client_software_version": "1", "connections": True, "client_instances": 0,
     "updated_at_ms": 1},
])
def test_malformed_gauges_are_rejected(value: dict) -> None:
    with pytest.raises(ValueError):
        parse_gauge("a/1", value)


def test_alert_feed_counts_each_id_once_and_stays_bounded() -> None:
    feed = AlertFeed(max_alerts=3, max_ids=10)
    alerts = [finding(sev, rule=f"r{i % 2}", detected_at_ms=1000 + i)
              for i, sev in enumerate(["high", "low", "high", "critical", "info"])]
    for a in alerts:
        assert feed.add(a)
    assert not feed.add(alerts[-1]), "a replayed finding is not new"
    assert len(feed) == 3
    assert [a.alert_id for a in feed.recent()] == [x.alert_id for x in reversed(alerts[2:])]
    assert feed.counts() == {("anomaly", "r0", "high"): 2, ("anomaly", "r1", "low"): 1,
                             ("anomaly", "r1", "critical"): 1, ("anomaly", "r0", "info"): 1}
    assert feed.counts_by_severity() == {"critical": 1, "high": 2, "medium": 0, "low": 1, "info": 1}
    assert [a.severity for a in feed.recent(severities=frozenset({"critical", "info"}))] == ["info", "critical"]
    assert feed.recent(client_instance_id=alerts[3].client_instance_id) == [alerts[3]]


@pytest.mark.parametrize("change", [{"severity": "urgent"}, {"keys": []}, {"alert_id": ""},
                                    {"detected_at_ms": "now"}])
def test_malformed_findings_are_rejected(change: dict) -> None:
    doc = finding().to_dict() | change
    with pytest.raises(ValueError):
        parse_finding(doc)


def _view(ident: str, ts: int) -> ClientView:
    return ClientView(client_instance_id=ident, timestamp_ms=ts, entries=())


def test_client_lru_keeps_the_newest_push_and_a_bounded_number_of_instances() -> None:
    lru = ClientConfigs(max_clients=2)
    assert lru.put(_view("a", 10))
    assert not lru.put(_view("a", 5)), "an older push does not replace a newer one"
    lru.put(_view("b", 20))
    lru.put(_view("c", 30))
    assert lru.get("a") is None and lru.evicted == 1
    assert [v.client_instance_id for v in lru.recent()] == ["c", "b"]


def test_client_lru_is_bounded_by_bytes_too() -> None:
    # The probe of issue 14: pushes of 1,900 empty entries under fresh instance ids.
    entries = tuple(SafeEntry("", "STRING", False, "", False) for _ in range(1900))
    big = [ClientView(client_instance_id=f"i-{n}", timestamp_ms=n, entries=entries) for n in range(300)]
    budget = 5 * max(view_bytes(v) for v in big)
    lru = ClientConfigs(max_clients=10_000, max_bytes=budget)
    assert all(lru.put(v) for v in big)
    assert len(lru) == 5 and lru.bytes <= budget and lru.evicted == 295
    assert lru.get("i-299") is not None and lru.get("i-0") is None
    huge = ClientView(client_instance_id="huge", timestamp_ms=1, entries=entries * 10)
    assert not lru.put(huge), "a view over the whole budget is not kept"


def test_safe_views_fingerprint_sensitive_values_and_keep_the_rest() -> None:
    redacted_fp = fingerprint("already-hidden", KEY)
    _key, raw = config_push("c-1", [
        ConfigEntry("acks", "all", "STRING", True),
        ConfigEntry("sasl.jaas.config", "secret-jaas", "PASSWORD", False),
        ConfigEntry("ssl.key.password", None, "PASSWORD", False, redacted=True, fingerprint=redacted_fp),
        ConfigEntry("ssl.endpoint.identification.algorithm", "https", "STRING", True),
        ConfigEntry("partitioner.class", "com.acme.P", "CLASS", False),
        ConfigEntry("sasl.login.callback.handler.class", None, "CLASS", True),
        ConfigEntry("orders.db.dsn", "plain-custom-value", "STRING", False),               # custom key (KIP)
        ConfigEntry("bootstrap.servers", "SASL_SSL://app:Pa55w0rd-xyz@kafka-1:9093", "LIST", False),  # in a value
        ConfigEntry("AKIAIOSFODNN7EXAMPLE", "1", "STRING", False),                          # secret as a key name
    ])
    [view] = safe_views([raw], KEY)
    assert isinstance(view, ClientView)
    shown = {e.key: e.to_dict() for e in view.entries}
    assert shown["acks"] == {"key": "acks", "type": "STRING", "is_default": True, "sensitive": False, "value": "all"}
    assert shown["sasl.jaas.config"]["fingerprint"] == fingerprint("secret-jaas", KEY)
    assert shown["ssl.key.password"] == {"key": "ssl.key.password", "type": "PASSWORD", "is_default": False,
                                         "sensitive": True, "fingerprint": redacted_fp, "reason": "redacted"}
    assert shown["ssl.endpoint.identification.algorithm"]["reason"] == "kip-sensitive-prefix"
    assert shown["partitioner.class"]["reason"] == "kip-sensitive-type"
    assert shown["sasl.login.callback.handler.class"]["fingerprint"] is None  # no value, nothing to hash
    assert shown["orders.db.dsn"]["reason"] == "kip-sensitive-custom"
    assert shown["bootstrap.servers"] == {
        "key": "bootstrap.servers", "type": "LIST", "is_default": False, "sensitive": True,
        "fingerprint": fingerprint("SASL_SSL://app:Pa55w0rd-xyz@kafka-1:9093", KEY), "reason": "secret-url-credentials"}
    hidden_key = f"redacted:{fingerprint('AKIAIOSFODNN7EXAMPLE', KEY)}"
    assert shown[hidden_key]["reason"] == "secret-aws-access-key"
    for raw_value in ("secret-jaas", "com.acme.P", "plain-custom-value", "Pa55w0rd", "AKIAIOSFODNN7EXAMPLE"):
        assert raw_value not in repr(view)
    assert view.summary()["sensitive_entries"] == 8


def test_safe_views_hide_secrets_in_identity_fields() -> None:
    event = json.loads(config_push("c-2", [ConfigEntry("acks", "all", "STRING", True)])[1])
    event["client_id"] = "svc token=ghp_0123456789abcdefghijABCDEFGHIJ012345"
    [view] = safe_views([json.dumps(event).encode()], KEY)
    assert isinstance(view, ClientView)
    assert view.client_id is not None and view.client_id.startswith("redacted:")
    assert "ghp_" not in repr(view)


def test_safe_views_ignore_connection_events_and_reject_bad_records() -> None:
    results = safe_views([
        b'{"schema_version":1,"event":"connection_opened","timestamp_ms":1,"connection_id":"c"}',
        b'{"schema_version":1,"event":"config_push","configs":[{"key":"k","value":"secret"}]}',
        b'{"value": "secret',
        config_push("c-3", [])[1],
    ], KEY)
    assert results[0] is None
    assert isinstance(results[1], ContractError) and "secret" not in str(results[1])
    assert isinstance(results[2], ContractError) and results[2].reason == "not_json"
    assert results[2].__cause__ is None and results[2].__context__ is None
    assert isinstance(results[3], ClientView) and results[3].entries == ()


def test_change_feed_wakes_waiters_and_signals_resync() -> None:
    feed = ChangeFeed(capacity=3)
    got: list[list[Change] | None] = []
    waiter = threading.Thread(target=lambda: got.append(feed.since(0, 30)))
    waiter.start()
    feed.publish("gauges", "{}")
    waiter.join(30)
    assert [c.event for c in got[0] or []] == ["gauges"]
    for i in range(5):
        feed.publish("alert", str(i))
    assert feed.since(0, 0) is None, "fell behind the bounded log: resynchronise"
    assert [c.data for c in feed.since(3, 0) or []] == ["2", "3", "4"]
    assert feed.since(feed.seq, 0.01) == []
    feed.close()
    assert feed.since(feed.seq, 30) == [] and feed.closed

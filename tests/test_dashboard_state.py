"""The dashboard's state, pure (no Kafka): gauges with tombstones and fleet totals, the alert
feed's de-duplication and bounds, the client LRU, fingerprinting of pushed configs, the change log.
"""

from __future__ import annotations

import threading

import pytest

from configwatch.errors import ContractError
from configwatch.records import ConfigEntry, Gauge
from configwatch.secrets import SecretStr, fingerprint
from sinks.dashboard.alerts import AlertFeed, parse_finding
from sinks.dashboard.changes import Change, ChangeFeed
from sinks.dashboard.clients import ClientConfigs, ClientView
from sinks.dashboard.fleet import FleetGauges, parse_gauge
from sinks.dashboard.redact import safe_view
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


def test_fleet_totals_sum_the_gauges_unless_a_fleet_record_exists() -> None:
    fleet = FleetGauges()
    fleet.apply("a/1", g("a", "1", 3, 2))
    fleet.apply("a/2", g("a", "2", 4, 4))
    fleet.apply("b/1", g("b", "1", 1, 1))
    t = fleet.totals()
    assert (t.connections, t.client_instances, t.software_versions, t.software_names, t.source) == (8, 7, 3, 2, "sum")
    fleet.apply("*/*", g("*", "*", 8, 6))
    t = fleet.totals()
    assert (t.connections, t.client_instances, t.source) == (8, 6, "record")
    assert [x.key for x in fleet.snapshot()] == ["a/1", "a/2", "b/1"], "the fleet record is not a version"
    fleet.apply("*/*", None)
    assert fleet.totals().source == "sum"


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


def test_safe_view_fingerprints_sensitive_values_and_keeps_the_rest() -> None:
    redacted_fp = fingerprint("already-hidden", KEY)
    _key, raw = config_push("c-1", [
        ConfigEntry("acks", "all", "STRING", True),
        ConfigEntry("sasl.jaas.config", "secret-jaas", "PASSWORD", False),
        ConfigEntry("ssl.key.password", None, "PASSWORD", False, redacted=True, fingerprint=redacted_fp),
        ConfigEntry("ssl.endpoint.identification.algorithm", "https", "STRING", True),
        ConfigEntry("partitioner.class", "com.acme.P", "CLASS", False),
        ConfigEntry("sasl.login.callback.handler.class", None, "CLASS", True),
    ])
    view = safe_view(raw, KEY)
    assert view is not None
    shown = {e.key: e.to_dict() for e in view.entries}
    assert shown["acks"] == {"key": "acks", "type": "STRING", "is_default": True, "sensitive": False, "value": "all"}
    assert shown["sasl.jaas.config"]["fingerprint"] == fingerprint("secret-jaas", KEY)
    assert shown["ssl.key.password"] == {"key": "ssl.key.password", "type": "PASSWORD", "is_default": False,
                                         "sensitive": True, "fingerprint": redacted_fp, "reason": "redacted"}
    assert shown["ssl.endpoint.identification.algorithm"]["reason"] == "kip-sensitive-prefix"
    assert shown["partitioner.class"]["reason"] == "kip-sensitive-type"
    assert shown["sasl.login.callback.handler.class"]["fingerprint"] is None  # no value, nothing to hash
    assert "secret-jaas" not in repr(view) and "com.acme.P" not in repr(view)
    assert view.summary()["sensitive_entries"] == 5


def test_safe_view_ignores_connection_events_and_rejects_bad_records() -> None:
    assert safe_view(b'{"schema_version":1,"event":"connection_opened","timestamp_ms":1,"connection_id":"c"}',
                     KEY) is None
    with pytest.raises(ContractError) as bad:
        safe_view(b'{"schema_version":1,"event":"config_push","configs":[{"key":"k","value":"secret"}]}', KEY)
    assert "secret" not in str(bad.value)
    with pytest.raises(ContractError) as not_json:
        safe_view(b'{"value": "secret', KEY)
    assert not_json.value.reason == "not_json" and not_json.value.__cause__ is None


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

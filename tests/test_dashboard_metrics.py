"""/metrics and access rules, pure: the collector's families and labels (bounded, no client ids),
series vanishing with their gauge, the cardinality cap, loopback/token rules, severity parsing.
"""

from __future__ import annotations

from email.message import Message

import pytest
from prometheus_client import generate_latest

from configwatch.errors import UsageError
from configwatch.records import Gauge
from configwatch.secrets import SecretStr
from sinks.dashboard.auth import Authenticator, is_loopback, require_safe_bind
from sinks.dashboard.exceptions import UnsafeBindError
from sinks.dashboard.metrics import OTHER_LABEL, DashboardCollector, build_registry
from sinks.dashboard.state import DashboardState, Topics
from sinks.dashboard.views import parse_severities
from tests.dashboard_helpers import finding, metric_samples

ALLOWED_LABELS = {"client_software_name", "client_software_version", "kind", "rule", "severity", "topic",
                  "role", "outcome"}


def _state() -> DashboardState:
    return DashboardState(Topics("g", "a", "c"))


def _scrape(state: DashboardState, max_series: int = 1000) -> dict:
    return metric_samples(generate_latest(build_registry(DashboardCollector(state, max_series=max_series))).decode())


def test_collector_exposes_the_state_and_drops_removed_series() -> None:
    state = _state()
    state.fleet.apply("a/1", Gauge("a", "1", 3, 2, 1))
    state.fleet.apply("b/2", Gauge("b", "2", 4, 1, 1))
    state.alerts.add(finding("high", rule="r1", client_instance_id="11111111-2222-3333-4444-555555555555"))
    state.health.count("g", "ok", 5)
    state.health.set_lag("g", 7, 3)
    samples = _scrape(state)
    conn = "configwatch_client_connections"
    assert samples[(conn, (("client_software_name", "a"), ("client_software_version", "1")))] == 3
    assert samples[("configwatch_client_instances", (("client_software_name", "b"),
                                                     ("client_software_version", "2")))] == 1
    assert samples[("configwatch_fleet_connections", ())] == 7
    assert samples[("configwatch_alerts_total", (("kind", "anomaly"), ("rule", "r1"), ("severity", "high")))] == 1
    assert samples[("configwatch_dashboard_consumer_lag_records", (("role", "gauges"), ("topic", "g")))] == 7
    assert samples[("configwatch_dashboard_records_total", (("outcome", "ok"), ("role", "gauges"),
                                                            ("topic", "g")))] == 5
    labels = {name for (_metric, lbls) in samples for name, _v in lbls}
    assert labels <= ALLOWED_LABELS, f"unbounded labels: {labels - ALLOWED_LABELS}"
    assert "11111111-2222" not in str(samples)

    state.fleet.apply("a/1", None)
    after = _scrape(state)
    assert not [k for k in after if k[0] == conn and ("client_software_name", "a") in k[1]]
    assert after[("configwatch_fleet_connections", ())] == 4


def test_series_beyond_the_cap_fold_into_other() -> None:
    state = _state()
    for i in range(6):
        state.fleet.apply(f"lib/{i}", Gauge("lib", str(i), 10 + i, 1, 1))
    samples = _scrape(state, max_series=4)
    conns = {dict(lbls)["client_software_version"]: v for (m, lbls), v in samples.items()
             if m == "configwatch_client_connections"}
    assert conns == {"5": 15, "4": 14, "3": 13, OTHER_LABEL: 10 + 11 + 12}
    assert samples[("configwatch_dashboard_folded_software_versions", ())] == 3
    assert samples[("configwatch_fleet_connections", ())] == sum(10 + i for i in range(6))


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.8.9.1", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("10.0.0.5", False), ("dashboard.example.com", False),
])
def test_loopback_detection(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_non_loopback_bind_needs_a_token() -> None:
    with pytest.raises(UnsafeBindError) as err:
        require_safe_bind("0.0.0.0", None)
    assert isinstance(err.value, UsageError) and "CONFIGWATCH_DASHBOARD_TOKEN" in str(err.value)
    with pytest.raises(UnsafeBindError):
        require_safe_bind("0.0.0.0", SecretStr(""))
    require_safe_bind("0.0.0.0", SecretStr("t"))
    require_safe_bind("127.0.0.1", None)


def _headers(**items: str) -> Message:
    msg = Message()
    for k, v in items.items():
        msg[k.replace("_", "-")] = v
    return msg


def test_authenticator_accepts_the_bearer_token_or_the_session_cookie() -> None:
    auth = Authenticator(SecretStr("tok"))
    assert auth.allowed(_headers(Authorization="Bearer tok"))
    assert auth.allowed(_headers(Authorization="bearer tok"))
    assert not auth.allowed(_headers(Authorization="Bearer tok2"))
    assert not auth.allowed(_headers(Authorization="Basic dG9r"))
    assert not auth.allowed(_headers())
    cookie = auth.session_cookie().split(";", 1)[0]
    assert "tok" not in cookie.split("=", 1)[1]
    assert auth.allowed(_headers(Cookie=cookie))
    assert not auth.allowed(_headers(Cookie="configwatch_session=forged"))
    open_auth = Authenticator(None)
    assert open_auth.allowed(_headers(Host="127.0.0.1:8765"))
    assert open_auth.allowed(_headers(Host="[::1]:8765"))
    assert not open_auth.allowed(_headers(Host="attacker.example:8765"))


def test_severity_filter_parsing() -> None:
    assert parse_severities(None) is None and parse_severities("") is None
    assert parse_severities("High, critical") == frozenset({"high", "critical"})
    with pytest.raises(ValueError, match="unknown severity 'urgent'"):
        parse_severities("high,urgent")

"""The live page in a real headless Chromium (Debian's, driven by Playwright): it shows the
gauges and alerts, follows a gauge change and a new alert without a reload, filters by
severity, opens a client drill-down with fingerprints only, and saves screenshots.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from configwatch.records import ConfigEntry, VersionUsage
from configwatch.secrets import fingerprint
from sinks.dashboard import Topics
from tests.dashboard_helpers import TEST_KEY, config_push, create_topics, dashboard, finding, gauge_record
from tests.kafka_helpers import produce

pytestmark = pytest.mark.kafka

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
FLEET = [
    ("apache-kafka-java", "3.6.2", 38, 21), ("apache-kafka-java", "3.9.1", 112, 64),
    ("apache-kafka-java", "4.1.0", 57, 40), ("librdkafka", "2.3.0", 24, 24), ("librdkafka", "2.6.1", 71, 52),
    ("confluent-kafka-python", "2.6.0", 33, 18), ("franz-go", "1.18.0", 16, 9), ("unknown", "unknown", 5, 0),
]
PLANTED = "hunter2-browser-" + uuid.uuid4().hex[:8]


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[Any]:
    """A fresh Chromium profile per test (the system browser; never `playwright install`)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1440, "height": 1100}, device_scale_factor=1)
        try:
            yield context
        finally:
            context.close()


def test_live_page_follows_gauges_and_alerts_without_reload(
        kafka_bootstrap: str, topic_name: Any, chromium: Any, output_dir: Path) -> None:
    topics = Topics(gauges=topic_name("gauges"), alerts=topic_name("alerts"), configs=topic_name("configs"))
    create_topics(kafka_bootstrap, topics)
    produce(kafka_bootstrap, topics.gauges, [gauge_record(*row) for row in FLEET])
    client = "8d3c1f2e-77a4-4c1b-9a0e-5b6d2f9e4c11"
    produce(kafka_bootstrap, topics.configs, [config_push(client, [
        ConfigEntry("bootstrap.servers", "kafka-1:9093,kafka-2:9093", "LIST", False),
        ConfigEntry("acks", "all", "STRING", True),
        ConfigEntry("linger.ms", "20", "LONG", False),
        ConfigEntry("sasl.mechanism", "SCRAM-SHA-512", "STRING", False),
        ConfigEntry("sasl.jaas.config", f'org.apache.kafka.common.security.scram.ScramLoginModule required '
                    f'username="orders" password="{PLANTED}";', "PASSWORD", False),
        ConfigEntry("ssl.truststore.password", None, "PASSWORD", False, redacted=True,
                    fingerprint=fingerprint("truststore-pw", TEST_KEY)),
        ConfigEntry("enable.idempotence", "true", "BOOLEAN", True),
    ])])
    now = int(time.time() * 1000)
    seeded = [
        finding("info", rule="version-outdated", keys=("client.software.version",),
                software=("apache-kafka-java", "3.6.2"), client_id="billing-etl",
                message="apache-kafka-java 3.6.2 is three minor releases behind the fleet.",
                detected_at_ms=now - 3_600_000),
        finding("low", rule="anomaly-acks-weak", keys=("acks",), software=("librdkafka", "2.3.0"),
                client_id="clickstream", message="acks=1 on a producer writing to a replicated topic.",
                detected_at_ms=now - 1_500_000),
        finding("medium", rule="anomaly-linger-outlier", keys=("linger.ms",), software=("librdkafka", "2.6.1"),
                client_id="payments-gw", message="linger.ms=500 is far above the fleet's usual 0-20.",
                detected_at_ms=now - 420_000),
        finding("high", rule="kip-sensitive-type", kind="sensitive_leak", client_instance_id=client,
                keys=("sasl.jaas.config",), client_id="orders-app",
                message="sasl.jaas.config carries a credential; the policy did not redact it.",
                detected_at_ms=now - 95_000),
    ]
    produce(kafka_bootstrap, topics.alerts, [(f.alert_id.encode(), f.to_json().encode()) for f in seeded])

    with dashboard(kafka_bootstrap, topics) as svc:
        assert svc.wait_ready(60)
        page = chromium.new_page()
        page.goto(svc.url)
        page.wait_for_selector('tr[data-key="apache-kafka-java/3.9.1"]')
        page.wait_for_selector(f'li[data-alert-id="{seeded[3].alert_id}"]')
        page.evaluate("window.__noReload = 'still-here'")
        row = 'tr[data-key="librdkafka/2.6.1"] td:nth-child(3)'
        assert page.inner_text(row) == "71"
        assert page.inner_text("#kpi-connections") == f"{sum(r[2] for r in FLEET):,}"

        # A gauge changes on the topic: the page shows it without a reload.
        produce(kafka_bootstrap, topics.gauges, [gauge_record("librdkafka", "2.6.1", 84, 60, by_security={
            "PLAINTEXT": 4, "SASL_SSL/SCRAM-SHA-512": 80})])
        expect(page.locator(row)).to_have_text("84", timeout=15_000)
        assert page.inner_text('tr[data-key="librdkafka/2.6.1"] td.security-mix') == \
            "SASL_SSL/SCRAM-SHA-512 80 · PLAINTEXT 4"
        assert page.locator('#chart rect[data-key="librdkafka/2.6.1"]').count() == 1

        # A new critical alert arrives live at the top of the feed.
        fresh = finding("critical", rule="leak-secret-in-value", kind="sensitive_leak", client_instance_id=client,
                        keys=("app.db.url",), client_id="orders-app",
                        message="A password inside app.db.url was pushed in clear.")
        produce(kafka_bootstrap, topics.alerts, [(fresh.alert_id.encode(), fresh.to_json().encode())])
        page.wait_for_selector(f'#alerts li[data-alert-id="{fresh.alert_id}"]', timeout=15_000)
        assert page.locator("#alerts li").first.get_attribute("data-alert-id") == fresh.alert_id
        assert page.evaluate("window.__noReload") == "still-here"
        assert page.evaluate("performance.getEntriesByType('navigation').length") == 1

        # Severity filter: only critical alerts stay.
        page.click('#severity-filter button[data-severity="critical"]')
        expect(page.locator("#alerts li")).to_have_count(1)
        expect(page.locator("#alerts li")).to_have_attribute("data-severity", "critical")
        page.click('#severity-filter button:has-text("all")')
        expect(page.locator("#alerts li")).to_have_count(5)

        # Drill-down from the alert: the latest config, sensitive values as fingerprints only.
        page.click(f'#alerts li[data-alert-id="{seeded[3].alert_id}"]')
        page.wait_for_selector('#client-detail tr[data-key="sasl.jaas.config"]')
        jaas = page.inner_text('#client-detail tr[data-key="sasl.jaas.config"]')
        assert fingerprint(page_value_planted(), TEST_KEY) in jaas
        assert page.inner_text('#client-detail tr[data-key="linger.ms"]').startswith("linger.ms\t20")
        assert fingerprint("truststore-pw", TEST_KEY) in page.inner_text(
            '#client-detail tr[data-key="ssl.truststore.password"]')
        assert PLANTED not in page.content()

        page.screenshot(path=str(output_dir / "dashboard.png"), full_page=True)
        dark = chromium.new_page()
        dark.emulate_media(color_scheme="dark")
        dark.goto(svc.url)
        dark.wait_for_selector('tr[data-key="librdkafka/2.6.1"]')
        dark.click(f'#recent-clients li[data-client="{client}"]')
        dark.wait_for_selector('#client-detail tr[data-key="sasl.jaas.config"]')
        dark.screenshot(path=str(output_dir / "dashboard-dark.png"), full_page=True)
    assert (output_dir / "dashboard.png").stat().st_size > 20_000


def page_value_planted() -> str:
    return ('org.apache.kafka.common.security.scram.ScramLoginModule required '
            f'username="orders" password="{PLANTED}";')


def _usage(name: str, version: str, pairs: tuple[tuple[int, int, int], ...], connections: int,
           ids: tuple[str, ...] = ()) -> tuple[bytes, bytes]:
    record = VersionUsage(name, version, pairs, connections, len(ids), ids, int(time.time() * 1000))
    return record.key.encode(), record.to_json().encode()


def test_upgrade_panel_lists_the_clients_a_target_broker_breaks(kafka_bootstrap: str, topic_name: Any,
                                                               chromium: Any, output_dir: Path) -> None:
    topics = Topics(gauges=topic_name("gauges"), alerts=topic_name("alerts"), configs=topic_name("configs"),
                    usage=topic_name("usage"))
    create_topics(kafka_bootstrap, topics)
    produce(kafka_bootstrap, topics.gauges, [gauge_record(*row) for row in FLEET])
    java_ids = tuple(str(uuid.UUID(int=i)) for i in range(1, 6))
    produce(kafka_bootstrap, topics.usage, [
        _usage("apache-kafka-java", "4.1.0", ((0, 12, 40), (1, 17, 40), (3, 12, 57), (18, 4, 57)), 57, java_ids),
        _usage("unknown", "unknown", ((0, 2, 6), (3, 2, 6), (18, 0, 6)), 6),  # kafka-python pinned to 0.10.1
        _usage("librdkafka", "2.6.1", ((0, 9, 71), (3, 12, 71), (18, 3, 71)), 71, ("c0ffee00-rdkafka",)),
    ])
    with dashboard(kafka_bootstrap, topics) as svc:
        assert svc.wait_ready(60)
        page = chromium.new_page()
        page.goto(svc.url)
        old = '#upgrade tr[data-key="unknown/unknown"]'
        page.wait_for_selector(old)
        assert page.get_attribute(old, "data-status") == "not_ready"
        assert "Produce v2 (removed" in page.inner_text(old)
        assert page.locator("#upgrade tbody tr").first.get_attribute("data-key") == "unknown/unknown"
        assert page.get_attribute('#upgrade tr[data-key="apache-kafka-java/4.1.0"]', "data-status") == "ready"
        expect(page.locator("#upgrade-summary")).to_contain_text("1 of 3 client versions not ready")
        page.evaluate("window.__noReload = 'still-here'")

        # A client version the job has just seen arrives on the usage topic: the panel shows it live.
        produce(kafka_bootstrap, topics.usage, [_usage("sarama", "1.19.0", ((0, 2, 2), (3, 1, 2)), 2)])
        expect(page.locator('#upgrade tr[data-key="sarama/1.19.0"]')).to_have_attribute(
            "data-status", "not_ready", timeout=15_000)
        assert page.evaluate("window.__noReload") == "still-here"

        # Another target: a 3.9 broker still serves every one of these requests.
        page.select_option("#upgrade-target", "3.9")
        expect(page.locator("#upgrade-summary")).to_contain_text("0 of 4 client versions not ready for "
                                                                 "Apache Kafka 3.9")
        page.select_option("#upgrade-target", "4.0")
        expect(page.locator("#upgrade-summary")).to_contain_text("2 of 4")
        page.locator(".card-upgrade").screenshot(path=str(output_dir / "dashboard-upgrade.png"))
    assert (output_dir / "dashboard-upgrade.png").stat().st_size > 10_000


def _posture(rule: str, severity: str, principal: str, software: tuple[str, str], client_id: str) -> Any:
    f = finding(severity, rule=rule, kind="security_posture", keys=("security.protocol", "sasl.mechanism"),
                software=software, client_id=client_id)
    return replace(f, principal=principal)


def test_security_panel_lists_weak_posture_per_client_version_and_principal(
        kafka_bootstrap: str, topic_name: Any, chromium: Any, output_dir: Path) -> None:
    topics = Topics(gauges=topic_name("gauges"), alerts=topic_name("alerts"), configs=topic_name("configs"))
    create_topics(kafka_bootstrap, topics)
    produce(kafka_bootstrap, topics.gauges, [gauge_record(*row) for row in FLEET])
    seeded = [
        _posture("posture-plain-over-plaintext", "critical", "User:billing", ("kafka-python", "2.0.2"), "billing-a"),
        _posture("posture-plain-over-plaintext", "critical", "User:billing", ("kafka-python", "2.0.2"), "billing-b"),
        _posture("posture-sasl-over-plaintext", "medium", "User:orders", ("librdkafka", "2.6.1"), "orders-app"),
        finding("high", rule="anomaly-acks-weak", keys=("acks",)),  # not posture: not in the panel
    ]
    produce(kafka_bootstrap, topics.alerts, [(f.alert_id.encode(), f.to_json().encode()) for f in seeded])
    with dashboard(kafka_bootstrap, topics) as svc:
        assert svc.wait_ready(60)
        page = chromium.new_page()
        page.goto(svc.url)
        plain = '#security tr[data-rule="posture-plain-over-plaintext"]'
        page.wait_for_selector(plain)
        assert page.locator("#security tbody tr").count() == 2
        assert page.locator("#security tbody tr").first.get_attribute("data-severity") == "critical"
        row = page.inner_text(plain)
        assert "User:billing" in row and "kafka-python" in row and row.rstrip().endswith("2")  # two clients
        expect(page.locator("#security-summary")).to_contain_text("2 weak posture(s) across 2 client version(s)")
        page.evaluate("window.__noReload = 'still-here'")

        # A TLS 1.1 client shows up: the panel follows without a reload.
        weak = _posture("posture-weak-tls", "high", "User:CN=legacy", ("apache-kafka-java", "2.8.1"), "legacy")
        produce(kafka_bootstrap, topics.alerts, [(weak.alert_id.encode(), weak.to_json().encode())])
        expect(page.locator('#security tr[data-rule="posture-weak-tls"]')).to_have_attribute(
            "data-key", "apache-kafka-java/2.8.1", timeout=15_000)
        assert page.evaluate("window.__noReload") == "still-here"
        assert page.locator("#security tbody tr").nth(1).get_attribute("data-rule") == "posture-weak-tls"
        page.locator(".card-security").screenshot(path=str(output_dir / "dashboard-security.png"))
    assert (output_dir / "dashboard-security.png").stat().st_size > 5_000

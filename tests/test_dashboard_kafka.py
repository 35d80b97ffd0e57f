"""The dashboard against the real broker: /metrics and /api/... follow the gauges, alerts and
input topics (records produced straight into unique topics), tombstones remove series, live
events arrive without polling, malformed records are skipped, and the token guards every route.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from configwatch.records import ConfigEntry
from sinks.dashboard import Topics
from tests.conftest import eventually
from tests.dashboard_helpers import (
    config_push,
    create_topics,
    current_gauges,
    dashboard,
    finding,
    gauge_record,
    get,
    metric_samples,
    read_sse,
    tombstone,
)
from tests.kafka_helpers import produce

pytestmark = pytest.mark.kafka

CONN = "configwatch_client_connections"
INST = "configwatch_client_instances"


def _topics(topic_name: Callable[[str], str]) -> Topics:
    return Topics(gauges=topic_name("gauges"), alerts=topic_name("alerts"), configs=topic_name("configs"))


def _series(samples: dict, name: str) -> dict[str, float]:
    out = {}
    for (metric, labels), value in samples.items():
        if metric == name:
            d = dict(labels)
            out[f"{d['client_software_name']}/{d['client_software_version']}"] = value
    return out


def test_metrics_follow_the_gauges_topic_including_tombstones(kafka_bootstrap: str, topic_name) -> None:
    topics = _topics(topic_name)
    create_topics(kafka_bootstrap, topics)
    # History before the dashboard starts: it must rebuild the current state from the start.
    produce(kafka_bootstrap, topics.gauges, [
        gauge_record("apache-kafka-java", "3.9.1", 4, 3),
        gauge_record("apache-kafka-java", "4.1.0", 2, 2),
        gauge_record("librdkafka", "2.6.1", 1, 1),
        gauge_record("apache-kafka-java", "3.9.1", 7, 5),   # newer value for the same key
        gauge_record("unknown", "unknown", 3, 0),
        tombstone("librdkafka", "2.6.1"),                   # removed before startup
    ])
    with dashboard(kafka_bootstrap, topics) as svc:
        assert svc.wait_ready(60), "gauges topic not rebuilt"

        def agrees() -> dict[str, float] | None:
            expected = current_gauges(kafka_bootstrap, topics.gauges)
            samples = metric_samples(get(svc.url + "metrics").text)
            conns, insts = _series(samples, CONN), _series(samples, INST)
            want_c = {k: float(g.connections) for k, g in expected.items()}
            want_i = {k: float(g.client_instances) for k, g in expected.items()}
            return conns if conns == want_c and insts == want_i else None

        got = eventually(agrees, timeout_s=30, message="/metrics equal to the gauges topic")
        assert got == {"apache-kafka-java/3.9.1": 7.0, "apache-kafka-java/4.1.0": 2.0, "unknown/unknown": 3.0}
        samples = metric_samples(get(svc.url + "metrics").text)
        assert samples[("configwatch_fleet_connections", ())] == 12.0
        assert samples[("configwatch_fleet_client_instances", ())] == 7.0
        assert samples[("configwatch_fleet_software_versions", ())] == 3.0
        assert samples[("configwatch_dashboard_ready", ())] == 1.0

        # Live: a new version appears, then the 4.1.0 series disappears after its tombstone.
        produce(kafka_bootstrap, topics.gauges, [gauge_record("librdkafka", "2.8.0", 6, 4),
                                                 tombstone("apache-kafka-java", "4.1.0")])
        got = eventually(agrees, timeout_s=30, message="/metrics after a tombstone")
        assert "apache-kafka-java/4.1.0" not in got
        assert got["librdkafka/2.8.0"] == 6.0
        text = get(svc.url + "metrics").text
        assert 'client_software_version="4.1.0"' not in text

        api = get(svc.url + "api/gauges").json()
        assert {g["key"]: g["connections"] for g in api["gauges"]} == {
            "apache-kafka-java/3.9.1": 7, "librdkafka/2.8.0": 6, "unknown/unknown": 3}
        assert api["fleet"]["connections"] == 16 and api["ready"] is True


def test_alerts_clients_api_and_live_events(kafka_bootstrap: str, topic_name) -> None:
    topics = _topics(topic_name)
    create_topics(kafka_bootstrap, topics)
    client = "5f4b8e1a-1c1e-4a53-9f7e-0f6c7c1d2a10"
    old = finding("low", rule="anomaly-linger", detected_at_ms=1_790_000_000_000)
    crit = finding("critical", rule="leak-password", kind="sensitive_leak", client_instance_id=client)
    produce(kafka_bootstrap, topics.alerts, [(f.alert_id.encode(), f.to_json().encode())
                                             for f in (old, crit, crit)])  # crit twice: a replay
    produce(kafka_bootstrap, topics.configs, [config_push(client, [
        ConfigEntry("acks", "all", "STRING", True),
        ConfigEntry("linger.ms", "20", "LONG", False),
    ])])
    with dashboard(kafka_bootstrap, topics) as svc:
        def alerts_loaded() -> object:
            return (len(get(svc.url + "api/alerts").json()["alerts"]) == 2
                    and get(svc.url + f"api/clients/{client}").status == 200)

        eventually(alerts_loaded, timeout_s=30, message="alerts and the client push consumed")
        doc = get(svc.url + "api/alerts").json()
        assert [a["alert_id"] for a in doc["alerts"]] == [crit.alert_id, old.alert_id]  # newest first, once
        assert doc["counts_by_severity"]["critical"] == 1
        only = get(svc.url + "api/alerts?severity=critical").json()["alerts"]
        assert [a["alert_id"] for a in only] == [crit.alert_id]
        bad = get(svc.url + "api/alerts?severity=urgent")
        assert bad.status == 400 and "unknown severity" in bad.json()["error"]

        detail = get(svc.url + f"api/clients/{client}").json()
        assert detail["client_software_name"] == "apache-kafka-java"
        assert [(c["key"], c.get("value")) for c in detail["configs"]] == [("acks", "all"), ("linger.ms", "20")]
        assert [a["alert_id"] for a in detail["alerts"]] == [crit.alert_id]
        assert get(svc.url + "api/clients/no-such-client").status == 404
        assert [c["client_instance_id"] for c in get(svc.url + "api/clients").json()["clients"]] == [client]

        samples = metric_samples(get(svc.url + "metrics").text)
        key = ("configwatch_alerts_total", (("kind", "sensitive_leak"), ("rule", "leak-password"),
                                            ("severity", "critical")))
        assert samples[key] == 1.0

        # Live events: a new gauge and a new alert arrive on /events without any reload.
        fresh = finding("medium", rule="anomaly-acks")

        def saw_both(events: list[tuple[str, str]]) -> bool:
            if len(events) == 3:  # hello, gauges, health: the stream is open; now produce
                produce(kafka_bootstrap, topics.gauges, [gauge_record("franz-go", "1.18.0", 9, 9)])
                produce(kafka_bootstrap, topics.alerts, [(fresh.alert_id.encode(), fresh.to_json().encode())])
            names = [e for e in events[3:]]
            return any(n == "gauges" and "franz-go/1.18.0" in d for n, d in names) and \
                any(n == "alert" and fresh.alert_id in d for n, d in names)

        events, _raw = read_sse(svc.url + "events", saw_both)
        assert [e[0] for e in events[:3]] == ["hello", "gauges", "health"]


def test_malformed_records_are_counted_and_skipped(kafka_bootstrap: str, topic_name) -> None:
    topics = _topics(topic_name)
    create_topics(kafka_bootstrap, topics)
    produce(kafka_bootstrap, topics.gauges, [
        (b"apache-kafka-java/3.9.1", b"not json"),
        (b"apache-kafka-java/3.9.1", b'{"client_software_name": "x"}'),
        (b"wrong/key", gauge_record("librdkafka", "2.6.1", 1, 1)[1]),
        gauge_record("librdkafka", "2.6.1", 5, 2),
    ])
    produce(kafka_bootstrap, topics.alerts, [(b"a", b"{}"), (b"b", b"[1,2]")])
    produce(kafka_bootstrap, topics.configs, [(b"c", b'{"event": "config_push"}')])
    with dashboard(kafka_bootstrap, topics) as svc:
        assert svc.wait_ready(60)

        def counted() -> dict | None:
            samples = metric_samples(get(svc.url + "metrics").text)
            inv = {dict(lb)["role"]: v for (n, lb), v in samples.items()
                   if n == "configwatch_dashboard_records_total" and dict(lb)["outcome"] == "invalid"}
            return samples if inv == {"gauges": 3.0, "alerts": 2.0, "configs": 1.0} else None

        samples = eventually(counted, timeout_s=30, message="invalid records counted")
        assert _series(samples, CONN) == {"librdkafka/2.6.1": 5.0}
        assert get(svc.url + "healthz").status == 200


def test_topics_created_after_startup_are_followed(kafka_bootstrap: str, topic_name) -> None:
    topics = _topics(topic_name)
    with dashboard(kafka_bootstrap, topics) as svc:
        assert svc.wait_ready(30), "a missing gauges topic means an empty, ready state"
        assert get(svc.url + "api/gauges").json()["gauges"] == []
        create_topics(kafka_bootstrap, topics)
        produce(kafka_bootstrap, topics.gauges, [gauge_record("sarama", "1.45.0", 2, 2)])
        eventually(lambda: _series(metric_samples(get(svc.url + "metrics").text), CONN) == {"sarama/1.45.0": 2.0},
                   timeout_s=30, message="gauge from a topic created later")


def test_token_guards_every_data_route(kafka_bootstrap: str, topic_name) -> None:
    from configwatch.secrets import SecretStr

    topics = _topics(topic_name)
    with dashboard(kafka_bootstrap, topics, token=SecretStr("s3cret-token")) as svc:
        for path in ("", "metrics", "api/gauges", "api/alerts", "api/clients", "events"):
            res = get(svc.url + path)
            assert res.status == 401, path
            assert res.headers["www-authenticate"].startswith("Bearer")
            assert get(svc.url + path, token="wrong").status == 401, path
        assert "bearer token" in get(svc.url).text  # the sign-in page, no data
        assert get(svc.url + "api/gauges", token="s3cret-token").status == 200
        assert get(svc.url + "metrics", token="s3cret-token").status == 200
        login = get(svc.url + "login", method="POST", body=b"token=s3cret-token",
                    headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert login.status == 303
        cookie = login.headers["set-cookie"].split(";", 1)[0]
        assert "s3cret-token" not in cookie and "HttpOnly" in login.headers["set-cookie"]
        assert get(svc.url + "api/gauges", headers={"Cookie": cookie}).status == 200
        assert get(svc.url + "healthz").status in (200, 503)  # readiness needs no token
    # Without a token, a loopback-bound dashboard refuses foreign Host names (DNS rebinding).
    with dashboard(kafka_bootstrap, topics) as svc:
        assert get(svc.url + "api/gauges", headers={"Host": "evil.example:80"}).status == 403
        assert get(svc.url + "api/gauges", headers={"Host": "localhost"}).status == 200

"""A secret planted in pushed configs never leaves the dashboard: not in the page or its assets,
the JSON API, /metrics, the live event stream, the logs, or the state it keeps. Where an operator
needs to correlate, the fingerprint is shown instead (so the test would see the value if it leaked).
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

import pytest

from configwatch.records import ConfigEntry
from configwatch.secrets import fingerprint
from sinks.dashboard import Topics
from tests.conftest import eventually
from tests.dashboard_helpers import (
    TEST_KEY,
    config_push,
    create_topics,
    dashboard,
    finding,
    gauge_record,
    get,
    read_sse,
)
from tests.kafka_helpers import produce

pytestmark = pytest.mark.kafka


def _with_client_id(record: tuple[bytes, bytes], client_id: str) -> tuple[bytes, bytes]:
    event = json.loads(record[1])
    event["client_id"] = client_id
    return record[0], json.dumps(event).encode()


def test_planted_secret_never_appears_in_any_dashboard_response(
        kafka_bootstrap: str, topic_name: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="sinks.dashboard")
    secret = "planted-" + uuid.uuid4().hex
    topics = Topics(gauges=topic_name("gauges"), alerts=topic_name("alerts"), configs=topic_name("configs"))
    create_topics(kafka_bootstrap, topics)
    first, second, third = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    jaas = f'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="{secret}";'
    pushes = [
        config_push(first, [
            ConfigEntry("acks", "all", "STRING", True),
            ConfigEntry("sasl.jaas.config", jaas, "PASSWORD", False),      # type and prefix rules
            ConfigEntry("ssl.keystore.password", secret, "STRING", False),  # prefix rule, mistyped as STRING
            ConfigEntry("producer.ssl.key.password", secret, "STRING", False),  # infix rule
            ConfigEntry("basic.auth.user.info", secret, "PASSWORD", False),     # type rule
            ConfigEntry("orders.db.password", secret, "STRING", False),         # its name says password
            ConfigEntry("bootstrap.servers", f"SASL_SSL://orders:{secret}@kafka-1:9093", "LIST", False),  # in value
            ConfigEntry(f"token={secret}", "1", "STRING", False),              # a secret as the key name
        ]),
        _with_client_id(config_push(third, [ConfigEntry("acks", "1", "STRING", False)]), f"svc password={secret}"),
        # A record that breaks the contract (no timestamp) but carries the secret: skipped, never echoed.
        (b"bad", ('{"schema_version":1,"event":"config_push","configs":[{"key":"sasl.jaas.config","value":"'
                  + secret + '","type":"PASSWORD","is_default":false}]}').encode()),
        (b"worse", b'{"event": "config_push", "not json ' + secret.encode()),
    ]
    produce(kafka_bootstrap, topics.configs, pushes)
    produce(kafka_bootstrap, topics.gauges, [gauge_record("apache-kafka-java", "3.9.1", 2, 2)])
    alert = finding("critical", kind="sensitive_leak", rule="kip-sensitive-type", client_instance_id=first,
                    keys=("sasl.jaas.config",))
    produce(kafka_bootstrap, topics.alerts, [(alert.alert_id.encode(), alert.to_json().encode())])

    with dashboard(kafka_bootstrap, topics) as svc:
        url = svc.url
        eventually(lambda: all(get(url + f"api/clients/{c}").status == 200 for c in (first, third)),
                   timeout_s=30, message="pushes consumed")

        # The live stream: open it, then push the secret again from a second client.
        def pushed_live(events: list[tuple[str, str]]) -> bool:
            if len(events) == 3:
                produce(kafka_bootstrap, topics.configs, [config_push(second, [
                    ConfigEntry("sasl.jaas.config", jaas, "PASSWORD", False)])])
            return any(name == "clients" and second in data for name, data in events)

        _events, stream = read_sse(url + "events", pushed_live)

        responses = {"events": stream}
        for path in ("", "static/app.js", "static/dom.js", "static/chart.js", "metrics", "api/gauges",
                     "api/alerts", "api/alerts?severity=critical", "api/clients", f"api/clients/{first}",
                     f"api/clients/{second}", f"api/clients/{third}", "api/health"):
            res = get(url + path)
            assert res.status == 200, path
            responses[path] = res.text

        for where, text in responses.items():
            assert secret not in text, f"the planted secret leaked through {where}"
        assert secret not in caplog.text, "the planted secret leaked into the logs"
        for ident in (first, second, third):
            view = svc.state.clients.get(ident)
            assert view is not None and secret not in repr(view), "the kept state holds the raw value"

        # What is shown instead: fingerprints under the deployment key, and the rule that hid each value.
        detail = get(url + f"api/clients/{first}").json()
        hidden = {c["key"]: (c["fingerprint"], c["reason"]) for c in detail["configs"] if c["sensitive"]}
        assert hidden == {
            "sasl.jaas.config": (fingerprint(jaas, TEST_KEY), "kip-sensitive-type"),
            "ssl.keystore.password": (fingerprint(secret, TEST_KEY), "kip-sensitive-prefix"),
            "producer.ssl.key.password": (fingerprint(secret, TEST_KEY), "kip-sensitive-infix"),
            "basic.auth.user.info": (fingerprint(secret, TEST_KEY), "kip-sensitive-type"),
            "orders.db.password": (fingerprint(secret, TEST_KEY), "sensitive-key-name"),
            "bootstrap.servers": (fingerprint(f"SASL_SSL://orders:{secret}@kafka-1:9093", TEST_KEY),
                                  "secret-url-credentials"),
            f"redacted:{fingerprint(f'token={secret}', TEST_KEY)}": (fingerprint("1", TEST_KEY),
                                                                     "secret-password-fragment"),
        }
        assert all("value" not in c for c in detail["configs"] if c["sensitive"])
        assert [c["value"] for c in detail["configs"] if c["key"] == "acks"] == ["all"]
        assert get(url + f"api/clients/{third}").json()["client_id"].startswith("redacted:")
        invalid = get(url + "api/health").json()
        assert {t["role"]: t["records"]["invalid"] for t in invalid["topics"]}["configs"] == 2

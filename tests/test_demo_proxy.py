"""The demo's real clients: kafka-python through the gateway in proxy mode over mutual TLS, one held to TLS 1.1."""

from __future__ import annotations

import logging
from typing import Any

import kafka
import pytest

from cli.demo_proxy import ProxiedProducer
from configwatch.contract import CONNECTION_CLOSED, CONNECTION_OPENED
from tests.conftest import eventually
from tests.gateway_helpers import create_topic, gateway_settings, read_events
from tests.kafka_helpers import read_all

pytestmark = pytest.mark.kafka


def test_the_demos_real_producer_reaches_the_broker_through_the_proxy(kafka_bootstrap: str, topic_name: Any,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="kafka")
    events, traffic = topic_name("events"), topic_name("traffic")  # traffic not created here: start() creates it
    create_topic(kafka_bootstrap, events)
    real = ProxiedProducer(gateway_settings(events), kafka_bootstrap, topic=traffic)
    try:
        proxy = real.start()
        assert proxy != kafka_bootstrap
        eventually(lambda: real.sent >= 4 or None, timeout_s=30, message="the producers keep sending")
    finally:
        real.stop()
    values = [v for _k, v, _p, _o in read_all(kafka_bootstrap, traffic)]
    assert b"hello through the gateway" in values and len(values) >= 3
    # auto-creation on the first send would have logged kafka-python's "Topic ... not found" ERROR
    assert not [r.getMessage() for r in caplog.records if r.name.startswith("kafka") and r.levelno >= logging.ERROR]
    published = [e for _k, e in read_events(kafka_bootstrap, events)]
    opened = [e for e in published if e.event == CONNECTION_OPENED]
    assert opened and {(e.client_software_name, e.client_software_version, e.client_id) for e in opened} == {
        ("kafka-python", kafka.__version__, "demo-real-producer"),
        ("kafka-python", kafka.__version__, "demo-legacy-producer")}
    assert {(e.client_id, e.security_protocol, e.tls_version, e.client_certificate, e.principal) for e in opened} == {
        ("demo-real-producer", "SSL", "TLSv1.3", True, "User:CN=demo-real-producer,OU=demo,O=configwatch"),
        ("demo-legacy-producer", "SSL", "TLSv1.1", True, "User:CN=demo-legacy-producer,OU=demo,O=configwatch")}
    assert real.software == f"kafka-python/{kafka.__version__}"
    closed = {e.connection_id for e in published if e.event == CONNECTION_CLOSED}
    assert closed == {e.connection_id for e in opened}

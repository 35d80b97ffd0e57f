"""Security posture end to end: real clients -> secured gateways -> events -> job -> ``report security``.

A kafka-python producer authenticates with SASL/PLAIN over SASL_PLAINTEXT, another, held
to TLS 1.1 by its own SSL context, presents a client certificate to a gateway that allows
TLS 1.1 so such clients show, and a third connects over PLAINTEXT to a gateway told that
TLS is offered elsewhere (``--gateway-tls-offered-at``). The streaming job turns their
``connection_opened`` events into ``security_posture`` findings; ``configwatch report
security`` lists all three, per software name, version and principal, the PLAIN one
critical, and so does the dashboard.
A third, over SASL_SSL with SCRAM, stays connected while the job runs: its gauge counts its
connections under ``SASL_SSL/SCRAM-SHA-512``, and so does the dashboard's ``/metrics``.
The PLAIN password crossed the gateway: no input event, output, log line or dashboard page
holds it.
"""

from __future__ import annotations

import json
import logging
import ssl
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import kafka
import pytest
from kafka import KafkaProducer

from cli.main import main
from configwatch.contract import CONNECTION_CLOSED, CONNECTION_OPENED
from configwatch.records import Gauge
from configwatch.settings import Settings
from policy.gateway import running_gateway
from sinks.dashboard import Topics
from streaming.job import JobOptions, StreamingJob
from tests.conftest import eventually
from tests.dashboard_helpers import dashboard, get
from tests.gateway_helpers import create_topic, gateway_settings, read_events
from tests.kafka_helpers import read_all
from tests.security_helpers import SecureBroker

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def _tls11_client(broker: SecureBroker) -> ssl.SSLContext:
    """A client context that speaks TLS 1.1 only (a client-side setting, as an old runtime's)."""
    ctx = ssl.create_default_context(cafile=str(broker.ca_file))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_1
    ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    pem = broker.client_pem()
    ctx.load_cert_chain(str(pem.cert), str(pem.key))
    return ctx


@contextmanager
def _connected_through(broker: SecureBroker, events: str, data: str, protocol: str, client_id: str,
                       gateway: dict[str, Any] | None = None, **client: Any) -> Iterator[None]:
    """A producer that sent one record through a gateway speaking ``protocol``, connected for the block."""
    settings = gateway_settings(events, **broker.gateway_settings(protocol),
                                gateway_ssl_enabled_protocols="TLSv1.1,TLSv1.2,TLSv1.3", **(gateway or {}))
    with running_gateway(settings, broker.info.bootstrap_servers) as gw:
        producer = KafkaProducer(bootstrap_servers=gw.bootstrap, client_id=client_id, **client)
        try:
            producer.send(data, value=client_id.encode()).get(timeout=60)
            yield
        finally:
            producer.close()


def _produce_through(broker: SecureBroker, events: str, data: str, protocol: str, client_id: str,
                     gateway: dict[str, Any] | None = None, **client: Any) -> None:
    with _connected_through(broker, events, data, protocol, client_id, gateway, **client):
        pass


def test_the_report_lists_plain_over_plaintext_and_tls_1_1(kafka_broker: SecureBroker, kafka_bootstrap: str,
                                                           spark: Any, topic_name: Any, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str],
                                                           caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="policy")  # the gateway's own log, every level
    caplog.set_level(logging.DEBUG, logger="streaming")
    events, data, alerts = topic_name("events"), topic_name("data"), topic_name("alerts")
    create_topic(kafka_bootstrap, events)
    _produce_through(kafka_broker, events, data, "SASL_PLAINTEXT", "posture-plain",
                     **kafka_broker.kafka_python("SASL_PLAINTEXT"))
    _produce_through(kafka_broker, events, data, "SSL", "posture-tls11", security_protocol="SSL",
                     ssl_context=_tls11_client(kafka_broker))
    tls_at = kafka_broker.info.bootstrap_for("SASL_SSL")
    _produce_through(kafka_broker, events, data, "PLAINTEXT", "posture-plaintext", {"gateway_tls_offered_at": tls_at})

    def closed() -> bool | None:
        ids = {e.client_id for _k, e in read_events(kafka_bootstrap, events) if e.event == CONNECTION_CLOSED}
        return {"posture-plain", "posture-tls11", "posture-plaintext"} <= ids or None

    eventually(closed, timeout_s=60, message="both clients' connection_closed events")
    tls = {e.tls_version for _k, e in read_events(kafka_bootstrap, events) if e.client_id == "posture-tls11"}
    assert tls == {"TLSv1.1"}

    topics = {"input": events, "alerts": alerts, "quarantine": topic_name("quarantine"),
              "gauges": topic_name("gauges"), "usage": topic_name("usage")}
    settings = Settings(checkpoint_dir=tmp_path / "ckpt", input_topic=events, sink="kafka", trigger="available-now",
                        alerts_topic=alerts, quarantine_topic=topics["quarantine"], gauges_topic=topics["gauges"],
                        usage_topic=topics["usage"])
    with _connected_through(kafka_broker, events, data, "SASL_SSL", "posture-scram",
                            **kafka_broker.kafka_python("SASL_SSL")):
        eventually(lambda: any(e.client_id == "posture-scram" and e.event == CONNECTION_OPENED
                               for _k, e in read_events(kafka_bootstrap, events)) or None,
                   timeout_s=60, message="the SCRAM client's connection_opened")
        job = StreamingJob(settings, JobOptions.from_settings(settings), kafka_bootstrap, out=lambda _line: None)
        job.start()
        job.wait()

    # The connected client's gauge: its connections (bootstrap and broker) under their posture.
    gauges = {k: v for k, v, _p, _o in read_all(kafka_bootstrap, topics["gauges"])}
    scram = Gauge.from_json(gauges[f"kafka-python/{kafka.__version__}".encode()])
    assert scram.connections >= 1
    assert scram.connections_by_security == {"SASL_SSL/SCRAM-SHA-512": scram.connections}

    capsys.readouterr()
    argv = ["report", "security", "--bootstrap-servers", kafka_bootstrap, "--alerts-topic", alerts]
    assert main([*argv, "--json"]) == 0
    rows = {(r["rule"], r["principal"]): r for r in json.loads(capsys.readouterr().out)}
    assert set(rows) == {("posture-plain-over-plaintext", "User:alice"),
                         ("posture-weak-tls", "User:CN=carol,OU=apps,O=configwatch"),
                         ("posture-plaintext-tls-offered", "User:ANONYMOUS")}
    plaintext = rows[("posture-plaintext-tls-offered", "User:ANONYMOUS")]
    assert plaintext["severity"] == "low" and plaintext["evidence"]["tls_offered_at"] == tls_at
    plain = rows[("posture-plain-over-plaintext", "User:alice")]
    assert (plain["severity"], plain["client_software_name"], plain["client_software_version"]) == (
        "critical", "kafka-python", kafka.__version__)
    assert plain["connections"] >= 1 and plain["clients"] == 1
    weak = rows[("posture-weak-tls", "User:CN=carol,OU=apps,O=configwatch")]
    assert weak["severity"] == "high" and weak["evidence"]["tls_version"] == "TLSv1.1"
    assert main([*argv, "--fail-if-not-ready"]) == 3
    table = capsys.readouterr().out
    assert table.splitlines()[0].startswith("Security posture through the gateway: 3 weak posture(s)")
    assert "posture-plain-over-plaintext" in table and "User:alice" in table

    # The dashboard shows the same rows; nothing anywhere holds the password that crossed the gateway.
    pages = []
    with dashboard(kafka_bootstrap, Topics(gauges=topics["gauges"], alerts=alerts, configs=events,
                                           usage=topics["usage"])) as svc:
        assert svc.wait_ready(60)
        security = eventually(lambda: get(f"{svc.url}api/security").text if json.loads(
            get(f"{svc.url}api/security").text)["weak"] == 3 else None, timeout_s=30, message="the posture rows")
        pages = [security, *(get(f"{svc.url}{path}").text for path in ("", "api/alerts", "api/gauges", "metrics"))]
        series = (f'configwatch_client_connections_by_security{{client_software_name="kafka-python",'
                  f'client_software_version="{kafka.__version__}",sasl_mechanism="SCRAM-SHA-512",'
                  f'security_protocol="SASL_SSL"}} {float(scram.connections)}')
        assert series in pages[-1]
    password = kafka_broker.password.encode()
    for name, topic in topics.items():
        raw = b"".join((k or b"") + (v or b"") for k, v, _p, _o in read_all(kafka_bootstrap, topic))
        assert password not in raw, name
    assert kafka_broker.password not in caplog.text
    assert all(kafka_broker.password not in page for page in pages)

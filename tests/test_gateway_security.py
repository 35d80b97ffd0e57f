"""The gateway before a secured cluster: TLS on both hops, SASL passed through, the principal and posture.

The run's broker serves SASL_SSL (SCRAM-SHA-512), SSL (client certificates required) and
SASL_PLAINTEXT (PLAIN) beside PLAINTEXT (``tests.security_helpers``). Real clients nobody
here wrote (kafka-python, confluent-kafka, kafka-clients 3.9.0 and 4.3.1) get only the
gateway's address and the same protocol; each creates a topic, produces, consumes in a
group and commits. Every case checks the records on the broker and that the gateway's
events name the client's software, its principal, the protocol, the TLS version and the
SASL mechanism. A wrong password gets the broker's own error; no password reaches the
events, the gateway's log or its metrics.
"""

from __future__ import annotations

import json
import logging
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import confluent_kafka
import kafka
import pytest
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin import NewTopic as ConfluentNewTopic
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic

from configwatch import jars
from configwatch.contract import CONNECTION_CLOSED, CONNECTION_OPENED
from configwatch.records import Event
from policy.gateway import GatewayHandle
from tests.client_roundtrips import consume_and_commit_kafka_python, consume_and_commit_librdkafka
from tests.conftest import eventually
from tests.gateway_helpers import gateway, metric, read_events
from tests.kafka_helpers import read_all
from tests.security_helpers import MECHANISM, REAUTH_MS, SecureBroker

pytestmark = pytest.mark.kafka

PROTOCOLS = ("SASL_SSL", "SSL", "SASL_PLAINTEXT")
COUNT = 30
PRINCIPAL = {"SASL_SSL": "User:alice", "SASL_PLAINTEXT": "User:alice", "SSL": "User:CN=carol,OU=apps,O=configwatch"}
SASL_METRIC = "configwatch_gateway_sasl_authentications_total"
SECURITY_GAUGE = "configwatch_gateway_client_security_connections"


@contextmanager
def secured(broker: SecureBroker, events_topic: str, protocol: str) -> Iterator[GatewayHandle]:
    """A gateway speaking ``protocol`` to clients, in front of the broker's listener speaking it."""
    with gateway(broker.info.bootstrap_servers, events_topic, **broker.gateway_settings(protocol)) as gw:
        yield gw


def _values() -> list[str]:
    return [f"v{i}" for i in range(COUNT)]


def _assert_on_broker(bootstrap: str, topic: str) -> None:
    assert sorted(v.decode() for _k, v, _p, _o in read_all(bootstrap, topic) if v is not None) == sorted(_values())


def _assert_posture(bootstrap: str, events_topic: str, protocol: str, name: str, version: str) -> None:
    """Every connection opened and closed, each naming the client, its principal and its posture."""
    def complete() -> list[Event] | None:
        events = [e for _k, e in read_events(bootstrap, events_topic)]
        opened = {e.connection_id for e in events if e.event == CONNECTION_OPENED}
        closed = {e.connection_id for e in events if e.event == CONNECTION_CLOSED}
        return events if opened and opened == closed else None

    events = eventually(complete, timeout_s=30, message="a connection_closed for every connection_opened")
    tls = protocol in ("SSL", "SASL_SSL")
    assert {(e.client_software_name, e.client_software_version) for e in events} == {(name, version)}
    assert {e.principal for e in events} == {PRINCIPAL[protocol]}
    assert {e.security_protocol for e in events} == {protocol}
    assert {e.listener for e in events} == {protocol}
    assert {e.sasl_mechanism for e in events} == {MECHANISM[protocol]}
    assert {e.tls_version for e in events} <= ({"TLSv1.2", "TLSv1.3"} if tls else {None})
    assert all(e.tls_cipher for e in events) if tls else {e.tls_cipher for e in events} == {None}
    assert {e.client_certificate for e in events} == ({protocol == "SSL"} if tls else {None})


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_kafka_python_through_a_secured_gateway(kafka_broker: SecureBroker, kafka_bootstrap: str,
                                                topic_name: Any, protocol: str) -> None:
    events_topic, topic, group = topic_name("events"), topic_name("kp-sec"), topic_name("kp-sec-group")
    with secured(kafka_broker, events_topic, protocol) as gw:
        common = {"bootstrap_servers": gw.bootstrap, "client_id": "sec-kp", **kafka_broker.kafka_python(protocol)}
        admin = KafkaAdminClient(**common)
        admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])
        admin.close()
        producer = KafkaProducer(acks="all", **common)
        for f in [producer.send(topic, value=v.encode()) for v in _values()]:
            f.get(timeout=30)
        labels = {"client_software_name": "kafka-python", "client_software_version": kafka.__version__,
                  "security_protocol": protocol, "sasl_mechanism": MECHANISM[protocol] or "none",
                  "tls_version": "TLSv1.3" if protocol in ("SSL", "SASL_SSL") else "none"}
        eventually(lambda: metric(gw, SECURITY_GAUGE, **labels) >= 1 or None, timeout_s=10,
                   message="the producer's connection under its posture on /metrics")
        producer.close()
        received, committed = consume_and_commit_kafka_python(topic, group, COUNT, 3, **common)
    assert sorted(received) == sorted(_values())
    assert committed == COUNT
    _assert_on_broker(kafka_bootstrap, topic)
    _assert_posture(kafka_bootstrap, events_topic, protocol, "kafka-python", kafka.__version__)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_confluent_kafka_through_a_secured_gateway(kafka_broker: SecureBroker, kafka_bootstrap: str,
                                                   topic_name: Any, protocol: str) -> None:
    events_topic, topic, group = topic_name("events"), topic_name("ck-sec"), topic_name("ck-sec-group")
    with secured(kafka_broker, events_topic, protocol) as gw:
        common = {"bootstrap.servers": gw.bootstrap, "client.id": "sec-ck", **kafka_broker.librdkafka(protocol)}
        admin = AdminClient(common)
        for future in admin.create_topics([ConfluentNewTopic(topic, 3, 1)]).values():
            future.result(30)
        producer = confluent_kafka.Producer({**common, "acks": "all"})
        for v in _values():
            producer.produce(topic, value=v)
        assert producer.flush(30) == 0
        received, committed_offsets = consume_and_commit_librdkafka(topic, group, COUNT, 3, common)
        del producer, admin  # librdkafka closes their connections when they are destroyed
    assert sorted(received) == sorted(_values())
    assert committed_offsets == COUNT
    _assert_on_broker(kafka_bootstrap, topic)
    version = f"{confluent_kafka.__version__}-rdkafka-{confluent_kafka.libversion()[0]}"
    _assert_posture(kafka_bootstrap, events_topic, protocol, "confluent-kafka-python", version)


@pytest.mark.parametrize("release", ("3.9.0", "4.3.1"))
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_java_client_through_a_secured_gateway(kafka_broker: SecureBroker, kafka_bootstrap: str, topic_name: Any,
                                               roundtrip_classes: Path, tmp_path: Path, protocol: str,
                                               release: str) -> None:
    events_topic, topic, group = topic_name("events"), topic_name("java-sec"), topic_name("java-sec-group")
    settings = tmp_path / "client.properties"
    settings.write_text("".join(f"{k}={v}\n" for k, v in kafka_broker.java(protocol).items()))
    classpath = ":".join([str(roundtrip_classes), *(str(p) for p in jars.client_jars(release))])
    with secured(kafka_broker, events_topic, protocol) as gw:
        proc = subprocess.run(["java", "-cp", classpath, "ProxyRoundTrip", gw.bootstrap, topic, group, str(COUNT),
                               str(settings)], capture_output=True, text=True, timeout=240, check=False)
        assert proc.returncode == 0, proc.stderr[-4000:]
    facts = json.loads(proc.stdout)
    assert facts["version"] == release
    assert sorted(facts["received"]) == sorted(_values())
    assert facts["committed"] == COUNT
    _assert_on_broker(kafka_bootstrap, topic)
    _assert_posture(kafka_bootstrap, events_topic, protocol, "apache-kafka-java", release)


def test_a_wrong_password_gets_the_brokers_error_and_no_secret_travels(
        kafka_broker: SecureBroker, kafka_bootstrap: str, topic_name: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="policy")  # the gateway's own log, every level
    events_topic, topic = topic_name("events"), topic_name("wrong-pw")
    wrong = "planted-wrong-password-5f1c9a"
    errors: list[confluent_kafka.KafkaError] = []
    with secured(kafka_broker, events_topic, "SASL_SSL") as gw:
        bad = confluent_kafka.Producer({"bootstrap.servers": gw.bootstrap, "client.id": "sec-wrong",
                                        **kafka_broker.librdkafka("SASL_SSL", password=wrong),
                                        "error_cb": errors.append})
        bad.produce(topic, value=b"never")

        def refused() -> list[confluent_kafka.KafkaError]:
            bad.poll(0.2)  # serves the error callback
            return [e for e in errors if e.code() == confluent_kafka.KafkaError._AUTHENTICATION]

        auth_errors = eventually(refused, timeout_s=30, message="the broker's authentication error at the client")
        failed = eventually(lambda: metric(gw, SASL_METRIC, mechanism="SCRAM-SHA-512", outcome="failed"),
                            timeout_s=10, message="the failed exchange counted")
        good = KafkaProducer(bootstrap_servers=gw.bootstrap, client_id="sec-good", **kafka_broker.kafka_python(
            "SASL_SSL"))
        good.send(topic, value=b"once").get(timeout=30)
        good.close()
        ok = metric(gw, SASL_METRIC, mechanism="SCRAM-SHA-512", outcome="ok")
        page = _metrics_page(gw)
    assert "SCRAM" in auth_errors[0].str()  # the broker's message, as the broker wrote it
    assert failed >= 1 and ok >= 1
    events = [e for _k, e in read_events(kafka_bootstrap, events_topic)]
    assert {e.client_id for e in events} == {"sec-good"}  # the refused connection never opened
    raw = b"".join(v or b"" for _k, v, _p, _o in read_all(kafka_bootstrap, events_topic))
    for secret in (wrong, kafka_broker.password):
        assert secret.encode() not in raw
        assert secret not in caplog.text
        assert secret not in page


def _metrics_page(gw: GatewayHandle) -> str:
    import urllib.request

    assert gw.metrics_port is not None
    return str(urllib.request.urlopen(f"http://{gw.address[0]}:{gw.metrics_port}/metrics", timeout=10).read()
               .decode())


def test_kip_368_reauthentication_passes_through_on_the_same_connections(
        kafka_broker: SecureBroker, kafka_bootstrap: str, topic_name: Any) -> None:
    """The broker limits SCRAM sessions on its SASL_PLAINTEXT listener (``REAUTH_MS``): librdkafka
    re-authenticates on its open connections, through the gateway, and keeps producing."""
    events_topic, topic = topic_name("events"), topic_name("reauth")
    settings = {**kafka_broker.librdkafka("SASL_PLAINTEXT"), "sasl.mechanism": "SCRAM-SHA-512"}
    delivered: list[str] = []
    errors: list[Any] = []
    with secured(kafka_broker, events_topic, "SASL_PLAINTEXT") as gw:
        producer = confluent_kafka.Producer({"bootstrap.servers": gw.bootstrap, "client.id": "sec-reauth",
                                             "acks": "all", **settings, "error_cb": errors.append})
        deadline = time.monotonic() + 3 * REAUTH_MS / 1000  # three sessions' worth of producing
        sent = 0
        while time.monotonic() < deadline:
            producer.produce(topic, value=f"r{sent}", on_delivery=lambda err, msg: delivered.append(
                msg.value().decode()) if err is None else errors.append(err))
            sent += 1
            producer.poll(0.2)
        assert producer.flush(30) == 0
        accepted = metric(gw, SASL_METRIC, mechanism="SCRAM-SHA-512", outcome="ok")
        del producer  # librdkafka closes its connections when it is destroyed
    events = [e for _k, e in read_events(kafka_bootstrap, events_topic) if e.client_id == "sec-reauth"]
    opened = {e.connection_id for e in events if e.event == CONNECTION_OPENED}
    assert not errors and len(delivered) == sent
    # Without re-authentication each exchange opens a connection; with it, connections authenticate again.
    assert accepted > len(opened) >= 1, (accepted, len(opened))
    assert {e.principal for e in events} == {"User:alice"}

"""Real clients nobody here wrote, through the gateway in proxy mode, against the real broker.

Each client (kafka-clients 3.9.0 and 4.3.1 from Maven, confluent-kafka, kafka-python)
gets only the gateway's bootstrap address. It creates a topic, produces, consumes
in a consumer group and commits; the tests check every record arrived (through
the client and on the broker itself), that the client was only ever told gateway
addresses, and that the gateway's events name the client's real software name
and version, with a ``connection_closed`` for every ``connection_opened``.
"""

from __future__ import annotations

import json
import subprocess
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

pytestmark = pytest.mark.kafka

COUNT = 60
JAVA_RELEASES = ("3.9.0", "4.3.1")
SOFTWARE_GAUGE = "configwatch_gateway_client_software_connections"


@contextmanager
def proxy(kafka_bootstrap: str, events_topic: str) -> Iterator[GatewayHandle]:
    """A gateway in front of the test broker, one free port per broker, events to ``events_topic``."""
    with gateway(kafka_bootstrap, events_topic, upstream=kafka_bootstrap, gateway_broker_port_base=0) as gw:
        yield gw


def _expected() -> list[str]:
    return [f"v{i}" for i in range(COUNT)]


def _gateway_addresses(gw: GatewayHandle) -> set[str]:
    assert gw.gateway.brokers is not None
    host = gw.address[0]
    return {f"{host}:{port}" for port in gw.gateway.brokers.ports.values()}


def _connection_events(kafka_bootstrap: str, events_topic: str) -> tuple[list[Event], list[Event]]:
    def complete() -> tuple[list[Event], list[Event]] | None:
        events = [e for _k, e in read_events(kafka_bootstrap, events_topic)]
        opened = [e for e in events if e.event == CONNECTION_OPENED]
        closed = [e for e in events if e.event == CONNECTION_CLOSED]
        ok = opened and {e.connection_id for e in opened} == {e.connection_id for e in closed}
        return (opened, closed) if ok else None

    return eventually(complete, timeout_s=30, message="a connection_closed for every connection_opened")


def _assert_identity(kafka_bootstrap: str, events_topic: str, gw_ports: set[int], name: str, version: str,
                     client_id: str) -> None:
    opened, closed = _connection_events(kafka_bootstrap, events_topic)
    assert {(e.client_software_name, e.client_software_version) for e in opened} == {(name, version)}
    assert {e.client_id for e in opened} == {client_id}
    assert len(closed) == len(opened)
    # Every connection after the bootstrap went to a broker listener of the gateway, none to the broker.
    local_ports = {int(e.connection_id.split("-")[0].rpartition(":")[2]) for e in opened if e.connection_id}
    assert local_ports & gw_ports, (local_ports, gw_ports)


def _assert_on_broker(kafka_bootstrap: str, topic: str) -> None:
    values = sorted(v.decode() for _k, v, _p, _o in read_all(kafka_bootstrap, topic) if v is not None)
    assert values == sorted(_expected())


def test_kafka_python_produces_consumes_and_commits_through_the_proxy(kafka_bootstrap: str, topic_name: Any) -> None:
    events_topic, topic, group = topic_name("events"), topic_name("kp-data"), topic_name("kp-group")
    with proxy(kafka_bootstrap, events_topic) as gw:
        admin = KafkaAdminClient(bootstrap_servers=gw.bootstrap, client_id="proxy-kp")
        admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])
        cluster = admin.describe_cluster()
        admin.close()
        producer = KafkaProducer(bootstrap_servers=gw.bootstrap, client_id="proxy-kp", acks="all",
                                 enable_idempotence=True)
        futures = [producer.send(topic, key=f"k{i}".encode(), value=v.encode()) for i, v in enumerate(_expected())]
        producer.flush()
        for f in futures:
            f.get(timeout=30)
        labels = {"client_software_name": "kafka-python", "client_software_version": kafka.__version__}
        eventually(lambda: metric(gw, SOFTWARE_GAUGE, **labels) >= 1 or None, timeout_s=10)
        producer.close()
        received, committed = consume_and_commit_kafka_python(topic, group, COUNT, 3, bootstrap_servers=gw.bootstrap,
                                                              client_id="proxy-kp")
        addresses = _gateway_addresses(gw)
        ports = set(gw.gateway.brokers.ports.values()) if gw.gateway.brokers else set()
    assert sorted(received) == sorted(_expected())
    assert committed == COUNT
    assert {f"{b['host']}:{b['port']}" for b in cluster["brokers"]} == addresses
    assert kafka.__version__ == "3.0.12"
    _assert_on_broker(kafka_bootstrap, topic)
    _assert_identity(kafka_bootstrap, events_topic, ports, "kafka-python", "3.0.12", "proxy-kp")


def test_confluent_kafka_produces_consumes_and_commits_through_the_proxy(kafka_bootstrap: str,
                                                                        topic_name: Any) -> None:
    events_topic, topic, group = topic_name("events"), topic_name("ck-data"), topic_name("ck-group")
    common = {"client.id": "proxy-ck"}
    with proxy(kafka_bootstrap, events_topic) as gw:
        common["bootstrap.servers"] = gw.bootstrap
        admin = AdminClient(common)
        for future in admin.create_topics([ConfluentNewTopic(topic, 3, 1)]).values():
            future.result(30)
        brokers = admin.list_topics(timeout=30).brokers
        producer = confluent_kafka.Producer({**common, "acks": "all", "enable.idempotence": True})
        delivered: list[str] = []
        for i, v in enumerate(_expected()):
            producer.produce(topic, key=f"k{i}", value=v,
                             on_delivery=lambda err, msg: delivered.append(msg.value().decode()) if err is None
                             else None)
        assert producer.flush(30) == 0
        received, committed_offsets = consume_and_commit_librdkafka(topic, group, COUNT, 3, common)
        del producer, admin  # librdkafka closes their connections when they are destroyed
        addresses = _gateway_addresses(gw)
        ports = set(gw.gateway.brokers.ports.values()) if gw.gateway.brokers else set()
    assert sorted(delivered) == sorted(_expected())
    assert sorted(received) == sorted(_expected())
    assert committed_offsets == COUNT
    assert {f"{b.host}:{b.port}" for b in brokers.values()} == addresses
    _assert_on_broker(kafka_bootstrap, topic)
    version = f"{confluent_kafka.__version__}-rdkafka-{confluent_kafka.libversion()[0]}"
    _assert_identity(kafka_bootstrap, events_topic, ports, "confluent-kafka-python", version, "proxy-ck")


@pytest.mark.parametrize("release", JAVA_RELEASES)
def test_java_client_produces_consumes_and_commits_through_the_proxy(kafka_bootstrap: str, topic_name: Any,
                                                                    roundtrip_classes: Path, release: str) -> None:
    events_topic, topic, group = topic_name("events"), topic_name("java-data"), topic_name("java-group")
    classpath = ":".join([str(roundtrip_classes), *(str(p) for p in jars.client_jars(release))])
    with proxy(kafka_bootstrap, events_topic) as gw:
        proc = subprocess.run(["java", "-cp", classpath, "ProxyRoundTrip", gw.bootstrap, topic, group, str(COUNT)],
                              capture_output=True, text=True, timeout=240, check=False)
        assert proc.returncode == 0, proc.stderr[-4000:]
        addresses = _gateway_addresses(gw)
        ports = set(gw.gateway.brokers.ports.values()) if gw.gateway.brokers else set()
    facts = json.loads(proc.stdout)
    assert facts["version"] == release
    assert sorted(facts["received"]) == sorted(_expected())
    assert facts["committed"] == COUNT
    assert set(facts["brokers"]) == addresses
    _assert_on_broker(kafka_bootstrap, topic)
    _assert_identity(kafka_bootstrap, events_topic, ports, "apache-kafka-java", release, "proxy-roundtrip-java")

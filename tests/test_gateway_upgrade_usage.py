"""What real clients send, recorded by the gateway in proxy mode, judged for a broker upgrade.

A current kafka-python producer and one pinned to the 0.10.1 protocol
(``api_version=(0, 10, 1)``: ApiVersions v0, Metadata v2, Produce v2) produce
through the gateway to the project's 4.x broker, which refuses Produce v2 by
closing the connection. Their ``connection_closed`` events carry the (API key,
version) pairs they sent, the refused one included (recorded before forwarding),
and readiness run on those events says: the old client is not ready for 4.0
(Produce v2 was removed), the current one is. A raw client that names itself
shows the refused request is recorded under its software name and version.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import kafka
import pytest
from kafka import KafkaProducer
from kafka.errors import KafkaError
from kafka.protocol.producer import ProduceRequest
from kafka.record import MemoryRecordsBuilder

from configwatch.contract import CONNECTION_CLOSED, CONNECTION_USAGE, UNKNOWN_SOFTWARE
from configwatch.records import Event
from policy.protocol import ApiVersionsRequest, encode_request
from tests.conftest import eventually
from tests.gateway_helpers import create_topic, gateway, raw_connect, read_events, recv_until_closed, roundtrip
from tests.kafka_helpers import read_all
from udfs.upgrade.readiness import check_readiness
from udfs.upgrade.releases import broker_releases
from udfs.upgrade.usage import usage_from_events

pytestmark = pytest.mark.kafka

PRODUCE, METADATA, API_VERSIONS = 0, 3, 18


def _proxy(kafka_bootstrap: str, events_topic: str) -> Any:
    return gateway(kafka_bootstrap, events_topic, upstream=kafka_bootstrap, gateway_broker_port_base=0)


def _closes(kafka_bootstrap: str, events_topic: str, done: Callable[[list[Event]], bool],
            message: str) -> list[Event]:
    """The topic's ``connection_closed`` events, once ``done`` says they are all there."""
    def ready() -> list[Event] | None:
        closed = [e for _k, e in read_events(kafka_bootstrap, events_topic) if e.event == CONNECTION_CLOSED]
        return closed if done(closed) else None

    return eventually(ready, timeout_s=60, message=message)


def _pairs(events: list[Event], client_id: str) -> set[tuple[int, int]]:
    return {p for e in events if e.client_id == client_id for p in e.request_versions or ()}


def test_old_and_current_kafka_python_usage_and_their_readiness_for_4_0(kafka_bootstrap: str,
                                                                        topic_name: Any) -> None:
    events_topic, data = topic_name("events"), topic_name("data")
    create_topic(kafka_bootstrap, data, partitions=1)
    with _proxy(kafka_bootstrap, events_topic) as gw:
        current = KafkaProducer(bootstrap_servers=gw.bootstrap, client_id="upgrade-current", acks="all")
        current.send(data, value=b"current").get(timeout=60)
        current.close()
        old = KafkaProducer(bootstrap_servers=gw.bootstrap, client_id="upgrade-old", api_version=(0, 10, 1),
                            enable_idempotence=False, acks=1, request_timeout_ms=1000, delivery_timeout_ms=3000)
        try:
            refused = old.send(data, value=b"old")  # the broker closes on Produce v2; the producer retries
            _closes(kafka_bootstrap, events_topic, lambda closed: (PRODUCE, 2) in _pairs(closed, "upgrade-old"),
                    "a connection_closed of the old client carrying Produce v2")
            with pytest.raises(KafkaError):
                refused.get(timeout=60)  # expires after delivery_timeout_ms: it never reaches the broker
        finally:
            old.close()
    closed = _closes(kafka_bootstrap, events_topic, lambda c: {"upgrade-current", "upgrade-old"} <= {
        e.client_id for e in c}, "both clients' closes")

    now = _pairs(closed, "upgrade-current")
    assert {k for k, _v in now} >= {PRODUCE, METADATA, API_VERSIONS}
    assert all(v >= 3 for k, v in now if k == PRODUCE), now
    assert any(v >= 3 for k, v in now if k == API_VERSIONS), now  # KIP-511 ApiVersions, as the client sent it
    assert {(e.client_software_name, e.client_software_version) for e in closed
            if e.client_id == "upgrade-current"} == {("kafka-python", kafka.__version__)}
    then = _pairs(closed, "upgrade-old")
    assert {(PRODUCE, 2), (METADATA, 2), (API_VERSIONS, 0)} <= then, then
    assert all(e.client_software_name is None for e in closed if e.client_id == "upgrade-old")  # ApiVersions v0
    assert [v for _k, v, _p, _o in read_all(kafka_bootstrap, data)] == [b"current"]  # the old one never got in

    usage = usage_from_events(closed)
    for target in ("4.0", broker_releases()[-1]):
        verdicts = {(c.client_software_name, c.client_software_version): c
                    for c in check_readiness(usage, target).clients}
        assert verdicts[("kafka-python", kafka.__version__)].status == "ready", target
        old_verdict = verdicts[(UNKNOWN_SOFTWARE, UNKNOWN_SOFTWARE)]
        assert old_verdict.status == "not_ready", target
        assert ("Produce", 2, "removed") in {(r.api_name, r.version, r.why) for r in old_verdict.offending}
        assert old_verdict.connections >= 2  # the bootstrap connection and the refused one(s)
    assert check_readiness(usage, "3.9").not_ready == ()  # 3.9 still serves Produce v2 (deprecated)


def _produce_v2(topic: str) -> Any:
    builder = MemoryRecordsBuilder(magic=1, compression_type=0, batch_size=1024)
    builder.append(timestamp=None, key=b"k", value=b"v2", headers=[])
    builder.close()
    data = ProduceRequest.TopicProduceData(name=topic, partition_data=[
        ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=builder.buffer())])
    return ProduceRequest(transactional_id=None, acks=1, timeout_ms=5000, topic_data=[data])


def test_a_request_the_broker_refuses_is_recorded_under_the_clients_name(kafka_bootstrap: str,
                                                                         topic_name: Any) -> None:
    events_topic, data = topic_name("events"), topic_name("data")
    create_topic(kafka_bootstrap, data, partitions=1)
    hello = ApiVersionsRequest(client_software_name="legacy-app", client_software_version="0.10.1",
                               client_instance_id=uuid.uuid4())
    with _proxy(kafka_bootstrap, events_topic) as gw, raw_connect(gw.address) as sock:
        assert roundtrip(sock, hello, 5, 1, client_id="legacy") is not None  # forwarded upstream as v4
        sock.sendall(encode_request(_produce_v2(data), 2, 2, "legacy"))
        assert recv_until_closed(sock) == b""  # the 4.x broker closes: Produce v2 was removed in 4.0
        closed = _closes(kafka_bootstrap, events_topic, lambda c: len(c) == 1, "the legacy connection's close")
    (event,) = closed
    assert (event.client_software_name, event.client_software_version) == ("legacy-app", "0.10.1")
    assert event.request_versions == ((PRODUCE, 2), (API_VERSIONS, 5))  # ApiVersions at the client's version
    assert event.request_versions_overflow is None
    (verdict,) = check_readiness(usage_from_events(closed), "4.0").clients
    assert (verdict.status, [(r.api_name, r.version) for r in verdict.offending]) == ("not_ready", [("Produce", 2)])
    assert verdict.client_instance_ids == (event.client_instance_id,)


def test_a_connection_that_stays_open_reports_its_new_request_versions_periodically(kafka_bootstrap: str,
                                                                                    topic_name: Any) -> None:
    events_topic, data = topic_name("events"), topic_name("long-lived")
    create_topic(kafka_bootstrap, data, partitions=1)
    with gateway(kafka_bootstrap, events_topic, upstream=kafka_bootstrap, gateway_broker_port_base=0,
                 gateway_usage_interval_s=0.2) as gw:
        producer = KafkaProducer(bootstrap_servers=gw.bootstrap, client_id="long-lived", acks="all")
        producer.send(data, value=b"first").get(timeout=30)

        def reported() -> list[Event] | None:
            usage = [e for _k, e in read_events(kafka_bootstrap, events_topic)
                     if e.event == CONNECTION_USAGE and e.client_id == "long-lived"]
            return usage if any((PRODUCE, v) in (e.request_versions or ()) for e in usage for v in range(20)) \
                else None

        while_open = eventually(reported, timeout_s=30, message="a connection_usage naming Produce, still open")
        producing = {e.connection_id for e in while_open
                     if any(p[0] == PRODUCE for p in e.request_versions or ())}
        assert not [e for _k, e in read_events(kafka_bootstrap, events_topic)  # the broker connection is open
                    if e.event == CONNECTION_CLOSED and e.connection_id in producing]
        producer.close()
    closes = _closes(kafka_bootstrap, events_topic, lambda c: any(e.client_id == "long-lived" for e in c),
                     "the producer's closes")
    usage = [e for _k, e in read_events(kafka_bootstrap, events_topic)
             if e.event == CONNECTION_USAGE and e.client_id == "long-lived"]
    assert {e.client_software_name for e in usage} == {"kafka-python"}
    for cid in {e.connection_id for e in usage}:
        reports = sorted((e for e in usage if e.connection_id == cid), key=lambda e: e.usage_sequence or 0)
        assert [e.usage_sequence for e in reports] == list(range(1, len(reports) + 1))
        sent = [p for e in reports for p in e.request_versions or ()]
        (close,) = [e for e in closes if e.connection_id == cid]
        sent += list(close.request_versions or ())
        assert len(sent) == len(set(sent)), "a pair reported twice"  # each pair of a connection published once
    # Folded as the job folds them: every pair once, the connection counted at its close.
    (row,) = [r for r in usage_from_events([*usage, *closes]) if r.client_software_name == "kafka-python"]
    assert {(PRODUCE, v) for v in range(20)} & row.request_versions
    assert row.connections == len({e.connection_id for e in closes if e.client_id == "long-lived"})

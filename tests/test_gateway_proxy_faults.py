"""The proxy when its upstream broker goes away and comes back: clients are closed cleanly, nothing is lost.

A second real broker (its own KRaft home, a fixed port) is the upstream; it is
stopped while a real client (kafka-python) is connected through the gateway and
started again on the same port. The gateway is never restarted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaProducer

from configwatch.contract import CONNECTION_CLOSED, CONNECTION_OPENED
from configwatch.localkafka import LocalKafka
from policy.protocol import ApiVersionsRequest, encode_request
from tests.conftest import eventually, free_port
from tests.gateway_helpers import create_topic, gateway, metric, raw_connect, read_events, recv_until_closed
from tests.kafka_helpers import read_all

pytestmark = pytest.mark.kafka

CLOSES = "configwatch_gateway_connections_closed_total"


def test_a_restarting_upstream_broker_closes_clients_cleanly_and_the_gateway_recovers(
        kafka_bootstrap: str, topic_name: Any, tmp_path: Path) -> None:
    events, data = topic_name("events"), topic_name("upstream-restart")
    broker = LocalKafka(tmp_path / "upstream-kafka", port=free_port(), heap="512m")
    upstream = broker.start().bootstrap_servers
    producer: KafkaProducer | None = None
    try:
        create_topic(upstream, data, partitions=1)
        with gateway(kafka_bootstrap, events, upstream=upstream, gateway_broker_port_base=0) as gw:
            producer = KafkaProducer(bootstrap_servers=gw.bootstrap, client_id="survivor", acks="all",
                                     reconnect_backoff_max_ms=1000, delivery_timeout_ms=180_000)
            producer.send(data, value=b"before").get(timeout=60)

            broker.stop()
            # The client's connections through the gateway end with the broker's, counted by reason.
            eventually(lambda: (metric(gw, CLOSES, reason="upstream_closed")
                                + metric(gw, CLOSES, reason="upstream_error")) >= 1 or None, timeout_s=30)
            # A new client gets a clean close while the broker is away; the gateway keeps serving.
            with raw_connect(gw.address) as sock:
                sock.sendall(encode_request(ApiVersionsRequest(client_software_name="probe",
                                                               client_software_version="1.0"), 3, 1, "probe"))
                assert recv_until_closed(sock) == b""
            eventually(lambda: metric(gw, CLOSES, reason="upstream_unreachable") >= 1 or None, timeout_s=30)
            during = producer.send(data, value=b"during")  # the client buffers and retries by itself

            broker.start()
            during.get(timeout=150)
            producer.send(data, value=b"after").get(timeout=60)
            producer.close()
            producer = None
    finally:
        if producer is not None:
            producer.close(timeout=5)
        broker_running = broker.info() is not None
        if broker_running:
            values = sorted(v for _k, v, _p, _o in read_all(upstream, data))
        broker.stop()
    assert broker_running and values == [b"after", b"before", b"during"]
    published = [e for _k, e in read_events(kafka_bootstrap, events)]
    opened = [e for e in published if e.event == CONNECTION_OPENED]
    closed = [e for e in published if e.event == CONNECTION_CLOSED]
    # Every connection the gateway opened for the client, across the restart, was published closed too.
    assert len(opened) >= 2 and {e.client_software_name for e in opened} == {"kafka-python"}
    assert sorted(e.connection_id for e in closed) == sorted(e.connection_id for e in opened)

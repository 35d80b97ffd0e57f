"""The gateway's port per broker for any node ids: explicit ranges, then base + id, then a free port."""

from __future__ import annotations

from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaProducer

from configwatch.errors import UsageError
from policy.gateway.ports import BrokerPorts
from tests.conftest import free_port
from tests.gateway_helpers import gateway

pytestmark = pytest.mark.kafka


def test_ranges_map_large_and_sparse_node_ids() -> None:
    ports = BrokerPorts.parse("1001-1099=9201, 2000000=9400,5=9300", base=9200)
    assert [ports.port(n) for n in (1001, 1002, 1099, 2_000_000, 5)] == [9201, 9202, 9299, 9400, 9300]
    assert ports.port(7) == 9207  # no range: base + id
    assert ports.port(70_000) == 0  # base + id past 65535: a free port, not an error
    assert BrokerPorts.parse(None, base=0).port(3) == 0
    assert 9250 in ports.ports() and 9200 not in ports.ports()


@pytest.mark.parametrize(("text", "says"), [
    ("1001-1099", "is not NODES=PORT"),
    ("x=9201", "is not NODES=PORT"),
    ("10-5=9201", "lo <= hi"),
    ("1-100=65500", "beyond 1-65535"),
    ("1-10=9201,5-20=9400", "overlap at node 5"),
    ("1-10=9201,20-30=9205", "share port 9205"),
])
def test_a_map_that_cannot_work_is_refused_with_one_line(text: str, says: str) -> None:
    with pytest.raises(UsageError, match=says) as caught:
        BrokerPorts.parse(text, base=0)
    assert str(caught.value).startswith("--gateway-broker-ports") and "\n" not in str(caught.value)


def test_a_client_is_told_the_mapped_port_for_its_broker(kafka_bootstrap: str, topic_name: Any) -> None:
    port = free_port()
    with gateway(kafka_bootstrap, topic_name("events"), upstream=kafka_bootstrap,
                 gateway_broker_ports=f"1={port}") as gw:  # the test broker's node id is 1
        admin = KafkaAdminClient(bootstrap_servers=gw.bootstrap, client_id="ports-test")
        brokers = admin.describe_cluster()["brokers"]
        admin.close()
        producer = KafkaProducer(bootstrap_servers=gw.bootstrap, client_id="ports-test")
        producer.send(topic_name("data"), value=b"through the mapped port").get(timeout=30)
        producer.close()
    assert [(b["host"], b["port"]) for b in brokers] == [(gw.address[0], port)]

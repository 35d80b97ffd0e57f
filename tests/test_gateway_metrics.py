"""The gateway's Prometheus metrics, read from the registry directly (no broker, no sockets)."""

from __future__ import annotations

from prometheus_client import generate_latest

from policy.api import RequestContext
from policy.gateway.metrics import GatewayMetrics
from policy.gateway.registry import ConnectionRegistry
from tests.gateway_helpers import TEST_KEY, ListSink
from udfs.sensitivity import mask_identity

SECRET_NAME = "AKIAIOSFODNN7EXAMPLE"  # a valid KIP-511 software name the secret scan flags


def test_software_labels_carry_a_secret_as_the_marker_its_published_events_carry() -> None:
    sink = ListSink()
    registry = ConnectionRegistry(sink, TEST_KEY)
    metrics = GatewayMetrics(registry, None, lambda: 2)
    registry.register(RequestContext(connection_id="c1", client_software_name=SECRET_NAME,
                                     client_software_version="1.0"))
    registry.register(RequestContext(connection_id="c2", client_software_name="apache-kafka-java",
                                     client_software_version="4.0.0"))
    page = generate_latest(metrics.registry).decode()
    assert SECRET_NAME not in page
    published = mask_identity(sink.events[0], TEST_KEY).client_software_name  # what the publisher sends for c1
    assert published is not None and published.startswith("redacted:")
    gauge = "configwatch_gateway_client_software_connections"
    assert metrics.value(gauge, {"client_software_name": published, "client_software_version": "1.0"}) == 1
    assert metrics.value(gauge, {"client_software_name": "apache-kafka-java", "client_software_version": "4.0.0"}) == 1
    assert registry.unregister("c1")
    assert metrics.value(gauge, {"client_software_name": published, "client_software_version": "1.0"}) == 0

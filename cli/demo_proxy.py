"""The demo's real client: an unmodified kafka-python producer reaching the broker through the gateway proxy.

:class:`ProxiedProducer` starts a gateway in proxy mode (``--upstream`` = the
demo's broker; free ports, no metrics endpoint) and a kafka-python producer
bootstrapped from it, which sends one small record a second to
``configwatch-demo-traffic`` until stopped, so its connections stay open. The
gateway publishes its ``connection_opened`` events with the client's real
KIP-511 name and version, and the live page counts it next to the simulated fleet.
"""

from __future__ import annotations

import logging
import threading
from contextlib import ExitStack

import kafka
from kafka import KafkaProducer

from configwatch.settings import Settings
from policy.gateway import running_gateway
from sinks.kafka import ensure_topic

__all__ = ["TRAFFIC_TOPIC", "ProxiedProducer"]

log = logging.getLogger(__name__)

TRAFFIC_TOPIC = "configwatch-demo-traffic"
_SEND_EVERY_S = 1.0


class ProxiedProducer:
    """A real kafka-python producer connected to the broker through a proxying gateway, until :meth:`stop`."""

    def __init__(self, settings: Settings, bootstrap_servers: str, *, topic: str = TRAFFIC_TOPIC) -> None:
        self._settings = settings
        self._bootstrap = bootstrap_servers
        self.topic = topic
        self._stack = ExitStack()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.sent = 0

    @property
    def software(self) -> str:
        """The name/version the producer announces in ApiVersions (KIP-511)."""
        return f"kafka-python/{kafka.__version__}"

    def start(self) -> str:
        """Start the proxy and the producer; returns the gateway bootstrap the producer uses."""
        handle = self._stack.enter_context(running_gateway(
            self._settings, self._bootstrap, upstream=self._bootstrap, gateway_port=0, gateway_metrics_port=-1,
            gateway_broker_port_base=0))
        ensure_topic(self._bootstrap, self.topic)  # left to auto-creation, the first send logs the client's ERROR
        producer = KafkaProducer(bootstrap_servers=handle.bootstrap, client_id="demo-real-producer", acks="all")
        self._stack.callback(producer.close, 10)
        producer.send(self.topic, value=b"hello through the gateway").get(timeout=60)
        self.sent = 1
        self._thread = threading.Thread(target=self._send_loop, args=(producer,), name="demo-real-producer",
                                        daemon=True)
        self._thread.start()
        return handle.bootstrap

    def _send_loop(self, producer: KafkaProducer) -> None:
        while not self._stopping.wait(_SEND_EVERY_S):
            try:
                producer.send(self.topic, value=b"tick")
                self.sent += 1
            except Exception as exc:  # kafka-python raises several types; the demo goes on without ticks
                log.warning("the demo's real producer could not send: %s", exc)

    def stop(self) -> None:
        """Stop sending, close the producer, then stop the gateway (which publishes the closes)."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(10)
        self._stack.close()

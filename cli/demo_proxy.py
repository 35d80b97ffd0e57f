"""The demo's real clients: unmodified kafka-python producers reaching the broker through the gateway proxy.

:class:`ProxiedProducer` starts a gateway in proxy mode (``--upstream`` = the
demo's broker; free ports, no metrics endpoint) that speaks TLS to its clients
and requires their certificates (mutual TLS, certificates from a throwaway local
CA in a temporary directory), and two kafka-python producers bootstrapped from it, each sending
one small record a second to ``configwatch-demo-traffic`` until stopped, so
their connections stay open: ``demo-real-producer`` over TLS 1.3, and
``demo-legacy-producer`` held to TLS 1.1 by its own SSL context, as an old
runtime would be (the gateway lets TLS 1.1 in so that posture shows). The
gateway publishes their ``connection_opened`` events with the client's real
KIP-511 name and version, its certificate's principal and TLS version; the live
page counts them next to the simulated fleet, and the job flags the legacy one
(``posture-weak-tls``).
"""

from __future__ import annotations

import logging
import ssl
import tempfile
import threading
import warnings
from contextlib import ExitStack
from pathlib import Path

import kafka
from kafka import KafkaProducer

from configwatch.localkafka.certs import LocalCA
from configwatch.settings import Settings
from policy.gateway import running_gateway
from sinks.kafka import ensure_topic

__all__ = ["TRAFFIC_TOPIC", "ProxiedProducer"]

log = logging.getLogger(__name__)

TRAFFIC_TOPIC = "configwatch-demo-traffic"
_SEND_EVERY_S = 1.0


class ProxiedProducer:
    """Real kafka-python producers connected to the broker through a proxying TLS gateway, until :meth:`stop`."""

    def __init__(self, settings: Settings, bootstrap_servers: str, *, topic: str = TRAFFIC_TOPIC) -> None:
        self._settings = settings
        self._bootstrap = bootstrap_servers
        self.topic = topic
        self._stack = ExitStack()
        self._ca: LocalCA | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.sent = 0

    @property
    def software(self) -> str:
        """The name/version the producer announces in ApiVersions (KIP-511)."""
        return f"kafka-python/{kafka.__version__}"

    def start(self) -> str:
        """Start the proxy and the producers; returns the gateway bootstrap they use."""
        self._ca = LocalCA(Path(self._stack.enter_context(tempfile.TemporaryDirectory(prefix="configwatch-tls-"))))
        gateway = self._ca.issue("gateway", "/O=configwatch/CN=gateway", server=True)
        handle = self._stack.enter_context(running_gateway(
            self._settings, self._bootstrap, upstream=self._bootstrap, gateway_port=0, gateway_metrics_port=-1,
            gateway_broker_port_base=0, gateway_security_protocol="SSL", gateway_ssl_certfile=gateway.cert,
            gateway_ssl_keyfile=gateway.key, gateway_ssl_cafile=self._ca.cert,
            gateway_ssl_enabled_protocols="TLSv1.1,TLSv1.2,TLSv1.3"))
        ensure_topic(self._bootstrap, self.topic)  # left to auto-creation, the first send logs the client's ERROR
        producers = [self._producer(handle.bootstrap, "demo-real-producer", legacy=False),
                     self._producer(handle.bootstrap, "demo-legacy-producer", legacy=True)]
        for producer in producers:
            producer.send(self.topic, value=b"hello through the gateway").get(timeout=60)
        self.sent = len(producers)
        self._thread = threading.Thread(target=self._send_loop, args=(producers,), name="demo-real-producers",
                                        daemon=True)
        self._thread.start()
        return handle.bootstrap

    def _producer(self, bootstrap: str, client_id: str, *, legacy: bool) -> KafkaProducer:
        """A producer presenting its own certificate; ``legacy``: held to TLS 1.1."""
        assert self._ca is not None
        pem = self._ca.issue(client_id, f"/O=configwatch/OU=demo/CN={client_id}")
        ctx = ssl.create_default_context(cafile=str(self._ca.cert))
        ctx.load_cert_chain(str(pem.cert), str(pem.key))
        if legacy:
            with warnings.catch_warnings():  # naming TLS 1.1 is deprecated: an old runtime is the point here
                warnings.simplefilter("ignore", DeprecationWarning)
                ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_1
            ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
        producer = KafkaProducer(bootstrap_servers=bootstrap, client_id=client_id, acks="all",
                                 security_protocol="SSL", ssl_context=ctx)
        self._stack.callback(producer.close, 10)
        return producer

    def _send_loop(self, producers: list[KafkaProducer]) -> None:
        while not self._stopping.wait(_SEND_EVERY_S):
            for producer in producers:
                try:
                    producer.send(self.topic, value=b"tick")
                    self.sent += 1
                except Exception as exc:  # kafka-python raises several types; the demo goes on without ticks
                    log.warning("the demo's real producer could not send: %s", exc)

    def stop(self) -> None:
        """Stop sending, close the producers, then stop the gateway (which publishes the closes)."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(10)
        self._stack.close()

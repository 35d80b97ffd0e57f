"""Wire a gateway to its policy and publisher, and run it: in a background thread, or until a signal.

``running_gateway`` (a context manager) is what tests, the simulator and the
demo use; ``serve_gateway`` is ``configwatch gateway``. Both build one
``EventPublisher`` for the gateway, hand it to the policy when the policy is
``PublisherAware`` (so all of a connection's events share one producer and stay
in order), and on the way out: stop the listener, end connections (publishing
their ``connection_closed``), close the policy, then flush the publisher.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace

from configwatch.settings import Settings
from policy.api import ClientConfigPolicy
from policy.gateway.config import GatewayConfig
from policy.gateway.server import Gateway
from policy.loader import load_policy_class, policy_configs
from policy.publisher import EventPublisher, PublisherAware, PublisherStats

__all__ = ["GatewayHandle", "running_gateway", "serve_gateway"]

log = logging.getLogger(__name__)

# How long a starting gateway waits for its publisher to reach Kafka before it listens anyway.
PUBLISHER_CONNECT_WAIT_S = 15.0


@dataclass
class GatewayHandle:
    """A running gateway and the parts around it."""

    gateway: Gateway
    publisher: EventPublisher
    policy: ClientConfigPolicy | None
    metrics_port: int | None

    @property
    def address(self) -> tuple[str, int]:
        return self.gateway.address

    @property
    def bootstrap(self) -> str:
        host, port = self.address
        return f"{host}:{port}"

    def publisher_stats(self) -> PublisherStats:
        return self.publisher.stats()


def _build(settings: Settings, bootstrap_servers: str) -> GatewayHandle:
    config = GatewayConfig.from_settings(settings)  # a bad setting fails before anything starts
    publisher = EventPublisher(bootstrap_servers, settings.input_topic, buffer_size=settings.policy_buffer_size,
                               buffer_bytes=settings.policy_buffer_bytes, identity_key=settings.fingerprint_key)
    policy: ClientConfigPolicy | None = None
    try:
        cls = load_policy_class(settings.client_config_policy_class_name)
        if cls is not None:
            policy = cls()
            if isinstance(policy, PublisherAware):
                policy.attach_publisher(publisher)
            policy.configure(policy_configs(settings, bootstrap_servers))
    except BaseException:
        publisher.close()
        raise
    if not publisher.wait_connected(PUBLISHER_CONNECT_WAIT_S):
        log.warning("the publisher has not reached Kafka at %s within %.0f s; pushes get a retriable error "
                    "until it does", bootstrap_servers, PUBLISHER_CONNECT_WAIT_S)
    gateway = Gateway(config, policy=policy, sink=publisher,
                      publisher_stats=publisher.stats, identity_key=settings.fingerprint_key)
    return GatewayHandle(gateway, publisher, policy, None)


def _start_metrics(handle: GatewayHandle) -> None:
    config = handle.gateway.config
    if config.metrics_port >= 0:
        handle.metrics_port = handle.gateway.metrics.serve(config.host, config.metrics_port)
        log.info("gateway metrics on http://%s:%d/metrics", config.host, handle.metrics_port)


def _shutdown(handle: GatewayHandle) -> PublisherStats:
    handle.gateway.metrics.stop()
    if handle.policy is not None:
        try:
            handle.policy.close()
        except Exception:  # a plugin's close() failing must not keep the publisher from flushing
            log.exception("ClientConfigPolicy.close() failed")
    return handle.publisher.close()


@contextmanager
def running_gateway(settings: Settings, bootstrap_servers: str, **overrides: object) -> Iterator[GatewayHandle]:
    """Run a gateway on its own event loop thread for the ``with`` block.

    ``overrides`` replace settings fields (e.g. ``gateway_port=0`` for a free port).
    """
    if overrides:
        settings = replace(settings, **overrides)  # type: ignore[arg-type]
    handle = _build(settings, bootstrap_servers)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="gateway-loop", daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(handle.gateway.start(), loop).result(30)
        _start_metrics(handle)
        yield handle
    finally:
        with suppress(Exception):
            asyncio.run_coroutine_threadsafe(handle.gateway.stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()
        _shutdown(handle)


def serve_gateway(settings: Settings, bootstrap_servers: str,
                  on_ready: Callable[[GatewayHandle], None] | None = None) -> PublisherStats:
    """Run a gateway in this thread until SIGINT or SIGTERM; returns the publisher's final counts."""
    handle = _build(settings, bootstrap_servers)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await handle.gateway.start()
        _start_metrics(handle)
        if on_ready is not None:
            on_ready(handle)
        await stop.wait()
        log.info("stopping the gateway")
        await handle.gateway.stop()

    try:
        asyncio.run(main())
    finally:
        stats = _shutdown(handle)
    return stats

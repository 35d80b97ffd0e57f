"""The gateway: an asyncio TCP server speaking the Kafka protocol for ApiVersions and PushConfig.

With an upstream cluster it is also a Kafka proxy: the bootstrap listener and one
listener per upstream broker relay every other request (``policy.gateway.proxy``).
``Gateway`` owns the listening socket, the connection registry, the request
handler and the metrics; it does not own the policy or the publisher (see
``policy.gateway.service`` for the lifecycle that wires them together).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import socket
from collections.abc import Callable
from typing import Any

from configwatch.secrets import SecretStr
from policy.api import ClientConfigPolicy
from policy.gateway.apis import ConnectionState, RequestHandler
from policy.gateway.brokers import BrokerListeners
from policy.gateway.config import GatewayConfig
from policy.gateway.connection import serve_connection
from policy.gateway.metrics import GatewayMetrics
from policy.gateway.proxy import serve_proxy_connection
from policy.gateway.registry import ConnectionRegistry
from policy.gateway.sasl import SaslExchange
from policy.gateway.tls import tls_posture
from policy.gateway.usage import RequestUsage
from policy.protocol import FrameBudget
from policy.publisher import EventSink, PublisherStats

__all__ = ["Gateway"]

log = logging.getLogger(__name__)


class Gateway:
    """One listening gateway; ``start``/``stop`` run on its event loop."""

    def __init__(self, config: GatewayConfig, *, policy: ClientConfigPolicy | None, sink: EventSink | None,
                 publisher_stats: Callable[[], PublisherStats] | None = None,
                 identity_key: SecretStr | None = None) -> None:
        self.config = config
        self.registry = ConnectionRegistry(sink, identity_key)  # the key: software labels as published
        self._tasks: set[asyncio.Task[Any]] = set()
        self.metrics = GatewayMetrics(self.registry, publisher_stats, lambda: len(self._tasks),
                                      sink.unavailable if sink is not None else None)
        self._handler = RequestHandler(config, policy, self.registry, self.metrics)
        self.frame_budget = FrameBudget(config.max_queued_request_bytes)
        self.metrics.watch_frame_budget(lambda: self.frame_budget.used)
        self._server: asyncio.Server | None = None
        self._seq = itertools.count()
        self.port: int | None = None
        self.brokers = (BrokerListeners(config, self._serve, backlog=self._backlog) if config.upstream else None)
        self._reporting: dict[str, RequestUsage] = {}  # open proxied connections' usage (connection_usage)
        self._reporter: asyncio.Task[None] | None = None

    @property
    def _backlog(self) -> int:
        return max(128, min(self.config.max_connections, 4096))

    @property
    def address(self) -> tuple[str, int]:
        assert self.port is not None, "the gateway is not started"
        return (self.config.host, self.port)

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._accept, self.config.host, self.config.port, backlog=self._backlog, ssl=self.config.server_ssl,
            ssl_handshake_timeout=self.config.frame_timeout_s if self.config.server_ssl else None)
        self.port = int(self._server.sockets[0].getsockname()[1])
        log.info("PushConfig gateway listening on %s:%d (%s)", self.config.host, self.port,
                 self.config.security_protocol)
        if self.brokers is not None:
            log.info("proxying to the Kafka cluster at %s (%s)",
                     ",".join(f"{h}:{p}" for h, p in self.config.upstream), self.config.upstream_protocol)
            if self.config.usage_interval_s > 0:
                self._reporter = asyncio.create_task(self._report_usage())
            if self.config.sasl:
                log.info("a SASL cluster answers authenticated clients only: each broker gets its listener when a "
                         "response first names it")
            elif not await self.brokers.discover(self.config.upstream):
                log.warning("no upstream broker answered yet; broker listeners start when one does")

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._serve(reader, writer, None)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, node_id: int | None) -> None:
        """Serve one accepted connection: the bootstrap listener's (``node_id`` None) or a broker's."""
        if len(self._tasks) >= self.config.max_connections:
            self.metrics.closes.labels(reason="connection_limit").inc()
            log.warning("refusing a connection: %d connections open (limit)", len(self._tasks))
            writer.close()
            return
        self._size_socket_buffers(writer)
        local = writer.get_extra_info("sockname") or ("?", 0)
        peer = writer.get_extra_info("peername") or ("?", 0)
        state = ConnectionState(connection_id=f"{local[0]}:{local[1]}-{peer[0]}:{peer[1]}-{next(self._seq)}",
                                client_address=str(peer[0]), tls=tls_posture(writer),
                                sasl=SaslExchange() if self.config.sasl else None)
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            if self.brokers is None:
                await serve_connection(reader, writer, state=state, config=self.config, handler=self._handler,
                                       registry=self.registry, metrics=self.metrics, budget=self.frame_budget)
            else:
                upstream = self.config.upstream if node_id is None else (self.brokers.target(node_id),)
                await serve_proxy_connection(reader, writer, state=state, upstream=upstream, config=self.config,
                                             handler=self._handler, registry=self.registry, metrics=self.metrics,
                                             brokers=self.brokers, budget=self.frame_budget,
                                             reporting=self._reporting)
        finally:
            self._tasks.discard(task)

    async def _report_usage(self) -> None:
        """Every ``usage_interval_s``: each open proxied connection's new request versions, as ``connection_usage``."""
        while True:
            await asyncio.sleep(self.config.usage_interval_s)
            for connection_id, usage in list(self._reporting.items()):
                if self.registry.context(connection_id) is not None:  # registered (opened) connections only
                    fields = usage.report()
                    if fields is not None:
                        self.registry.report_usage(connection_id, fields)

    def _size_socket_buffers(self, writer: asyncio.StreamWriter) -> None:
        """As a Kafka broker's ``socket.send.buffer.bytes`` and ``socket.receive.buffer.bytes``: bounded kernel
        buffers per connection, so a client that does not read its responses blocks the gateway's write within
        ``frame_timeout_s`` instead of growing an auto-tuned buffer (up to megabytes) first."""
        sock = writer.get_extra_info("socket")
        if sock is None:
            return
        for option, size in ((socket.SO_SNDBUF, self.config.socket_send_buffer_bytes),
                             (socket.SO_RCVBUF, self.config.socket_receive_buffer_bytes)):
            if size > 0:
                sock.setsockopt(socket.SOL_SOCKET, option, size)

    async def stop(self) -> None:
        """Stop listening and end every connection (each publishes its ``connection_closed``)."""
        if self._reporter is not None:
            self._reporter.cancel()
            await asyncio.gather(self._reporter, return_exceptions=True)
        if self._server is not None:
            self._server.close()
        if self.brokers is not None:
            self.brokers.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None
        if self.brokers is not None:
            await self.brokers.wait_closed()
        await asyncio.to_thread(self._handler.close)
        log.info("PushConfig gateway stopped")

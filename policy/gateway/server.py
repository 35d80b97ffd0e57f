"""The gateway: an asyncio TCP server speaking the Kafka protocol for ApiVersions and PushConfig.

``Gateway`` owns the listening socket, the connection registry, the request
handler and the metrics; it does not own the policy or the publisher (see
``policy.gateway.service`` for the lifecycle that wires them together).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from typing import Any

from policy.api import ClientConfigPolicy
from policy.gateway.apis import RequestHandler
from policy.gateway.config import GatewayConfig
from policy.gateway.connection import serve_connection
from policy.gateway.metrics import GatewayMetrics
from policy.gateway.registry import ConnectionRegistry
from policy.publisher import EventSink, PublisherStats

__all__ = ["Gateway"]

log = logging.getLogger(__name__)


class Gateway:
    """One listening gateway; ``start``/``stop`` run on its event loop."""

    def __init__(self, config: GatewayConfig, *, policy: ClientConfigPolicy | None, sink: EventSink | None,
                 publisher_stats: Callable[[], PublisherStats] | None = None) -> None:
        self.config = config
        self.registry = ConnectionRegistry(sink)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.metrics = GatewayMetrics(self.registry, publisher_stats, lambda: len(self._tasks))
        self._handler = RequestHandler(config, policy, self.registry, self.metrics)
        self._server: asyncio.Server | None = None
        self._seq = itertools.count()
        self.port: int | None = None

    @property
    def address(self) -> tuple[str, int]:
        assert self.port is not None, "the gateway is not started"
        return (self.config.host, self.port)

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._accept, self.config.host, self.config.port,
            backlog=max(128, min(self.config.max_connections, 4096)))
        self.port = int(self._server.sockets[0].getsockname()[1])
        log.info("PushConfig gateway listening on %s:%d", self.config.host, self.port)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._tasks) >= self.config.max_connections:
            self.metrics.closes.labels(reason="connection_limit").inc()
            log.warning("refusing a connection: %d connections open (limit)", len(self._tasks))
            writer.close()
            return
        local = writer.get_extra_info("sockname") or ("?", 0)
        peer = writer.get_extra_info("peername") or ("?", 0)
        connection_id = f"{local[0]}:{local[1]}-{peer[0]}:{peer[1]}-{next(self._seq)}"
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await serve_connection(reader, writer, connection_id=connection_id, client_address=str(peer[0]),
                                   config=self.config, handler=self._handler, registry=self.registry,
                                   metrics=self.metrics)
        finally:
            self._tasks.discard(task)

    async def stop(self) -> None:
        """Stop listening and end every connection (each publishes its ``connection_closed``)."""
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None
        log.info("PushConfig gateway stopped")

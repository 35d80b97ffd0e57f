"""One gateway listener per upstream broker (port per broker, as Kroxylicious does).

A broker gets its listener at start (the gateway asks the cluster for its
brokers once) or the first time a response names it, on the port
``policy.gateway.ports.BrokerPorts`` gives its node id. A
connection accepted there goes to the address the cluster last gave for that
node, so a broker that moves is followed. Listening from the start lets clients
that cached broker addresses reconnect after a gateway restart.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence

from kafka.protocol.metadata import MetadataRequest

from policy.exceptions import PolicyError
from policy.gateway.config import GatewayConfig
from policy.gateway.endpoints import BrokerEndpoint, decode_endpoints
from policy.gateway.errors import UpstreamError
from policy.protocol import encode_request, read_frame

__all__ = ["Accept", "BrokerListeners", "open_upstream"]

log = logging.getLogger(__name__)

DISCOVERY_TIMEOUT_S = 10.0
# Metadata v9 (Kafka 2.4+; 4.x serves 0-13) is enough to learn the brokers; the client id names the gateway.
DISCOVERY_METADATA_VERSION = 9
DISCOVERY_CLIENT_ID = "configwatch-gateway"

# Called for each accepted connection with the node id whose listener accepted it.
Accept = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]


async def open_upstream(config: GatewayConfig, host: str, port: int
                        ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to a broker, over TLS when the cluster speaks it (its certificate checked against ``host``)."""
    if config.upstream_ssl is None:
        return await asyncio.open_connection(host, port)
    return await asyncio.open_connection(host, port, ssl=config.upstream_ssl, server_hostname=host,
                                         ssl_handshake_timeout=config.frame_timeout_s)


class BrokerListeners:
    """Node id -> the broker's address upstream and the gateway port that stands for it."""

    def __init__(self, config: GatewayConfig, accept: Accept, *, backlog: int = 128) -> None:
        self._config = config
        self._host = config.host
        self._accept = accept
        self._backlog = backlog
        self._targets: dict[int, tuple[str, int]] = {}
        self._ports: dict[int, int] = {}
        self._servers: list[asyncio.Server] = []
        self._lock = asyncio.Lock()

    def target(self, node_id: int) -> tuple[str, int]:
        """Where a connection to node ``node_id``'s gateway listener goes."""
        return self._targets[node_id]

    @property
    def ports(self) -> dict[int, int]:
        """Gateway listener port per node id, for the brokers seen so far."""
        return dict(self._ports)

    async def ports_for(self, endpoints: Iterable[BrokerEndpoint]) -> dict[int, int]:
        """Remember each broker's address and return its gateway port, starting listeners as needed."""
        wanted = []
        for endpoint in endpoints:
            self._targets[endpoint.node_id] = endpoint.address
            wanted.append(endpoint.node_id)
        missing = [n for n in wanted if n not in self._ports]
        if missing:
            async with self._lock:
                for node_id in missing:
                    if node_id not in self._ports:
                        self._ports[node_id] = await self._listen(node_id)
        return {n: self._ports[n] for n in wanted}

    async def discover(self, upstream: Sequence[tuple[str, int]]) -> bool:
        """Ask the cluster for its brokers (one Metadata request) and listen for each; False if it cannot.

        Not for a SASL cluster: it answers authenticated connections only, and the gateway holds no credentials
        (its brokers get listeners as responses name them)."""
        for host, port in upstream:
            try:
                frame = await asyncio.wait_for(self._metadata(host, port), DISCOVERY_TIMEOUT_S)
                decoded = decode_endpoints(3, DISCOVERY_METADATA_VERSION, frame) if frame else None
                if decoded is None:
                    continue
                await self.ports_for(decoded[1])
                return True
            except (OSError, TimeoutError, asyncio.IncompleteReadError, PolicyError) as exc:
                log.warning("cannot list the brokers at %s:%d: %s", host, port, exc)
        return False

    async def _metadata(self, host: str, port: int) -> bytes | None:
        reader, writer = await open_upstream(self._config, host, port)
        try:
            request = MetadataRequest(topics=[], allow_auto_topic_creation=False)
            writer.write(encode_request(request, DISCOVERY_METADATA_VERSION, 1, DISCOVERY_CLIENT_ID))
            await writer.drain()
            return await read_frame(reader, max_bytes=64 * 1024 * 1024, idle_timeout_s=DISCOVERY_TIMEOUT_S,
                                    frame_timeout_s=DISCOVERY_TIMEOUT_S)
        finally:
            writer.close()

    async def _listen(self, node_id: int) -> int:
        port = self._config.broker_ports.port(node_id)
        if port == 0 and self._config.broker_ports.base > 0:
            log.warning("broker %d gets a free port: no --gateway-broker-ports range covers it and "
                        "--gateway-broker-port-base + %d is past 65535; clients lose it when the gateway restarts",
                        node_id, node_id)

        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await self._accept(reader, writer, node_id)

        try:
            server = await asyncio.start_server(
                accept, self._host, port, backlog=self._backlog, ssl=self._config.server_ssl,
                ssl_handshake_timeout=self._config.frame_timeout_s if self._config.server_ssl else None)
        except OSError as exc:
            raise UpstreamError(f"cannot listen for broker {node_id} on {self._host}:{port}: {exc}") from exc
        self._servers.append(server)
        bound = int(server.sockets[0].getsockname()[1])
        log.info("broker %d (%s:%d) is reachable through the gateway at %s:%d", node_id,
                 *self._targets[node_id], self._host, bound)
        return bound

    def close(self) -> None:
        """Stop accepting on every broker listener."""
        for server in self._servers:
            server.close()

    async def wait_closed(self) -> None:
        for server in self._servers:
            await server.wait_closed()
        self._servers.clear()

"""One client connection in proxy mode: its own upstream connection, requests relayed in order.

Each request's header is read (api key, version, correlation id). ApiVersions is
checked and registered as without an upstream, then forwarded (v5 as v4, the
highest a Kafka broker serves) and answered with the upstream's ranges, capped
where endpoints would escape, plus PushConfig when a policy is configured.
PushConfig is answered here and never forwarded. Every other request goes
upstream as bytes; its response comes back as bytes unless it names brokers
(``policy.gateway.endpoints``). Responses reach the client in request order,
whether the gateway or the broker answered them. The connection ends when either
side closes, with the same reasons as a gateway connection plus
``upstream_unreachable``, ``upstream_closed`` and ``upstream_error``. Its
``connection_closed`` carries the (API key, version) pairs the client sent
(``policy.gateway.usage``), recorded before each request is forwarded.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from policy.exceptions import FrameError, FrameTimeoutError, PolicyError, ProtocolError
from policy.gateway.apis import ConnectionState, Reply, RequestHandler
from policy.gateway.brokers import BrokerListeners, open_upstream
from policy.gateway.config import GatewayConfig
from policy.gateway.endpoints import (
    advertised_api_keys,
    decode_endpoints,
    expects_response,
    reframe,
    rewrite_endpoints,
)
from policy.gateway.metrics import GatewayMetrics
from policy.gateway.registry import ConnectionRegistry
from policy.gateway.sasl import SASL_AUTHENTICATE_KEY, SASL_HANDSHAKE_KEY, SaslExchange, response_error
from policy.gateway.usage import RequestUsage
from policy.protocol import (
    API_VERSIONS_KEY,
    NONE,
    PUSH_CONFIG_KEY,
    ApiVersionsRequest,
    ApiVersionsResponse,
    FrameBudget,
    decode_message,
    encode_request,
    read_frame,
)

__all__ = ["MAX_REQUEST_BYTES", "MAX_RESPONSE_BYTES", "UPSTREAM_API_VERSIONS_MAX", "serve_proxy_connection"]

log = logging.getLogger(__name__)

UPSTREAM_API_VERSIONS_MAX = 4  # the highest ApiVersions a Kafka broker serves (v5 is the draft KIP's)
MAX_REQUEST_BYTES = 100 * 1024 * 1024  # Kafka's socket.request.max.bytes: forwarded requests may be this large
MAX_RESPONSE_BYTES = 512 * 1024 * 1024  # a Fetch response holds up to fetch.max.bytes (50 MiB by default)
CONNECT_TIMEOUT_S = 10.0
_INT32 = struct.Struct(">i")  # a frame's size and a response's correlation id


@dataclass(frozen=True, slots=True)
class _Pending:
    """A response the client is owed, in request order: from upstream, or the gateway's own reply."""

    correlation_id: int
    api_key: int
    version: int
    upstream_version: int
    reply: Reply | None = None


def _size_prefix(payload: bytes) -> bytes:
    return _INT32.pack(len(payload))


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


async def _connect(config: GatewayConfig, upstream: Sequence[tuple[str, int]]
                   ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect to the first upstream address that answers (over TLS when the cluster speaks it)."""
    last: Exception | None = None
    for host, port in upstream:
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT_S):
                return await open_upstream(config, host, port)
        except (OSError, TimeoutError) as exc:  # ssl.SSLError (a certificate refused) is an OSError
            last = exc
    raise ConnectionError(f"no upstream broker reachable at {upstream}: {last}")


class _UpstreamFrames:
    """The upstream's response frames, with a read of the next frame's size always outstanding, so a
    broker that closes (a restart, its idle timeout) is noticed while no request is pending."""

    def __init__(self, reader: asyncio.StreamReader, frame_timeout_s: float) -> None:
        self._reader = reader
        self._frame_timeout_s = frame_timeout_s
        self.head: asyncio.Future[bytes] = asyncio.ensure_future(reader.readexactly(_INT32.size))

    async def next(self) -> bytes | None:
        """The next frame's payload; None when the upstream closed between frames."""
        try:
            head = await self.head
        except asyncio.IncompleteReadError as exc:
            if not exc.partial:
                return None
            raise
        size = _INT32.unpack(head)[0]
        if not 0 < size <= MAX_RESPONSE_BYTES:
            raise FrameError(f"upstream frame size {size} outside 1..{MAX_RESPONSE_BYTES}")
        try:
            async with asyncio.timeout(self._frame_timeout_s):
                frame = await self._reader.readexactly(size)
        except TimeoutError:
            raise FrameTimeoutError(f"upstream frame of {size} bytes incomplete after {self._frame_timeout_s}s") \
                from None
        self.head = asyncio.ensure_future(self._reader.readexactly(_INT32.size))
        return frame

    def why_ended(self, connection_id: str) -> str:
        """The close reason once ``head`` completed with no request pending."""
        exc = self.head.exception()
        if (isinstance(exc, asyncio.IncompleteReadError) and not exc.partial) or isinstance(exc, ConnectionError):
            return "upstream_closed"
        log.info("closing %s: the upstream sent %s with no request pending", connection_id,
                 exc or "a frame")
        return "upstream_error"

    def close(self) -> None:
        if not self.head.done():
            self.head.cancel()
        elif not self.head.cancelled():
            self.head.exception()  # retrieved, so asyncio does not log it


class _ProxyConnection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up_reader: asyncio.StreamReader,
                 up_writer: asyncio.StreamWriter, state: ConnectionState, usage: RequestUsage,
                 config: GatewayConfig, handler: RequestHandler, metrics: GatewayMetrics,
                 brokers: BrokerListeners, budget: FrameBudget | None) -> None:
        self._reader, self._writer = reader, writer
        self._budget = budget
        self._up_reader, self._up_writer = up_reader, up_writer
        self._state = state
        self._usage = usage
        self._config = config
        self._handler = handler
        self._metrics = metrics
        self._brokers = brokers
        self._pending: asyncio.Queue[_Pending] = asyncio.Queue()

    async def run(self) -> str:
        forward = asyncio.create_task(self._forward())
        relay = asyncio.create_task(self._relay())
        try:
            done, _ = await asyncio.wait({forward, relay}, return_when=asyncio.FIRST_COMPLETED)
            if relay in done:
                return relay.result()
            reason = forward.result()
            if reason is None:  # the gateway answered and closes once the answer is written
                return await relay
            return reason
        finally:
            # Python 3.11's wait_for can swallow a cancel that meets a finishing read or drain, so the tasks
            # are also ended without it: the relay by a last item in its queue, both by closing the sockets.
            for task in (forward, relay):
                task.cancel()
            self._pending.put_nowait(_Pending(0, -1, -1, -1, Reply(None, "shutdown")))
            self._writer.close()
            self._up_writer.close()
            await asyncio.gather(forward, relay, return_exceptions=True)

    # -- client -> upstream ---------------------------------------------------------------------
    async def _forward(self) -> str | None:
        """Read the client's requests until it closes (a reason) or the gateway refuses one (None)."""
        try:
            while True:
                payload = await read_frame(self._reader, max_bytes=max(self._config.max_frame_bytes,
                                                                       MAX_REQUEST_BYTES),
                                           idle_timeout_s=self._config.idle_timeout_s,
                                           frame_timeout_s=self._config.frame_timeout_s, budget=self._budget)
                if payload is None:
                    return "eof"
                if not await self._route(payload):
                    return None
        except FrameError as exc:
            log.info("closing %s: %s", self._state.connection_id, exc)
            return "frame_too_large"
        except FrameTimeoutError:
            return "frame_timeout"
        except ProtocolError as exc:
            log.info("closing %s: %s", self._state.connection_id, exc)
            return "bad_request"
        except asyncio.IncompleteReadError:
            return "truncated_frame"
        except TimeoutError:
            return "idle_timeout"
        except (ConnectionError, OSError):
            return "reset"

    async def _route(self, payload: bytes) -> bool:
        """Forward or answer one request; False when the connection closes after the answer."""
        state = self._state
        header, refused = self._handler.admit(payload, state)
        if refused is not None:
            return await self._answer(header, refused)
        key, version, correlation_id = header.request_api_key, header.request_api_version, header.correlation_id
        if key == PUSH_CONFIG_KEY:
            return await self._answer(header, await self._handler.answer_push_config(payload, header, state,
                                                                                     _now_ms()))
        upstream_version = version
        if key == API_VERSIONS_KEY:
            refused = self._handler.check_api_versions(payload, version, correlation_id, state)
            if refused is not None:  # the KIP-511 fallback, or INVALID_REQUEST and close
                return await self._answer(header, refused)
            if version > UPSTREAM_API_VERSIONS_MAX:
                upstream_version = UPSTREAM_API_VERSIONS_MAX
                request = decode_message(ApiVersionsRequest, payload, version)
                payload = encode_request(request, upstream_version, correlation_id, header.client_id)[4:]
        else:
            self._handler.register_unknown(state)
            if state.sasl is not None and key in (SASL_HANDSHAKE_KEY, SASL_AUTHENTICATE_KEY):
                self._note_sasl(state.sasl, key, version, payload)
        self._usage.record(key, version)  # before forwarding: a request the broker refuses by closing counts too
        self._metrics.requests.labels(api=str(key), outcome="forwarded").inc()
        if expects_response(payload, key, version):
            self._pending.put_nowait(_Pending(correlation_id, key, version, upstream_version))
        self._up_writer.writelines((_size_prefix(payload), payload))  # one send for small requests
        await self._up_writer.drain()
        return True

    @staticmethod
    def _note_sasl(exchange: SaslExchange, key: int, version: int, payload: bytes) -> None:
        """Read what the gateway keeps of a SASL request (the mechanism, the identity) on its way upstream."""
        if key == SASL_HANDSHAKE_KEY:
            exchange.handshake(payload)
        else:
            exchange.authenticate(payload, version)

    def _sasl_answered(self, pending: _Pending, frame: bytes) -> None:
        """The broker's verdict on a SASL step: count it, and open the connection once it authenticated."""
        state = self._state
        assert state.sasl is not None
        error = response_error(frame, pending.api_key, pending.version)
        if error != NONE:
            self._handler.authentication_failed(state, error)
        elif pending.api_key == SASL_AUTHENTICATE_KEY and state.sasl.accepted():  # KIP-368 re-authentications too
            self._handler.authenticated(state)

    async def _answer(self, header: Any, reply: Reply) -> bool:
        """Queue the gateway's own reply in request order; False when the connection closes after it."""
        self._pending.put_nowait(_Pending(int(header.correlation_id), -1, -1, -1, reply))
        if reply.close_reason is not None:
            return False
        if reply.mute_ms:
            await asyncio.sleep(reply.mute_ms / 1000.0)  # a throttled client's channel reads nothing
        return True

    # -- upstream -> client ---------------------------------------------------------------------
    async def _relay(self) -> str:
        """Write the client's responses in request order; returns why the connection ends."""
        frames = _UpstreamFrames(self._up_reader, self._config.frame_timeout_s)
        try:
            while True:
                pending = await self._next_pending(frames)
                if pending is None:
                    return frames.why_ended(self._state.connection_id)
                if pending.reply is not None:
                    if pending.reply.response is not None and not await self._write(pending.reply.response):
                        return "write_timeout"
                    if pending.reply.close_reason is not None:
                        return pending.reply.close_reason
                    continue
                try:
                    frame = await frames.next()
                except (ProtocolError, asyncio.IncompleteReadError, ConnectionError, OSError) as exc:
                    log.info("closing %s: upstream failed: %s", self._state.connection_id, exc)
                    return "upstream_error"
                if frame is None:
                    return "upstream_closed"
                try:
                    response = await self._response(pending, frame)
                except PolicyError as exc:
                    log.warning("closing %s: %s response from upstream: %s", self._state.connection_id,
                                pending.api_key, exc)
                    return "upstream_error"
                if not await self._write(response):
                    return "write_timeout"
        finally:
            frames.close()

    async def _next_pending(self, frames: _UpstreamFrames) -> _Pending | None:
        """The next response owed, or None when the upstream closed (or spoke) while none was owed."""
        if not self._pending.empty():
            return self._pending.get_nowait()
        get: asyncio.Future[Any] = asyncio.ensure_future(self._pending.get())
        done, _ = await asyncio.wait((get, frames.head), return_when=asyncio.FIRST_COMPLETED)
        if get in done:
            return get.result()
        get.cancel()
        return None

    async def _write(self, data: bytes) -> bool:
        self._writer.write(data)
        try:
            async with asyncio.timeout(self._config.frame_timeout_s):
                await self._writer.drain()
        except TimeoutError:
            return False  # the client does not read its responses
        return True

    async def _response(self, pending: _Pending, frame: bytes) -> bytes:
        correlation_id = _INT32.unpack_from(frame)[0]
        if correlation_id != pending.correlation_id:
            raise ProtocolError(f"correlation id {correlation_id}, expected {pending.correlation_id}")
        if pending.api_key == API_VERSIONS_KEY:
            return self._api_versions(pending, frame)
        if self._state.sasl is not None and pending.api_key in (SASL_HANDSHAKE_KEY, SASL_AUTHENTICATE_KEY):
            self._sasl_answered(pending, frame)
            return _size_prefix(frame) + frame
        decoded = decode_endpoints(pending.api_key, pending.version, frame)
        if decoded is None or not decoded[1]:
            return _size_prefix(frame) + frame
        message, endpoints = decoded
        ports = await self._brokers.ports_for(endpoints)
        return rewrite_endpoints(message, endpoints, ports, self._config.advertised, pending.version,
                                 pending.correlation_id)

    def _api_versions(self, pending: _Pending, frame: bytes) -> bytes:
        body = _advertised_api_versions(frame[4:], pending.upstream_version, pending.version,
                                        self._handler.serves_push_config)
        if body is None:
            return _size_prefix(frame) + frame  # the KIP-511 fallback or an error: the broker's answer as is
        response = _INT32.pack(pending.correlation_id) + body
        return _size_prefix(response) + response


@functools.lru_cache(maxsize=64)
def _advertised_api_versions(upstream_body: bytes, upstream_version: int, version: int,
                             push_config: bool) -> bytes | None:
    """The body (after the correlation id) of the ApiVersions answer the gateway gives for the upstream's
    ``upstream_body``, or None when the upstream answered with an error. Cached: a cluster gives every
    connection the same answer, and a reconnecting fleet asks thousands of times a second."""
    try:
        response = ApiVersionsResponse.decode_any(_INT32.pack(0) + upstream_body, upstream_version)
    except Exception as exc:  # any decoder failure on the upstream's bytes is the same error
        raise ProtocolError("undecodable ApiVersions response") from exc
    if response.error_code != NONE:
        return None
    response.api_keys = advertised_api_keys(response.api_keys, push_config=push_config)
    return reframe(response, version, 0)[8:]  # without the size and the correlation id


async def serve_proxy_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                                 state: ConnectionState, upstream: Sequence[tuple[str, int]],
                                 config: GatewayConfig, handler: RequestHandler, registry: ConnectionRegistry,
                                 metrics: GatewayMetrics, brokers: BrokerListeners,
                                 budget: FrameBudget | None = None,
                                 reporting: dict[str, RequestUsage] | None = None) -> str:
    """Proxy one client connection through its own upstream connection; returns the reason it ended.

    ``reporting``: where its usage is, for the gateway's periodic ``connection_usage`` while it is open."""
    connection_id = state.connection_id
    usage = RequestUsage()
    if reporting is not None:
        reporting[connection_id] = usage
    up_writer: asyncio.StreamWriter | None = None
    reason = "upstream_unreachable"
    try:
        try:
            up_reader, up_writer = await _connect(config, upstream)
        except ConnectionError as exc:
            log.warning("closing %s: %s", connection_id, exc)
        else:
            proxy = _ProxyConnection(reader, writer, up_reader, up_writer, state, usage, config, handler, metrics,
                                     brokers, budget)
            reason = await proxy.run()
    except asyncio.CancelledError:
        reason = "shutdown"
    finally:
        if state.sasl is not None and state.sasl.authenticated:
            handler.register_unknown(state)  # authenticated, then ended before another request: it opened too
        if reporting is not None:
            reporting.pop(connection_id, None)
        registry.unregister(connection_id, usage.event_fields())
        metrics.closes.labels(reason=reason).inc()
        writer.close()
        if up_writer is not None:
            up_writer.close()
    for w in (writer, up_writer):
        if w is not None:
            with contextlib.suppress(ConnectionError, OSError, TimeoutError):
                await asyncio.wait_for(w.wait_closed(), 5)
    return reason

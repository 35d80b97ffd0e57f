"""One client connection: read frames under the limits, answer them in order, clean up.

Every way a connection can end is counted by reason (``eof``, ``reset``,
``idle_timeout``, ``frame_timeout``, ``write_timeout``, ``truncated_frame``,
``frame_too_large``, ``bad_request``, ``unknown_api``, ``unsupported_version``,
``invalid_request``, ``identity_changed``, ``client_id_too_long``, ``shutdown``);
none of them affects other connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from policy.exceptions import FrameError, FrameTimeoutError, ProtocolError
from policy.gateway.apis import ConnectionState, RequestHandler
from policy.gateway.config import GatewayConfig
from policy.gateway.metrics import GatewayMetrics
from policy.gateway.registry import ConnectionRegistry
from policy.protocol import FrameBudget, read_frame

__all__ = ["serve_connection"]

log = logging.getLogger(__name__)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, state: ConnectionState,
                           config: GatewayConfig, handler: RequestHandler, registry: ConnectionRegistry,
                           metrics: GatewayMetrics, budget: FrameBudget | None = None) -> str:
    """Serve one connection until it ends; returns the reason it ended."""
    connection_id = state.connection_id
    reason = "eof"
    try:
        while True:
            payload = await read_frame(reader, max_bytes=config.max_frame_bytes,
                                       idle_timeout_s=config.idle_timeout_s, frame_timeout_s=config.frame_timeout_s,
                                       budget=budget)
            if payload is None:
                break
            reply = await handler.handle(payload, state, _now_ms())
            if reply.response is not None:
                writer.write(reply.response)
                try:
                    async with asyncio.timeout(config.frame_timeout_s):
                        await writer.drain()
                except TimeoutError:
                    reason = "write_timeout"  # the client does not read its responses
                    break
            if reply.close_reason is not None:
                reason = reply.close_reason
                break
            if reply.mute_ms:
                await asyncio.sleep(reply.mute_ms / 1000.0)  # a throttled client's channel reads nothing
    except FrameError as exc:
        reason = "frame_too_large"
        log.info("closing %s: %s", connection_id, exc)
    except FrameTimeoutError:
        reason = "frame_timeout"
    except ProtocolError as exc:
        reason = "bad_request"
        log.info("closing %s: %s", connection_id, exc)
    except asyncio.IncompleteReadError:
        reason = "truncated_frame"
    except TimeoutError:
        reason = "idle_timeout"
    except (ConnectionError, OSError):
        reason = "reset"
    except asyncio.CancelledError:
        reason = "shutdown"
    finally:
        registry.unregister(connection_id)
        metrics.closes.labels(reason=reason).inc()
        writer.close()
    with contextlib.suppress(ConnectionError, OSError, TimeoutError):
        await asyncio.wait_for(writer.wait_closed(), 5)
    return reason

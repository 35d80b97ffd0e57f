"""Kafka framing: a 4-byte big-endian size, then a request or response (header + body).

Sizes and headers are read with kafka-python's codecs and header classes; the
async reader enforces the gateway's limits (frame size, idle and frame timeouts,
and a gateway-wide budget for the bytes of large frames being read).
"""

from __future__ import annotations

import asyncio
import io
from typing import Any

from kafka.protocol.api_header import RequestHeader
from kafka.protocol.schemas.fields.codecs.types import Int32

from policy.exceptions import FrameError, FrameTimeoutError, ProtocolError

__all__ = [
    "SIZE_BYTES",
    "FrameBudget",
    "decode_message",
    "encode_request",
    "encode_response",
    "peek_request_header",
    "read_frame",
]

SIZE_BYTES = 4


class FrameBudget:
    """The bytes of large request frames being read at once, gateway-wide (Kafka's ``queued.max.request.bytes``).

    A frame over ``small_bytes`` reserves its size before its body is read and gives
    it back once read; while the budget is spent, its connection reads nothing (as
    Kafka's broker mutes a channel when its memory pool is empty). Frames of at most
    ``small_bytes`` (every ApiVersions and PushConfig a real client sends) never wait:
    a flood of huge unfinished frames cannot lock a normal client out. So the bytes
    of unfinished frames stay under ``max_bytes`` + connections x ``small_bytes``.
    Used on one event loop only.
    """

    def __init__(self, max_bytes: int, small_bytes: int = 64 * 1024) -> None:
        if max_bytes < 1:
            raise ValueError("max_bytes must be at least 1")
        self.max_bytes = max_bytes
        self.small_bytes = small_bytes
        self.used = 0
        self._waiters: list[asyncio.Future[None]] = []

    async def acquire(self, size: int) -> int:
        """Reserve the bytes of a frame of ``size`` (waiting while the budget is spent); returns what to release."""
        if size <= self.small_bytes:
            return 0
        size = min(size, self.max_bytes)  # a frame larger than the whole budget waits for all of it
        while self.used + size > self.max_bytes:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        self.used += size
        return size

    def release(self, reserved: int) -> None:
        """Give back what ``acquire`` reserved; every waiting frame looks again."""
        if not reserved:
            return
        self.used -= reserved
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)


def encode_request(message: Any, version: int, correlation_id: int, client_id: str | None) -> bytes:
    """A framed request: size, request header (v1 or v2 as the version needs), body."""
    message.API_VERSION = version
    message.with_header(correlation_id=correlation_id, client_id=client_id)
    return bytes(message.encode(header=True, framed=True))


def encode_response(message: Any, version: int, correlation_id: int) -> bytes:
    """A framed response: size, response header, body."""
    message.API_VERSION = version
    message.with_header(correlation_id=correlation_id)
    return bytes(message.encode(header=True, framed=True))


def peek_request_header(payload: bytes) -> Any:
    """The request header's api key, version, correlation id and client id.

    Read as header v1, which every request starts with (v2 only appends tagged
    fields), so the api key and version are known before choosing a schema.
    """
    try:
        return RequestHeader.decode(io.BytesIO(payload), flexible=False)
    except Exception as exc:  # any decoder failure on untrusted bytes is the same error
        raise ProtocolError("undecodable request header") from exc


def decode_message(cls: Any, payload: bytes, version: int) -> Any:
    """Decode a request or response with its header; any failure is a ProtocolError."""
    try:
        return cls.decode(payload, version=version, header=True)
    except Exception as exc:  # any decoder failure on untrusted bytes is the same error
        raise ProtocolError(f"undecodable {cls.name} v{version}") from exc


async def read_frame(reader: asyncio.StreamReader, *, max_bytes: int, idle_timeout_s: float | None,
                     frame_timeout_s: float | None, budget: FrameBudget | None = None) -> bytes | None:
    """The next frame's payload, or None when the peer closed cleanly between frames.

    Raises FrameError for a size over ``max_bytes`` (or below 1),
    ``asyncio.IncompleteReadError`` for a frame cut short, ``TimeoutError``
    when no frame starts within ``idle_timeout_s``, and FrameTimeoutError when a
    started frame does not complete within ``frame_timeout_s`` (waiting for
    ``budget`` included).
    """
    # asyncio.timeout, not wait_for: Python 3.11's wait_for can lose a cancel that meets a finishing read,
    # and a connection that misses its cancel keeps the gateway's stop waiting.
    try:
        async with asyncio.timeout(idle_timeout_s):
            head = await reader.readexactly(SIZE_BYTES)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise
    size = Int32.decode(io.BytesIO(head))
    if size < 1 or size > max_bytes:
        raise FrameError(f"frame size {size} outside 1..{max_bytes}")
    reserved = 0
    try:
        async with asyncio.timeout(frame_timeout_s):
            if budget is not None:
                reserved = await budget.acquire(size)
            return await reader.readexactly(size)
    except TimeoutError:
        raise FrameTimeoutError(f"frame of {size} bytes incomplete after {frame_timeout_s}s") from None
    finally:
        if budget is not None:
            budget.release(reserved)

"""Kafka framing: a 4-byte big-endian size, then a request or response (header + body).

Sizes and headers are read with kafka-python's codecs and header classes; the
async reader enforces the gateway's limits (frame size, idle and frame timeouts).
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
    "decode_message",
    "encode_request",
    "encode_response",
    "peek_request_header",
    "read_frame",
]

SIZE_BYTES = 4


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
                     frame_timeout_s: float | None) -> bytes | None:
    """The next frame's payload, or None when the peer closed cleanly between frames.

    Raises FrameError for a size over ``max_bytes`` (or below 1),
    ``asyncio.IncompleteReadError`` for a frame cut short, ``TimeoutError``
    when no frame starts within ``idle_timeout_s``, and FrameTimeoutError when a
    started frame does not complete within ``frame_timeout_s``.
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
    try:
        async with asyncio.timeout(frame_timeout_s):
            return await reader.readexactly(size)
    except TimeoutError:
        raise FrameTimeoutError(f"frame of {size} bytes incomplete after {frame_timeout_s}s") from None

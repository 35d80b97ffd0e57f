"""One client connection that has done the KIP's ApiVersions handshake.

``PushSession.open`` connects, sends ApiVersions (v5 with ClientInstanceId by
default), applies the KIP-511 fallback when the broker answers a v0
UNSUPPORTED_VERSION (retry at the highest version it lists for ApiVersions),
and records whether the broker advertises PushConfig. ``push`` sends one
PushConfig request and returns the response. No retries here (see
``policy.client``).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from configwatch.contract import CONFIG_TYPE_IDS
from policy.api import ClientConfig
from policy.exceptions import PolicyError, ProtocolError
from policy.protocol import (
    API_VERSIONS_KEY,
    API_VERSIONS_MAX_VERSION,
    NONE,
    PUSH_CONFIG_KEY,
    UNSUPPORTED_VERSION,
    ApiVersionsRequest,
    ApiVersionsResponse,
    PushConfigRequest,
    PushConfigResponse,
    decode_message,
    encode_request,
    error_name,
    read_frame,
)

__all__ = ["ClientIdentity", "HandshakeRejectedError", "PushSession", "parse_address"]

_MAX_RESPONSE_BYTES = 16 * 1024 * 1024
_ZERO_UUID = uuid.UUID(int=0)


class HandshakeRejectedError(PolicyError):
    """The broker answered ApiVersions with an error other than the KIP-511 fallback."""

    def __init__(self, error_code: int) -> None:
        super().__init__(f"ApiVersions rejected with {error_name(error_code)}")
        self.error_code = error_code


@dataclass(frozen=True, slots=True)
class ClientIdentity:
    """Who the client says it is in ApiVersions and request headers.

    ``api_versions_version`` is the highest ApiVersions version the client speaks
    (below 3: no software name/version; below 5: no ClientInstanceId).
    """

    software_name: str | None = "configwatch-python"
    software_version: str | None = "0.1.0"
    client_id: str | None = None
    client_instance_id: str | None = None
    api_versions_version: int = API_VERSIONS_MAX_VERSION


def parse_address(address: str | tuple[str, int]) -> tuple[str, int]:
    """``host:port`` (or a tuple) to a tuple; a port is required."""
    if isinstance(address, tuple):
        return address
    host, sep, port = address.strip().rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"address {address!r} is not host:port")
    return (host.strip("[]") or "127.0.0.1", int(port))


class PushSession:
    """A connection after a successful ApiVersions exchange."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, identity: ClientIdentity,
                 request_timeout_s: float) -> None:
        self._reader = reader
        self._writer = writer
        self.identity = identity
        self._timeout = request_timeout_s
        self._correlation = 0
        self.api_versions_version: int | None = None
        self.api_ranges: dict[int, tuple[int, int]] = {}

    @classmethod
    async def open(cls, address: str | tuple[str, int], identity: ClientIdentity,
                   request_timeout_s: float = 30.0) -> PushSession:
        """Connect and perform ApiVersions; raises OSError, TimeoutError, ProtocolError or HandshakeRejectedError."""
        host, port = parse_address(address)
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), request_timeout_s)
        session = cls(reader, writer, identity, request_timeout_s)
        try:
            await session._handshake()
        except BaseException:
            await session.close()
            raise
        return session

    @property
    def supports_push(self) -> bool:
        span = self.api_ranges.get(PUSH_CONFIG_KEY)
        return span is not None and span[0] <= 0 <= span[1]

    async def _roundtrip(self, request: Any, version: int) -> bytes:
        self._correlation += 1
        self._writer.write(encode_request(request, version, self._correlation, self.identity.client_id))
        await asyncio.wait_for(self._writer.drain(), self._timeout)
        payload = await read_frame(self._reader, max_bytes=_MAX_RESPONSE_BYTES, idle_timeout_s=self._timeout,
                                   frame_timeout_s=self._timeout)
        if payload is None:
            raise ConnectionResetError("the broker closed the connection")
        return payload

    def _api_versions_request(self, version: int) -> Any:
        ident = self.identity
        instance = uuid.UUID(ident.client_instance_id) if ident.client_instance_id else _ZERO_UUID
        return ApiVersionsRequest(version=version, client_software_name=ident.software_name or "",
                                  client_software_version=ident.software_version or "",
                                  client_instance_id=instance)

    async def _handshake(self) -> None:
        version = max(0, min(self.identity.api_versions_version, API_VERSIONS_MAX_VERSION))
        for _ in range(3):
            payload = await self._roundtrip(self._api_versions_request(version), version)
            try:
                response = ApiVersionsResponse.decode_any(payload, version)
            except Exception as exc:  # any decoder failure on a broker's bytes is the same error
                raise ProtocolError("undecodable ApiVersions response") from exc
            self._check_correlation(response)
            if response.error_code == UNSUPPORTED_VERSION and version > 0:
                listed = [k for k in response.api_keys or () if k.api_key == API_VERSIONS_KEY]
                version = max(0, min(version - 1, listed[0].max_version)) if listed else 0
                continue
            if response.error_code != NONE:
                raise HandshakeRejectedError(response.error_code)
            self.api_versions_version = version
            self.api_ranges = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys or ()}
            return
        raise ProtocolError("ApiVersions version negotiation did not converge")

    def _check_correlation(self, response: Any) -> None:
        if response.header is None or response.header.correlation_id != self._correlation:
            raise ProtocolError("response correlation id does not match the request")

    async def push(self, configs: Sequence[ClientConfig]) -> Any:
        """Send one PushConfig v0 request; returns the decoded PushConfigResponse."""
        entries = [PushConfigRequest.Config(config_key=c.key, config_value=c.value or "",
                                            config_type=CONFIG_TYPE_IDS.get(c.type, 0), is_default=c.is_default)
                   for c in configs]
        payload = await self._roundtrip(PushConfigRequest(version=0, configs=entries), 0)
        response = decode_message(PushConfigResponse, payload, 0)
        self._check_correlation(response)
        return response

    @staticmethod
    def request_size(configs: Sequence[ClientConfig], client_id: str | None) -> int:
        """Size in bytes of the PushConfig request (header + body) these configs make."""
        entries = [PushConfigRequest.Config(config_key=c.key, config_value=c.value or "",
                                            config_type=CONFIG_TYPE_IDS.get(c.type, 0), is_default=c.is_default)
                   for c in configs]
        return len(encode_request(PushConfigRequest(version=0, configs=entries), 0, 0, client_id)) - 4

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError, TimeoutError):
            await asyncio.wait_for(self._writer.wait_closed(), 5)

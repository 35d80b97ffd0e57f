"""SASL as it passes through the gateway: the mechanism, who authenticates, and the broker's verdict.

The gateway holds no credentials: SaslHandshake and SaslAuthenticate go to the broker,
which authenticates. On the way it reads the mechanism (SaslHandshake) and, for PLAIN and
SCRAM, the authentication identity in the client's first SaslAuthenticate; once the
broker accepts the exchange the connection's principal is ``User:<identity>``, as the
broker's default principal builder names it. Only the identity is kept: never the
PLAIN password, a SCRAM nonce or proof, or an OAUTHBEARER token (the bytes are read in
place and dropped). KIP-368 re-authentication runs the same exchange again; the
principal stays the first one (the broker refuses another).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from policy.exceptions import ProtocolError

__all__ = ["SASL_AUTHENTICATE_KEY", "SASL_HANDSHAKE_KEY", "SASL_MECHANISMS", "SaslExchange", "identity_of",
           "response_error"]

SASL_HANDSHAKE_KEY = 17
SASL_AUTHENTICATE_KEY = 36
_FLEXIBLE_AUTHENTICATE = 2  # SaslAuthenticate v2+ uses compact fields and header v2; SaslHandshake never does
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_SCRAM = ("SCRAM-SHA-256", "SCRAM-SHA-512")
SASL_MECHANISMS = ("PLAIN", *_SCRAM, "OAUTHBEARER", "GSSAPI")  # the mechanisms Kafka ships


class _Reader:
    def __init__(self, data: bytes, offset: int = 0) -> None:
        self.data, self.at = data, offset

    def take(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise ProtocolError("SASL message cut short")
        out = self.data[self.at:self.at + n]
        self.at += n
        return out

    def int16(self) -> int:
        return int(_INT16.unpack(self.take(2))[0])

    def int32(self) -> int:
        return int(_INT32.unpack(self.take(4))[0])

    def varint(self) -> int:
        shift = value = 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 28:
                raise ProtocolError("varint too long")

    def string(self) -> str | None:
        n = self.int16()
        return None if n < 0 else self.take(n).decode("utf-8", "replace")

    def skip_tags(self) -> None:
        for _ in range(self.varint()):
            self.varint()
            self.take(self.varint())


def _request_body(payload: bytes, flexible: bool) -> _Reader:
    """A reader at the request's body (after api key, version, correlation id, client id and, flexible, tags)."""
    reader = _Reader(payload, 8)
    reader.string()  # client id: a plain nullable string in both header versions
    if flexible:
        reader.skip_tags()
    return reader


def handshake_mechanism(payload: bytes) -> str:
    """The mechanism a SaslHandshake request (v0 or v1) names."""
    return _request_body(payload, flexible=False).string() or ""


def authenticate_bytes(payload: bytes, version: int) -> bytes:
    """The ``auth_bytes`` of a SaslAuthenticate request."""
    flexible = version >= _FLEXIBLE_AUTHENTICATE
    reader = _request_body(payload, flexible)
    size = reader.varint() - 1 if flexible else reader.int32()
    return reader.take(size) if size >= 0 else b""


def response_error(frame: bytes, api_key: int, version: int) -> int:
    """The error code of a SaslHandshake or SaslAuthenticate response ``frame`` (correlation id first)."""
    reader = _Reader(frame, 4)
    if api_key == SASL_AUTHENTICATE_KEY and version >= _FLEXIBLE_AUTHENTICATE:
        reader.skip_tags()
    return reader.int16()


def identity_of(mechanism: str, auth_bytes: bytes) -> str | None:
    """The authentication identity in a client's first message: PLAIN's authcid, SCRAM's ``n=`` user name."""
    try:
        text = auth_bytes.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if mechanism == "PLAIN":
        parts = text.split("\0")
        return parts[1] or None if len(parts) == 3 else None
    if mechanism in _SCRAM:
        # client-first-message: gs2-header "n,," (or "y,,"/"p=..,,", with an optional "a=authzid"), then
        # "n=<saslname>,r=<nonce>"; the nonce is never kept.
        parts = text.split(",", 2)  # cbind flag, authzid, then the bare message
        bare = parts[2] if len(parts) == 3 and parts[0][:1] in ("n", "y", "p") else ""
        for attribute in bare.split(","):
            if attribute.startswith("n="):
                return attribute[2:].replace("=2C", ",").replace("=3D", "=") or None
    return None


@dataclass(slots=True)
class SaslExchange:
    """One connection's SASL exchange as seen passing: what the client asked, what the broker answered."""

    mechanism: str | None = None
    identity: str | None = None
    rounds: int = 0  # SaslAuthenticate round trips the broker accepted in the current exchange
    authenticated: bool = False

    def handshake(self, payload: bytes) -> None:
        self.mechanism = handshake_mechanism(payload)
        self.rounds = 0

    def authenticate(self, payload: bytes, version: int) -> None:
        """Note a SaslAuthenticate request: the first of an exchange names the identity."""
        if self.rounds == 0 and self.mechanism is not None and self.identity is None:
            self.identity = identity_of(self.mechanism, authenticate_bytes(payload, version))

    def accepted(self) -> bool:
        """The broker accepted a SaslAuthenticate round; True when that completed the exchange (once per exchange:
        the first, and each KIP-368 re-authentication, which starts with a SaslHandshake)."""
        self.rounds += 1
        done = self.rounds == (2 if self.mechanism in _SCRAM else 1)
        if done:
            self.authenticated = True
        return done

    @property
    def principal(self) -> str | None:
        return f"User:{self.identity}" if self.authenticated and self.identity else None

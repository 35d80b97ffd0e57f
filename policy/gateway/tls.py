"""TLS on both sides of the gateway, and what a TLS connection tells about its client.

``server_context`` is every listener's (clients to the gateway), ``upstream_context`` the
gateway's towards the cluster. ``tls_posture`` reads a finished handshake: the negotiated
version and cipher, whether the client presented a certificate, and the principal Kafka's
default principal builder gives it (``User:`` and the certificate's subject in RFC 2253
form, as ``javax.security.auth.x500.X500Principal.getName()`` writes it).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from configwatch.errors import UsageError

__all__ = ["TLS_VERSIONS", "TlsPosture", "principal_of", "server_context", "tls_posture", "upstream_context"]

log = logging.getLogger(__name__)

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    TLS_VERSIONS = {"TLSv1": ssl.TLSVersion.TLSv1, "TLSv1.1": ssl.TLSVersion.TLSv1_1,
                    "TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}

# X500Principal's RFC 2253 keywords for the attribute names Python's ssl module reports.
_KEYWORDS = {
    "commonName": "CN", "countryName": "C", "localityName": "L", "stateOrProvinceName": "ST",
    "organizationName": "O", "organizationalUnitName": "OU", "streetAddress": "STREET",
    "domainComponent": "DC", "userId": "UID",
}
_SPECIAL = ',+"\\<>;'


@dataclass(frozen=True, slots=True)
class TlsPosture:
    """A TLS connection as its client negotiated it."""

    version: str  # "TLSv1.3", ...
    cipher: str
    client_certificate: bool
    principal: str | None  # User:<subject> when the client presented a certificate the gateway verified


def _readable(flag: str, path: Path) -> str:
    if not path.is_file():
        raise UsageError(f"{flag} {path}: no such file")
    return str(path)


def _versions(enabled: str) -> tuple[ssl.TLSVersion, ssl.TLSVersion]:
    """The lowest and highest of ``enabled`` (Kafka's ``ssl.enabled.protocols`` names)."""
    names = [v.strip() for v in enabled.split(",") if v.strip()]
    unknown = [v for v in names if v not in TLS_VERSIONS]
    if unknown or not names:
        raise UsageError(f"--gateway-ssl-enabled-protocols {enabled!r}: name versions among "
                         f"{', '.join(TLS_VERSIONS)}")
    chosen = sorted(TLS_VERSIONS[v] for v in names)
    return chosen[0], chosen[-1]


def server_context(certfile: Path, keyfile: Path, cafile: Path | None,
                   enabled_protocols: str = "TLSv1.2,TLSv1.3") -> ssl.SSLContext:
    """The listeners' TLS: the gateway's certificate; with ``cafile``, client certificates required.

    Versions below 1.2 in ``enabled_protocols`` are accepted so their clients' posture shows (OpenSSL 3
    refuses them at its default security level, so that level is lowered for such a gateway)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    lowest, highest = _versions(enabled_protocols)
    with warnings.catch_warnings():  # Python deprecates naming TLS 1.0 and 1.1: here that is the point
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx.minimum_version, ctx.maximum_version = lowest, highest
        if lowest < ssl.TLSVersion.TLSv1_2:
            ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
            log.warning("--gateway-ssl-enabled-protocols %s: clients may connect with TLS below 1.2 (flagged "
                        "as posture-weak-tls)", enabled_protocols)
    cert, key = _readable("--gateway-ssl-certfile", certfile), _readable("--gateway-ssl-keyfile", keyfile)
    try:
        ctx.load_cert_chain(cert, key)
    except ssl.SSLError as exc:
        raise UsageError(f"--gateway-ssl-keyfile {keyfile} does not fit --gateway-ssl-certfile {certfile} "
                         f"({exc.reason or exc})") from None
    if cafile is not None:
        try:
            ctx.load_verify_locations(_readable("--gateway-ssl-cafile", cafile))
        except ssl.SSLError as exc:
            raise UsageError(f"--gateway-ssl-cafile {cafile}: no CA certificate in it ({exc.reason or exc})") \
                from None
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def upstream_context(cafile: Path | None, certfile: Path | None, keyfile: Path | None,
                     check_hostname: bool) -> ssl.SSLContext:
    """The gateway's TLS towards the cluster: brokers verified against ``cafile`` (or the system's CAs)."""
    ctx = ssl.create_default_context(cafile=_readable("--upstream-ssl-cafile", cafile) if cafile else None)
    ctx.check_hostname = check_hostname
    if certfile is not None or keyfile is not None:
        if certfile is None or keyfile is None:
            raise UsageError("--upstream-ssl-certfile and --upstream-ssl-keyfile go together")
        try:
            ctx.load_cert_chain(_readable("--upstream-ssl-certfile", certfile),
                                _readable("--upstream-ssl-keyfile", keyfile))
        except ssl.SSLError as exc:
            raise UsageError(f"--upstream-ssl-keyfile {keyfile} does not fit --upstream-ssl-certfile {certfile} "
                             f"({exc.reason or exc})") from None
    return ctx


def _escape(value: str) -> str:
    out = "".join(f"\\{c}" if c in _SPECIAL else c for c in value)
    if out.startswith((" ", "#")):
        out = "\\" + out
    return out[:-1] + "\\ " if out.endswith(" ") else out


def principal_of(cert: dict[str, Any]) -> str | None:
    """``User:`` and the subject of ``cert`` (``SSLSocket.getpeercert()``) in RFC 2253 order; None if it has none."""
    rdns = cert.get("subject") or ()
    parts = ["+".join(f"{_KEYWORDS.get(name, name)}={_escape(value)}" for name, value in rdn) for rdn in rdns]
    return "User:" + ",".join(reversed(parts)) if parts else None


def tls_posture(writer: asyncio.StreamWriter) -> TlsPosture | None:
    """The posture of a connection after its handshake; None when it is not TLS."""
    ssl_object = writer.get_extra_info("ssl_object")
    if ssl_object is None:
        return None
    cert = ssl_object.getpeercert()
    cipher = ssl_object.cipher()
    return TlsPosture(version=str(ssl_object.version()), cipher=cipher[0] if cipher else "",
                      client_certificate=bool(cert), principal=principal_of(cert) if cert else None)

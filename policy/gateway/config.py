"""The gateway's knobs, taken from ``Settings`` once (see docs/ingest.md for each)."""

from __future__ import annotations

import logging
import ssl
from dataclasses import dataclass

from configwatch.contract import SECURITY_PROTOCOLS
from configwatch.errors import UsageError
from configwatch.hostports import host_port
from configwatch.settings import Settings
from policy.gateway.ports import BrokerPorts
from policy.gateway.tls import server_context, upstream_context

__all__ = ["GatewayConfig", "parse_upstream", "uses_sasl", "uses_tls"]

log = logging.getLogger(__name__)

DEFAULT_PROTOCOL = "PLAINTEXT"


def uses_tls(protocol: str) -> bool:
    return protocol in ("SSL", "SASL_SSL")


def uses_sasl(protocol: str) -> bool:
    return protocol.startswith("SASL_")


def parse_upstream(text: str | None, security_protocol: str = DEFAULT_PROTOCOL
                   ) -> tuple[tuple[tuple[str, int], ...], str]:
    """``host:port,...`` (each optionally ``PROTOCOL://host:port``) as address pairs and the cluster's security
    protocol; no addresses means no upstream (not a proxy)."""
    if text is None:
        if security_protocol != DEFAULT_PROTOCOL:
            raise UsageError(f"--upstream-security-protocol {security_protocol}: applies only to a proxy; give the "
                             "cluster with --upstream (or leave both out)")
        return (), security_protocol
    addresses = []
    prefixed: set[str] = set()
    for item in text.split(","):
        protocol, sep, rest = item.strip().partition("://")
        if not protocol:
            continue
        if sep:
            item = rest
            prefixed.add(protocol.upper())
            if protocol.upper() not in SECURITY_PROTOCOLS:
                raise UsageError(f"--upstream: {protocol!r} is not a security protocol "
                                 f"({', '.join(SECURITY_PROTOCOLS)})")
        try:
            addresses.append(host_port(item))
        except ValueError as exc:
            raise UsageError(f"--upstream: {exc}") from None
    if not addresses:
        raise UsageError("--upstream: empty; give the cluster's HOST:PORT,... (or leave it out: no proxy)")
    if prefixed:
        named = prefixed.pop()
        if prefixed or security_protocol not in (DEFAULT_PROTOCOL, named):
            raise UsageError("--upstream: its addresses name different security protocols (or another than "
                             "--upstream-security-protocol); a cluster's listener speaks one")
        security_protocol = named
    return tuple(addresses), security_protocol


@dataclass(frozen=True, slots=True)
class GatewayConfig:
    """Listener address, the limits that keep hostile clients from hurting others, and in proxy mode the
    upstream cluster's bootstrap addresses and the first port of the per-broker listeners."""

    host: str = "127.0.0.1"
    port: int = 9192
    metrics_port: int = 9193
    broker_id: int = 0
    max_config_bytes: int = 10240
    max_frame_bytes: int = 1024 * 1024
    max_queued_request_bytes: int = 64 * 1024 * 1024
    max_connections: int = 10_000
    idle_timeout_s: float = 600.0
    frame_timeout_s: float = 30.0
    socket_send_buffer_bytes: int = 102400
    socket_receive_buffer_bytes: int = 102400
    push_rate_limit: float = 0.0
    listener: str = "PLAINTEXT"
    security_protocol: str = "PLAINTEXT"  # what clients speak to every listener of the gateway
    server_ssl: ssl.SSLContext | None = None  # SSL and SASL_SSL listeners
    upstream: tuple[tuple[str, int], ...] = ()
    upstream_protocol: str = "PLAINTEXT"
    upstream_ssl: ssl.SSLContext | None = None
    broker_ports: BrokerPorts = BrokerPorts()  # node id -> the gateway port that stands for it
    advertised_host: str | None = None  # written into responses naming brokers; None: ``host``
    tls_offered_at: str | None = None  # a plaintext gateway: where clients can connect over TLS instead
    usage_interval_s: float = 300.0  # proxy mode: connection_usage every this often (0: off)

    @property
    def sasl(self) -> bool:
        """Whether clients authenticate with SASL (passed through to the cluster)."""
        return uses_sasl(self.security_protocol)

    @property
    def advertised(self) -> str:
        return self.advertised_host or self.host

    @classmethod
    def from_settings(cls, settings: Settings) -> GatewayConfig:
        """The gateway's knobs; a setting that cannot work is a ``UsageError`` naming its flag."""
        _check(settings)
        upstream, upstream_protocol = parse_upstream(settings.upstream, settings.upstream_security_protocol)
        protocol = settings.gateway_security_protocol
        _check_security(settings, protocol, upstream_protocol, bool(upstream))
        return cls(
            host=settings.gateway_host,
            port=settings.gateway_port,
            metrics_port=settings.gateway_metrics_port,
            broker_id=settings.gateway_broker_id,
            max_config_bytes=settings.client_config_max_bytes,
            max_frame_bytes=settings.gateway_max_frame_bytes,
            max_queued_request_bytes=settings.gateway_max_queued_request_bytes,
            max_connections=settings.gateway_max_connections,
            idle_timeout_s=settings.gateway_idle_timeout_s,
            frame_timeout_s=settings.gateway_frame_timeout_s,
            socket_send_buffer_bytes=settings.gateway_socket_send_buffer_bytes,
            socket_receive_buffer_bytes=settings.gateway_socket_receive_buffer_bytes,
            push_rate_limit=settings.gateway_push_rate_limit,
            listener=protocol,
            security_protocol=protocol,
            server_ssl=server_context(settings.gateway_ssl_certfile, settings.gateway_ssl_keyfile,
                                      settings.gateway_ssl_cafile, settings.gateway_ssl_enabled_protocols)
            if uses_tls(protocol) and settings.gateway_ssl_certfile and settings.gateway_ssl_keyfile else None,
            upstream=upstream,
            upstream_protocol=upstream_protocol,
            upstream_ssl=upstream_context(settings.upstream_ssl_cafile, settings.upstream_ssl_certfile,
                                          settings.upstream_ssl_keyfile, settings.upstream_ssl_check_hostname)
            if uses_tls(upstream_protocol) else None,
            broker_ports=_broker_ports(settings),
            advertised_host=settings.gateway_advertised_host,
            usage_interval_s=settings.gateway_usage_interval_s,
            tls_offered_at=settings.gateway_tls_offered_at,
        )


def _broker_ports(settings: Settings) -> BrokerPorts:
    ports = BrokerPorts.parse(settings.gateway_broker_ports, settings.gateway_broker_port_base)
    for flag, port in (("--gateway-port", settings.gateway_port), ("--gateway-metrics-port",
                                                                   settings.gateway_metrics_port)):
        if port in ports.ports():
            raise UsageError(f"--gateway-broker-ports claims port {port}, which is {flag}")
    return ports


def _check_security(settings: Settings, protocol: str, upstream_protocol: str, proxy: bool) -> None:
    """Security settings that cannot work together are refused, naming the flag to change."""
    if uses_tls(protocol) and not (settings.gateway_ssl_certfile and settings.gateway_ssl_keyfile):
        raise UsageError(f"--gateway-security-protocol {protocol} needs --gateway-ssl-certfile and "
                         "--gateway-ssl-keyfile (PEM)")
    if not uses_tls(protocol):
        for flag, value in (("--gateway-ssl-certfile", settings.gateway_ssl_certfile),
                            ("--gateway-ssl-keyfile", settings.gateway_ssl_keyfile),
                            ("--gateway-ssl-cafile", settings.gateway_ssl_cafile)):
            if value is not None:
                raise UsageError(f"{flag} applies to an SSL or SASL_SSL --gateway-security-protocol, not {protocol}")
    if not uses_tls(upstream_protocol):
        for flag, value in (("--upstream-ssl-cafile", settings.upstream_ssl_cafile),
                            ("--upstream-ssl-certfile", settings.upstream_ssl_certfile),
                            ("--upstream-ssl-keyfile", settings.upstream_ssl_keyfile)):
            if value is not None:
                raise UsageError(f"{flag} applies to an SSL or SASL_SSL upstream, not {upstream_protocol}")
    if uses_sasl(protocol) and not proxy:
        raise UsageError(f"--gateway-security-protocol {protocol}: SASL is authenticated by the cluster behind "
                         "the gateway; give it with --upstream (proxy mode)")
    if proxy and uses_sasl(protocol) != uses_sasl(upstream_protocol):
        raise UsageError(f"--gateway-security-protocol {protocol} with a {upstream_protocol} upstream: SASL passes "
                         "through the gateway, so both sides use it or neither does")
    if settings.gateway_tls_offered_at is not None:
        if uses_tls(protocol):
            raise UsageError(f"--gateway-tls-offered-at names where TLS is offered instead of a PLAINTEXT or "
                             f"SASL_PLAINTEXT gateway; this one speaks {protocol} itself")
        host, sep, port = settings.gateway_tls_offered_at.rpartition(":")
        if not (sep and host and port.isdigit() and 0 < int(port) <= 65535):
            raise UsageError(f"--gateway-tls-offered-at {settings.gateway_tls_offered_at!r}: give HOST:PORT")
    if uses_tls(upstream_protocol) and not settings.upstream_ssl_check_hostname:
        log.warning("--no-upstream-ssl-check-hostname: the brokers' certificates are not checked against their "
                    "host names; anyone on the path with a certificate of the CA can stand in for a broker")


def _check(settings: Settings) -> None:
    ports = {"--gateway-port": (settings.gateway_port, 0),
             "--gateway-metrics-port": (settings.gateway_metrics_port, -1),
             "--gateway-broker-port-base": (settings.gateway_broker_port_base, 0)}
    for flag, (port, lowest) in ports.items():
        if not lowest <= port <= 65535:
            raise UsageError(f"{flag} {port} is not a TCP port{' (or -1: off)' if lowest < 0 else ''}")
    if settings.gateway_port > 0 and settings.gateway_metrics_port == settings.gateway_port:
        raise UsageError(f"--gateway-metrics-port {settings.gateway_metrics_port} is also --gateway-port")
    if settings.gateway_broker_id < 0:
        raise UsageError(f"--gateway-broker-id: must not be negative, got {settings.gateway_broker_id}")
    for flag, size in (("--gateway-socket-send-buffer-bytes", settings.gateway_socket_send_buffer_bytes),
                       ("--gateway-socket-receive-buffer-bytes", settings.gateway_socket_receive_buffer_bytes)):
        if size < -1:
            raise UsageError(f"{flag}: a size in bytes, or -1 or 0 for the OS default; got {size}")
    positive = {
        "--client-config-max-bytes": settings.client_config_max_bytes,
        "--policy-buffer-size": settings.policy_buffer_size,
        "--policy-buffer-bytes": settings.policy_buffer_bytes,
        "--gateway-max-frame-bytes": settings.gateway_max_frame_bytes,
        "--gateway-max-queued-request-bytes": settings.gateway_max_queued_request_bytes,
        "--gateway-max-connections": settings.gateway_max_connections,
        "--gateway-idle-timeout-s": settings.gateway_idle_timeout_s,
        "--gateway-frame-timeout-s": settings.gateway_frame_timeout_s,
    }
    for flag, value in positive.items():
        if not value > 0:
            raise UsageError(f"{flag}: must be a positive number, got {value:g}")
    if not settings.gateway_usage_interval_s >= 0:
        raise UsageError(f"--gateway-usage-interval-s: must not be negative (0: only at close), got "
                         f"{settings.gateway_usage_interval_s:g}")
    if not settings.gateway_push_rate_limit >= 0:
        raise UsageError(f"--gateway-push-rate-limit: must not be negative (0: unlimited), got "
                         f"{settings.gateway_push_rate_limit:g}")

"""The gateway's knobs, taken from ``Settings`` once (see docs/ingest.md for each)."""

from __future__ import annotations

from dataclasses import dataclass

from configwatch.contract import SECURITY_PROTOCOLS
from configwatch.errors import UsageError
from configwatch.hostports import host_port
from configwatch.settings import Settings

__all__ = ["GatewayConfig", "parse_upstream"]


SUPPORTED_UPSTREAM_PROTOCOL = "PLAINTEXT"


def parse_upstream(text: str | None,
                   security_protocol: str = SUPPORTED_UPSTREAM_PROTOCOL) -> tuple[tuple[str, int], ...]:
    """``host:port,host:port`` (optionally ``PLAINTEXT://host:port``) as address pairs; None means no upstream
    (not a proxy). TLS and SASL upstreams are refused: the gateway does not terminate them."""
    if text is None:
        if security_protocol != SUPPORTED_UPSTREAM_PROTOCOL:
            raise UsageError(f"--upstream-security-protocol {security_protocol}: applies only to a proxy; give the "
                             "cluster with --upstream (or leave both out)")
        return ()
    addresses = []
    for item in text.split(","):
        protocol, sep, rest = item.strip().partition("://")
        if not protocol:
            continue
        if sep:
            item, security_protocol = rest, protocol.upper()
        if security_protocol not in SECURITY_PROTOCOLS:
            raise UsageError(f"--upstream: {protocol!r} is not a security protocol ({', '.join(SECURITY_PROTOCOLS)})")
        if security_protocol != SUPPORTED_UPSTREAM_PROTOCOL:
            raise UsageError(f"--upstream: a {security_protocol} upstream is not supported yet; the gateway proxies "
                             "plaintext clusters only (see docs/ingest.md, Proxy mode)")
        try:
            addresses.append(host_port(item))
        except ValueError as exc:
            raise UsageError(f"--upstream: {exc}") from None
    if not addresses:
        raise UsageError("--upstream: empty; give the cluster's HOST:PORT,... (or leave it out: no proxy)")
    return tuple(addresses)


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
    security_protocol: str = "PLAINTEXT"
    upstream: tuple[tuple[str, int], ...] = ()
    broker_port_base: int = 0

    @classmethod
    def from_settings(cls, settings: Settings) -> GatewayConfig:
        """The gateway's knobs; a setting that cannot work is a ``UsageError`` naming its flag."""
        _check(settings)
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
            upstream=parse_upstream(settings.upstream, settings.upstream_security_protocol),
            broker_port_base=settings.gateway_broker_port_base,
        )


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
    if not settings.gateway_push_rate_limit >= 0:
        raise UsageError(f"--gateway-push-rate-limit: must not be negative (0: unlimited), got "
                         f"{settings.gateway_push_rate_limit:g}")

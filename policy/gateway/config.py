"""The gateway's knobs, taken from ``Settings`` once (see docs/ingest.md for each)."""

from __future__ import annotations

from dataclasses import dataclass

from configwatch.settings import Settings

__all__ = ["GatewayConfig"]


@dataclass(frozen=True, slots=True)
class GatewayConfig:
    """Listener address and the limits that keep hostile clients from hurting others."""

    host: str = "127.0.0.1"
    port: int = 9192
    metrics_port: int = 9193
    broker_id: int = 0
    max_config_bytes: int = 10240
    max_frame_bytes: int = 1024 * 1024
    max_connections: int = 10_000
    idle_timeout_s: float = 600.0
    frame_timeout_s: float = 30.0
    push_rate_limit: float = 0.0
    listener: str = "PLAINTEXT"
    security_protocol: str = "PLAINTEXT"

    @classmethod
    def from_settings(cls, settings: Settings) -> GatewayConfig:
        return cls(
            host=settings.gateway_host,
            port=settings.gateway_port,
            metrics_port=settings.gateway_metrics_port,
            broker_id=settings.gateway_broker_id,
            max_config_bytes=settings.client_config_max_bytes,
            max_frame_bytes=settings.gateway_max_frame_bytes,
            max_connections=settings.gateway_max_connections,
            idle_timeout_s=settings.gateway_idle_timeout_s,
            frame_timeout_s=settings.gateway_frame_timeout_s,
            push_rate_limit=settings.gateway_push_rate_limit,
        )

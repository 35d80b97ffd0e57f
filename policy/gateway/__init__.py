"""The PushConfig gateway: the broker side of the draft KIP, on the Kafka wire protocol."""

from policy.gateway.config import GatewayConfig
from policy.gateway.server import Gateway
from policy.gateway.service import GatewayHandle, running_gateway, serve_gateway

__all__ = ["Gateway", "GatewayConfig", "GatewayHandle", "running_gateway", "serve_gateway"]

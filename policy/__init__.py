"""The ingest edge: the draft KIP's ClientConfigPolicy, the PushConfig gateway, the client handshake.

- ``ClientConfigPolicy`` and its data (``ClientConfig``, ``ClientConfigData``,
  ``RequestContext``): the KIP's plugin API in Python (``policy.api``).
- ``KafkaTopicPolicy``: publishes each push as a contract ``config_push`` event,
  redacting sensitive values at the edge (``policy.kafka_policy``).
- ``running_gateway`` / ``serve_gateway``: the broker side on the Kafka wire
  protocol (``policy.gateway``); ``push_config``: the client side (``policy.client``).
- The fleet simulator lives in ``policy.simulator``.
"""

from policy.api import ClientConfig, ClientConfigData, ClientConfigPolicy, RequestContext
from policy.client import ClientIdentity, PushOptions, PushResult, push_config, push_config_async
from policy.exceptions import PolicyConfigError, PolicyError, PolicyViolationError, ProtocolError
from policy.gateway import running_gateway, serve_gateway
from policy.kafka_policy import KafkaTopicPolicy

__all__ = [
    "ClientConfig",
    "ClientConfigData",
    "ClientConfigPolicy",
    "ClientIdentity",
    "KafkaTopicPolicy",
    "PolicyConfigError",
    "PolicyError",
    "PolicyViolationError",
    "ProtocolError",
    "PushOptions",
    "PushResult",
    "RequestContext",
    "push_config",
    "push_config_async",
    "running_gateway",
    "serve_gateway",
]

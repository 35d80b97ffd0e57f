"""``KafkaTopicPolicy``: publish each push as a contract ``config_push`` event.

Redacts at the edge by default (``redact_sensitive``), returns the violation
description for the RPC response, and never blocks: events go through an
``EventPublisher`` (bounded buffer; a full buffer counts the push as dropped).
Inside the gateway the policy shares the gateway's publisher, so a connection's
``connection_opened``, ``config_push`` and ``connection_closed`` events leave
through one producer, in order; standalone it builds its own.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from configwatch.contract import CONFIG_PUSH, INPUT_TOPIC
from configwatch.records import Event
from configwatch.secrets import SecretStr
from policy.api import ClientConfigData, ClientConfigPolicy, RequestContext
from policy.exceptions import PolicyConfigError
from policy.publisher import EventPublisher, EventSink
from policy.redaction import redact, violation_message

__all__ = ["KafkaTopicPolicy"]

log = logging.getLogger(__name__)


class KafkaTopicPolicy(ClientConfigPolicy):
    """The configwatch ClientConfigPolicy; see the module docstring.

    Settings read by ``configure``: ``bootstrap_servers`` (needed unless a
    publisher was attached), ``input_topic``, ``fingerprint_key`` (required),
    ``redact_sensitive`` (default true) and ``policy_buffer_size``.
    """

    def __init__(self) -> None:
        self._sink: EventSink | None = None
        self._owned: EventPublisher | None = None
        self._key: SecretStr | bytes | None = None
        self._redact = True

    def attach_publisher(self, publisher: EventSink) -> None:
        """Publish through ``publisher`` (the gateway's) instead of a producer of its own."""
        self._sink = publisher

    @property
    def publisher(self) -> EventSink | None:
        return self._sink

    def configure(self, configs: Mapping[str, Any]) -> None:
        key = configs.get("fingerprint_key")
        if not key:
            raise PolicyConfigError("KafkaTopicPolicy needs fingerprint_key")
        self._key = key
        self._redact = bool(configs.get("redact_sensitive", True))
        if self._sink is None:
            bootstrap = configs.get("bootstrap_servers")
            if not bootstrap:
                raise PolicyConfigError("KafkaTopicPolicy needs bootstrap_servers")
            self._owned = EventPublisher(bootstrap, configs.get("input_topic") or INPUT_TOPIC,
                                         buffer_size=int(configs.get("policy_buffer_size", 10_000)),
                                         client_id="configwatch-policy")
            self._sink = self._owned
        if not self._redact:
            log.warning("redaction is off: sensitive config values will be published as sent")

    def reconfigurable_configs(self) -> frozenset[str]:
        return frozenset({"redact_sensitive"})

    def reconfigure(self, configs: Mapping[str, Any]) -> None:
        if "redact_sensitive" in configs:
            self._redact = bool(configs["redact_sensitive"])
            log.info("redaction is now %s", "on" if self._redact else "off")

    def process(self, context: RequestContext, data: ClientConfigData) -> str | None:
        if self._sink is None or self._key is None:
            raise PolicyConfigError("KafkaTopicPolicy.process called before configure")
        result = redact(data.configs, self._key, enabled=self._redact)
        event = Event(event=CONFIG_PUSH, timestamp_ms=data.timestamp, configs=result.entries,
                      request_size_bytes=data.size_bytes, **context.event_fields())
        self._sink.offer(event)
        if not result.sensitive:
            return None
        return violation_message(result.sensitive, redacted=self._redact)

    def close(self) -> None:
        if self._owned is not None:
            self._owned.close()
            self._owned = None

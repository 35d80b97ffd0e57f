"""``KafkaTopicPolicy``: publish each push as a contract ``config_push`` event.

Redacts at the edge by default (``redact_sensitive``), returns the violation
description for the RPC response, and never blocks: events go through an
``EventPublisher`` (bounded buffer); a push it cannot publish soon is refused with
``PolicyUnavailableError``, which the gateway answers with a retriable error.
Inside the gateway the policy shares the gateway's publisher, so a connection's
``connection_opened``, ``config_push`` and ``connection_closed`` events leave
through one producer, in order; standalone it builds its own.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from configwatch.contract import INPUT_TOPIC
from configwatch.secrets import SecretStr
from policy.api import ClientConfigData, ClientConfigPolicy, RequestContext
from policy.exceptions import PolicyConfigError, PolicyUnavailableError
from policy.publisher import EventPublisher, EventSink
from policy.redaction import redact_all, violation_message

__all__ = ["KafkaTopicPolicy"]

log = logging.getLogger(__name__)


class KafkaTopicPolicy(ClientConfigPolicy):
    """The configwatch ClientConfigPolicy; see the module docstring.

    Settings read by ``configure``: ``bootstrap_servers`` (needed unless a
    publisher was attached), ``input_topic``, ``fingerprint_key`` (required),
    ``redact_sensitive`` (default true), ``policy_buffer_size`` and ``policy_buffer_bytes``.
    """

    def __init__(self) -> None:
        self._sink: EventSink | None = None
        self._owned: EventPublisher | None = None
        self._key: SecretStr | None = None
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
        self._key = key if isinstance(key, SecretStr) else SecretStr(
            key.decode("utf-8") if isinstance(key, bytes) else str(key))
        self._redact = bool(configs.get("redact_sensitive", True))
        if self._sink is None:
            bootstrap = configs.get("bootstrap_servers")
            if not bootstrap:
                raise PolicyConfigError("KafkaTopicPolicy needs bootstrap_servers")
            self._owned = EventPublisher(bootstrap, configs.get("input_topic") or INPUT_TOPIC,
                                         buffer_size=int(configs.get("policy_buffer_size", 10_000)),
                                         buffer_bytes=int(configs.get("policy_buffer_bytes", 32 * 1024 * 1024)),
                                         client_id="configwatch-policy", identity_key=self._key)
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
        outcome = self.process_all([(context, data)])[0]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def process_all(self, requests: Sequence[tuple[RequestContext, ClientConfigData]]) -> list[str | Exception | None]:
        """Redact the pushes in one pass, then offer each: its violation, None, or why it cannot be recorded now."""
        if self._sink is None or self._key is None:
            raise PolicyConfigError("KafkaTopicPolicy.process called before configure")
        if (why := self._sink.unavailable()) is not None:
            return [PolicyUnavailableError(f"the push cannot be recorded now: {why}") for _ in requests]
        outcomes: list[str | Exception | None] = []
        for result in redact_all(requests, self._key, enabled=self._redact):
            # Asked before each offer: a push refused now is retried by its client, not dropped.
            if (why := self._sink.unavailable()) is not None:
                outcomes.append(PolicyUnavailableError(f"the push cannot be recorded now: {why}"))
            elif not self._sink.offer(result.event):
                outcomes.append(PolicyUnavailableError("the push cannot be recorded now: the publish buffer is full"))
            elif result.sensitive:
                outcomes.append(violation_message(result.sensitive, redacted=self._redact))
            else:
                outcomes.append(None)
        return outcomes

    def close(self) -> None:
        if self._owned is not None:
            self._owned.close()
            self._owned = None

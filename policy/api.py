"""The draft KIP's broker-side plugin API, in Python.

``ClientConfig`` and ``ClientConfigData`` mirror the KIP's Java records,
``RequestContext`` carries what the broker knows about the connection (the
KIP's AuthorizableRequestContext plus the KIP-511/KIP-714 client identity), and
``ClientConfigPolicy`` is the plugin interface: ``configure``, ``reconfigure``,
``process`` and ``close``, plus ``process_all``, the gateway's way to hand it the
pushes that arrived together. Neither may block for long.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from types import TracebackType
from typing import Any

__all__ = ["ClientConfig", "ClientConfigData", "ClientConfigPolicy", "RequestContext"]


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """One pushed entry: ``ClientConfig(key, value, type, isDefault)``.

    ``type`` is the ConfigDef.Type name (``configwatch.contract.CONFIG_TYPES``);
    the wire carries every value as a string. Its repr leaves the value out.
    """

    key: str
    value: str | None = field(repr=False)
    type: str
    is_default: bool

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ClientConfig:
        return cls(key=d["key"], value=d.get("value"), type=d["type"], is_default=bool(d["is_default"]))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ClientConfigData:
    """One PushConfig request's data: its entries and the broker's receive time (epoch ms).

    ``size_bytes`` (an addition to the KIP's record) is the size of the request
    as received, published as the contract's ``request_size_bytes``.
    """

    configs: tuple[ClientConfig, ...]
    timestamp: int
    size_bytes: int | None = None

    @classmethod
    def from_json(cls, data: str | bytes) -> ClientConfigData:
        d = json.loads(data)
        return cls(configs=tuple(ClientConfig.from_dict(c) for c in d["configs"]),
                   timestamp=int(d["timestamp"]), size_bytes=d.get("size_bytes"))

    def to_json(self) -> str:
        return json.dumps({"configs": [c.to_dict() for c in self.configs], "timestamp": self.timestamp,
                           "size_bytes": self.size_bytes}, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What the broker (gateway) knows about the connection a request came on."""

    connection_id: str
    client_address: str | None = None
    listener: str | None = "PLAINTEXT"
    security_protocol: str | None = "PLAINTEXT"
    principal: str | None = "User:ANONYMOUS"
    client_id: str | None = None
    client_instance_id: str | None = None
    client_software_name: str | None = None
    client_software_version: str | None = None
    broker_id: int | None = None
    tls_version: str | None = None  # the connection's posture (TLS listeners, SASL): None where it does not apply
    tls_cipher: str | None = None
    sasl_mechanism: str | None = None
    client_certificate: bool | None = None
    tls_offered_at: str | None = None  # a plaintext listener: where the same cluster is reachable over TLS

    def event_fields(self) -> dict[str, Any]:
        """The contract's identity fields of an event seen on this connection."""
        return asdict(self)


class ClientConfigPolicy(ABC):
    """The KIP's ``ClientConfigPolicy`` (Reconfigurable, AutoCloseable).

    The gateway builds one instance from ``client_config_policy_class_name``
    (a dotted Python path) with no arguments, calls ``configure`` with the
    gateway's settings (a mapping of ``Settings`` field names to values, plus
    ``bootstrap_servers`` resolved), hands it every accepted PushConfig request
    through ``process_all`` (on a thread of its own, the requests that arrived
    while the previous call ran; by default ``process`` one by one), and calls
    ``close`` at shutdown.

    ``process`` returns ``None`` when the push is fine, or a description of a
    violation (never containing a value) that the gateway puts in the response's
    ErrorMessage with INVALID_CONFIG. Raising ``PolicyViolationError`` does the same;
    any other exception counts as a process() error (UNKNOWN_SERVER_ERROR).
    """

    def configure(self, configs: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook, as in Kafka
        """Receive the gateway's settings once, before the first ``process``."""

    def reconfigurable_configs(self) -> frozenset[str]:
        """Names of the settings ``reconfigure`` accepts at run time."""
        return frozenset()

    def reconfigure(self, configs: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook, as in Kafka
        """Apply new values of (some of) ``reconfigurable_configs`` at run time."""

    @abstractmethod
    def process(self, context: RequestContext, data: ClientConfigData) -> str | None:
        """Handle one push; must not block. Returns a violation description or None."""

    def process_all(self, requests: Sequence[tuple[RequestContext, ClientConfigData]]) -> list[str | Exception | None]:
        """``process`` for pushes that arrived together, in order: each one's violation, None, or the exception its
        ``process`` would have raised. The gateway calls this, off its event loop; override it to judge them in one
        pass (``KafkaTopicPolicy`` does)."""
        outcomes: list[str | Exception | None] = []
        for context, data in requests:
            try:
                outcomes.append(self.process(context, data))
            except Exception as exc:  # each push's own outcome, as process() alone would give
                outcomes.append(exc)
        return outcomes

    def close(self) -> None:  # noqa: B027 - optional hook, as in Kafka
        """Release resources; flush anything buffered."""

    def __enter__(self) -> ClientConfigPolicy:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

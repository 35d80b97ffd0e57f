"""The root of every configwatch exception, and the core package's own errors."""

from __future__ import annotations

__all__ = ["BrokerUnreachableError", "ConfigwatchError", "ContractError", "SetupError", "UsageError"]


class ConfigwatchError(Exception):
    """Root of all configwatch errors. The CLI prints these as one line."""


class UsageError(ConfigwatchError):
    """A user gave a flag, setting or argument that cannot work."""


class SetupError(ConfigwatchError):
    """Something the system needs (Java, Maven, jars, a port) is not available."""


class BrokerUnreachableError(SetupError):
    """Kafka did not answer within the connect deadline (``configwatch.reachability``)."""


class ContractError(ConfigwatchError):
    """A record breaks the record contract (shared/spec/records.md).

    ``reason`` is the stable quarantine reason code, e.g. ``not_json`` or
    ``missing_field:timestamp_ms``. The message never contains the payload.
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail

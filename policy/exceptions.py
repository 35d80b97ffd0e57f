"""Errors of the ingest edge (policy, wire protocol, gateway, client, simulator)."""

from __future__ import annotations

from configwatch.errors import ConfigwatchError

__all__ = [
    "FrameError",
    "FrameTimeoutError",
    "PolicyConfigError",
    "PolicyError",
    "PolicyUnavailableError",
    "PolicyViolationError",
    "ProtocolError",
]


class PolicyError(ConfigwatchError):
    """Root of the ``policy`` package's errors."""


class PolicyConfigError(PolicyError):
    """A policy cannot be loaded or configured (bad class name, missing setting)."""


class PolicyViolationError(PolicyError):
    """Raised by a ClientConfigPolicy's ``process`` to refuse a push.

    The gateway answers INVALID_CONFIG with this exception's message, which
    therefore must never contain a configuration value.
    """


class PolicyUnavailableError(PolicyError):
    """Raised by a ClientConfigPolicy's ``process`` when it cannot record a push now.

    The gateway answers a retriable error with a throttle time, so the client
    retries later instead of believing a push was recorded.
    """


class ProtocolError(PolicyError):
    """Bytes on the wire that are not a request (or response) we can read."""


class FrameError(ProtocolError):
    """A frame length that is negative, zero or over the configured limit."""


class FrameTimeoutError(ProtocolError):
    """A frame that started but did not complete within the frame timeout."""

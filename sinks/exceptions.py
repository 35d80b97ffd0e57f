"""Errors of the sinks package; all derive from ``configwatch.errors.ConfigwatchError``."""

from __future__ import annotations

from configwatch.errors import ConfigwatchError

__all__ = ["SinkError", "SinkSetupError", "SinkWriteError"]


class SinkError(ConfigwatchError):
    """Root of the sink errors."""


class SinkSetupError(SinkError):
    """A sink's destination cannot be prepared (topic creation refused, directory not writable)."""


class SinkWriteError(SinkError):
    """Records could not be delivered. The Spark task fails, so the batch is retried, never lost.

    ``retry_after_s`` is a hint for back-pressure (e.g. an HTTP 429), ``None`` when unknown.
    """

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s

"""Errors of the sinks package; all derive from ``configwatch.errors.ConfigwatchError``."""

from __future__ import annotations

from configwatch.errors import ConfigwatchError

__all__ = ["SinkError", "SinkSetupError", "SinkTargetError", "SinkWriteError"]


class SinkError(ConfigwatchError):
    """Root of the sink errors."""


class SinkSetupError(SinkError):
    """A sink's destination cannot be prepared (topic creation refused, directory not writable)."""


class SinkTargetError(SinkError):
    """A ``--sink`` value that names no sink, or a bad argument for one (the message is one line)."""


class SinkWriteError(SinkError):
    """Records could not be delivered. The Spark task fails, so the batch is retried, never lost."""

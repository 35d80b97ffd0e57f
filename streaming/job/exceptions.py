"""Errors of the streaming job; all derive from ``configwatch.errors.ConfigwatchError``."""

from __future__ import annotations

from configwatch.errors import BrokerUnreachableError, ConfigwatchError, SetupError, UsageError

__all__ = ["BrokerUnreachableError", "CheckpointFormatError", "JobError", "JobUsageError", "StopRequestedError"]


class JobError(ConfigwatchError):
    """A streaming query failed; the message names the query and the first line of the cause."""


class JobUsageError(UsageError):
    """A job flag that cannot work (bad ``--source``/``--sink``, a missing directory)."""


class CheckpointFormatError(SetupError):
    """The checkpoint holds state this release cannot run (``streaming.job.checkpoint``)."""


class StopRequestedError(JobError):
    """Raised inside a batch that starts after a graceful stop began: the batch is refused, not lost.

    It is raised from a JVM ``InterruptedException`` once the query is marked
    stopped, so Spark ends the query as stopped without committing that batch;
    a restart runs it again.
    """

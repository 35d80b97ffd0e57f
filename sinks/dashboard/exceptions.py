"""Errors of the dashboard service; all derive from ``configwatch.errors.ConfigwatchError``."""

from __future__ import annotations

from configwatch.errors import ConfigwatchError, UsageError

__all__ = ["DashboardError", "UnsafeBindError"]


class DashboardError(ConfigwatchError):
    """The dashboard cannot start or serve (e.g. its port is taken)."""


class UnsafeBindError(DashboardError, UsageError):
    """A non-loopback bind address was asked for without a bearer token."""

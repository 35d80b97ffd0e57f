"""Errors of the rule catalog and the detection functions."""

from __future__ import annotations

from configwatch.errors import ConfigwatchError

__all__ = ["KeySetError", "RulesError"]


class RulesError(ConfigwatchError):
    """A rule, the catalog or a detection input is inconsistent."""


class KeySetError(RulesError):
    """A known-key data file is missing or malformed."""

"""Errors of the gateway's proxy mode."""

from __future__ import annotations

from policy.exceptions import PolicyError

__all__ = ["UpstreamError"]


class UpstreamError(PolicyError):
    """The upstream cluster cannot be used as configured (bad address list, no port for a broker)."""

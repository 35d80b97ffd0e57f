"""``configwatch dashboard``: live gauges, alerts and client drill-down, plus Prometheus ``/metrics``.

Consumes the compacted gauges topic (rebuilt from its start), the alerts topic
and the input topic's config pushes (fingerprinted before they are kept), and
serves a live page, JSON endpoints and metrics. See ``docs/dashboard.md``.
"""

from sinks.dashboard.exceptions import DashboardError, UnsafeBindError
from sinks.dashboard.service import DashboardConfig, DashboardService
from sinks.dashboard.state import Topics

__all__ = [
    "DashboardConfig",
    "DashboardError",
    "DashboardService",
    "Topics",
    "UnsafeBindError",
]

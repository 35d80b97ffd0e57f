"""Serve the live dashboard and Prometheus metrics over the job's Kafka topics.

  configwatch dashboard                                  # http://127.0.0.1:8765/ on the local broker
  configwatch dashboard --bootstrap-servers kafka:9092
  CONFIGWATCH_DASHBOARD_TOKEN=... configwatch dashboard --host 0.0.0.0

Routes: / (live page), /metrics (Prometheus), /api/gauges, /api/alerts?severity=,
/api/clients/<client_instance_id>, /healthz. Binding anything but loopback needs
a bearer token. See docs/dashboard.md.
"""

from __future__ import annotations

import argparse
import logging
import signal
import threading
from types import FrameType
from typing import TYPE_CHECKING

from configwatch.errors import UsageError
from configwatch.localkafka import running_bootstrap
from configwatch.settings import Settings

if TYPE_CHECKING:
    from sinks.dashboard import DashboardConfig

__all__ = ["add_arguments", "run"]

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--host", dest="dashboard_host", default=None, metavar="ADDR",
                        help="same as --dashboard-host (default 127.0.0.1)")
    parser.add_argument("--port", dest="dashboard_port", type=int, default=None, metavar="PORT",
                        help="same as --dashboard-port (default 8765)")


def _check_flags(settings: Settings) -> None:
    """What the flags get wrong, said before any network: the port, the limits, a safe bind (topics: Settings)."""
    from sinks.dashboard.auth import require_safe_bind

    if not 0 <= settings.dashboard_port <= 65535:
        raise UsageError(f"--dashboard-port {settings.dashboard_port} is not a TCP port")
    for flag, limit in (("--dashboard-max-clients", settings.dashboard_max_clients),
                        ("--dashboard-max-client-bytes", settings.dashboard_max_client_bytes),
                        ("--dashboard-max-alerts", settings.dashboard_max_alerts)):
        if limit <= 0:
            raise UsageError(f"{flag}: must be a positive number, got {limit}")
    require_safe_bind(settings.dashboard_host, settings.dashboard_token or None)


def config_from(settings: Settings, bootstrap: str) -> DashboardConfig:
    """The service configuration the settings describe."""
    from sinks.dashboard import DashboardConfig, Topics

    return DashboardConfig(
        bootstrap_servers=bootstrap,
        topics=Topics(gauges=settings.gauges_topic, alerts=settings.alerts_topic, configs=settings.input_topic,
                      usage=settings.usage_topic),
        fingerprint_key=settings.fingerprint_key,
        host=settings.dashboard_host,
        port=settings.dashboard_port,
        token=settings.dashboard_token or None,
        max_clients=settings.dashboard_max_clients,
        max_client_bytes=settings.dashboard_max_client_bytes,
        max_alerts=settings.dashboard_max_alerts,
    )


def run(settings: Settings, args: argparse.Namespace) -> int:
    from sinks.dashboard import DashboardService  # imported here: other commands need none of it

    _check_flags(settings)
    service = DashboardService(config_from(settings, running_bootstrap(settings)))
    stop = threading.Event()

    def _on_term(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, _on_term)
    service.start()
    try:
        print(f"dashboard: {service.url}  (metrics: {service.url}metrics)", flush=True)
        while not stop.wait(1.0):
            pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        service.stop()
    return 0

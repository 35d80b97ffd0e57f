"""The dashboard service: state + Kafka consumer thread + HTTP server, started and stopped together."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from configwatch.secrets import SecretStr
from sinks.dashboard.auth import Authenticator, require_safe_bind
from sinks.dashboard.consumer import FeedConsumer
from sinks.dashboard.exceptions import DashboardError
from sinks.dashboard.metrics import DashboardCollector, build_registry
from sinks.dashboard.server import DashboardHTTPServer, load_assets
from sinks.dashboard.state import DashboardState, Topics

__all__ = ["DashboardConfig", "DashboardService"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DashboardConfig:
    """What the service needs; the CLI builds it from :class:`configwatch.settings.Settings`."""

    bootstrap_servers: str
    topics: Topics
    fingerprint_key: SecretStr
    host: str = "127.0.0.1"
    port: int = 8765
    token: SecretStr | None = None
    max_clients: int = 10_000
    max_client_bytes: int = 64 * 1024 * 1024
    max_alerts: int = 2_000
    max_series: int = 1_000
    poll_ms: int = 100  # the consumer's fetch wait: bounds how long a new record waits (docs/benchmarks.md)


class DashboardService:
    """``start()`` binds and begins consuming; ``stop()`` ends both. Usable as a context manager."""

    def __init__(self, config: DashboardConfig) -> None:
        require_safe_bind(config.host, config.token)
        self.config = config
        self.state = DashboardState(config.topics, max_clients=config.max_clients,
                                    max_client_bytes=config.max_client_bytes, max_alerts=config.max_alerts)
        self._consumer = FeedConsumer(config.bootstrap_servers, self.state, config.fingerprint_key,
                                      poll_ms=config.poll_ms)
        self._server: DashboardHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        host = self.config.host
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else ("[::1]" if host == "::" else host)
        if ":" in shown and not shown.startswith("["):
            shown = f"[{shown}]"
        return f"http://{shown}:{self._server.server_port}/"

    def start(self) -> DashboardService:
        auth = Authenticator(self.config.token)
        collector = DashboardCollector(self.state, max_series=self.config.max_series,
                                       sse_clients=lambda: self._server.live_count() if self._server else 0)
        assets = load_assets()
        try:
            self._server = DashboardHTTPServer((self.config.host, self.config.port), self.state,
                                               build_registry(collector), auth, assets)
        except OSError as exc:
            raise DashboardError(f"cannot listen on {self.config.host}:{self.config.port}: {exc.strerror}") from None
        try:
            self._consumer.start()
        except DashboardError:
            self._server.server_close()
            raise
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="dashboard-http", daemon=True)
        self._thread.start()
        log.info("dashboard serving %s (gauges %s, alerts %s, configs %s)", self.url,
                 self.config.topics.gauges, self.config.topics.alerts, self.config.topics.configs)
        return self

    def wait_ready(self, timeout_s: float) -> bool:
        """Block until the gauges topic was read to its startup end (or the timeout passes)."""
        return self.state.health.wait_ready(timeout_s)

    def stop(self) -> None:
        self._consumer.stop()
        self.state.changes.close()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)
        log.info("dashboard stopped")

    def __enter__(self) -> DashboardService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

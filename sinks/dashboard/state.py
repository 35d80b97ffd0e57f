"""Everything the dashboard knows, in one object shared by the consumer and the web server.

Each part is thread-safe on its own; only the consumer thread writes, the
HTTP handler threads and the Prometheus collector read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sinks.dashboard.alerts import AlertFeed
from sinks.dashboard.changes import ChangeFeed
from sinks.dashboard.clients import ClientConfigs
from sinks.dashboard.fleet import FleetGauges
from sinks.dashboard.health import ConsumerHealth

__all__ = ["DashboardState", "Topics"]


@dataclass(frozen=True)
class Topics:
    """The three topics the dashboard follows."""

    gauges: str
    alerts: str
    configs: str

    def roles(self) -> dict[str, str]:
        return {self.gauges: "gauges", self.alerts: "alerts", self.configs: "configs"}


@dataclass
class DashboardState:
    topics: Topics
    max_clients: int = 10_000
    max_client_bytes: int = 64 * 1024 * 1024
    max_alerts: int = 2_000
    fleet: FleetGauges = field(default_factory=FleetGauges)
    alerts: AlertFeed = field(init=False)
    clients: ClientConfigs = field(init=False)
    health: ConsumerHealth = field(init=False)
    changes: ChangeFeed = field(default_factory=ChangeFeed)

    def __post_init__(self) -> None:
        if len(set(self.topics.roles())) != 3:
            raise ValueError("the gauges, alerts and configs topics must be three different topics")
        self.alerts = AlertFeed(max_alerts=self.max_alerts)
        self.clients = ClientConfigs(self.max_clients, self.max_client_bytes)
        self.health = ConsumerHealth(self.topics.roles())

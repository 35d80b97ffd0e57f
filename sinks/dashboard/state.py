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
from sinks.dashboard.usage import UsageTable

__all__ = ["DashboardState", "Topics"]


@dataclass(frozen=True)
class Topics:
    """The topics the dashboard follows (``usage``: the job's request versions per client version, optional)."""

    gauges: str
    alerts: str
    configs: str
    usage: str | None = None

    def roles(self) -> dict[str, str]:
        roles = {self.gauges: "gauges", self.alerts: "alerts", self.configs: "configs"}
        if self.usage is not None:
            roles[self.usage] = "usage"
        return roles


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
    usage: UsageTable = field(default_factory=UsageTable)

    def __post_init__(self) -> None:
        named = [t for t in (self.topics.gauges, self.topics.alerts, self.topics.configs, self.topics.usage) if t]
        if len(set(named)) != len(named):
            raise ValueError("the gauges, alerts, configs and usage topics must be different topics")
        self.alerts = AlertFeed(max_alerts=self.max_alerts)
        self.clients = ClientConfigs(self.max_clients, self.max_client_bytes)
        self.health = ConsumerHealth(self.topics.roles())

"""One call for the demo and ``configwatch simulate``: a gateway on the broker, a fleet through it.

``run_gateway_and_simulator`` starts a gateway (free ports unless told
otherwise) that publishes to ``settings.input_topic`` on ``bootstrap_servers``,
drives a generated fleet through it over TCP, shuts the gateway down (which
flushes every event), and returns the client-side report together with the
gateway's publisher counts, so every push is accounted for:
``published + dropped + publish_failed + rejected + failed == attempted``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TextIO

from configwatch.contract import CONFIG_PUSH
from configwatch.settings import Settings
from policy.gateway import running_gateway
from policy.publisher import PublisherStats
from policy.simulator.fleet import FleetSpec, generate_fleet
from policy.simulator.progress import Progress
from policy.simulator.runner import RunOptions, SimulationReport, run_over_tcp

__all__ = ["GatewaySimulation", "run_gateway_and_simulator"]


@dataclass(frozen=True)
class GatewaySimulation:
    """The fleet's report and what the gateway did with the pushes."""

    report: SimulationReport
    publisher: PublisherStats
    address: tuple[str, int]

    @property
    def pushes_published(self) -> int:
        return self.publisher.total("published", CONFIG_PUSH)

    @property
    def pushes_dropped(self) -> int:
        return self.publisher.total("dropped", CONFIG_PUSH)

    @property
    def pushes_failed_to_publish(self) -> int:
        return self.publisher.total("failed", CONFIG_PUSH)

    def lines(self) -> list[str]:
        return [*self.report.lines(),
                f"gateway {self.address[0]}:{self.address[1]}: config_push published {self.pushes_published}, "
                f"dropped {self.pushes_dropped}, failed to publish {self.pushes_failed_to_publish}; "
                f"events published {self.publisher.total('published')}"]


def run_gateway_and_simulator(settings: Settings, bootstrap_servers: str, *, spec: FleetSpec | None = None,
                              options: RunOptions | None = None, progress: TextIO | None = None,
                              **overrides: object) -> GatewaySimulation:
    """Run a gateway and a simulated fleet through it; see the module docstring.

    ``overrides`` replace settings fields for the gateway; by default both its
    ports are free ones (``gateway_port=0, gateway_metrics_port=-1``).
    """
    spec = spec or FleetSpec()
    options = options or RunOptions()
    fleet = generate_fleet(spec)
    gateway_settings = {"gateway_port": 0, "gateway_metrics_port": -1, **overrides}
    with running_gateway(settings, bootstrap_servers, **gateway_settings) as handle:
        address = handle.address
        bar = Progress(len(fleet), progress) if progress is not None else None
        report = asyncio.run(run_over_tcp(address, fleet, options, bar))
    return GatewaySimulation(report=report, publisher=handle.publisher.stats(), address=address)

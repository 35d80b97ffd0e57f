"""The fleet simulator: realistic client instances that push configurations (demo and benchmark workload)."""

from policy.simulator.demo import GatewaySimulation, run_gateway_and_simulator
from policy.simulator.fleet import FleetSpec, SimulatedClient, fleet_events, fleet_pushes, generate_fleet
from policy.simulator.runner import RunOptions, SimulationReport, run_direct, run_over_tcp

__all__ = [
    "FleetSpec",
    "GatewaySimulation",
    "RunOptions",
    "SimulatedClient",
    "SimulationReport",
    "fleet_events",
    "fleet_pushes",
    "generate_fleet",
    "run_direct",
    "run_gateway_and_simulator",
    "run_over_tcp",
]

"""The table of subcommands. Each lives in its own module with ``add_arguments`` and ``run``."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from cli import dashboard_cmd, demo_cmd, gateway_cmd, kafka_cmd, report_cmd, run_cmd, simulate_cmd
from configwatch.settings import Settings

__all__ = ["COMMANDS", "Command"]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[Settings, argparse.Namespace], int]


COMMANDS: tuple[Command, ...] = (
    Command("kafka", "run a local single-node KRaft Kafka broker",
            kafka_cmd.__doc__ or "", kafka_cmd.add_arguments, kafka_cmd.run),
    Command("run", "run the streaming job (Spark Structured Streaming)",
            run_cmd.__doc__ or "", run_cmd.add_arguments, run_cmd.run),
    Command("demo", "run the whole system on embedded defaults",
            demo_cmd.__doc__ or "", demo_cmd.add_arguments, demo_cmd.run),
    Command("dashboard", "serve the live dashboard and Prometheus /metrics",
            dashboard_cmd.__doc__ or "", dashboard_cmd.add_arguments, dashboard_cmd.run),
    Command("gateway", "run the PushConfig gateway (the broker side of the KIP)",
            gateway_cmd.__doc__ or "", gateway_cmd.add_arguments, gateway_cmd.run),
    Command("report", "reports from what the job keeps: upgrade readiness against a broker release",
            report_cmd.__doc__ or "", report_cmd.add_arguments, report_cmd.run),
    Command("simulate", "drive a simulated fleet of clients pushing their configurations",
            simulate_cmd.__doc__ or "", simulate_cmd.add_arguments, simulate_cmd.run),
)

"""Run the whole system on embedded defaults: a local broker, the PushConfig gateway
with a simulated client fleet pushing into the input topic, and the streaming job decoding them.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
from pathlib import Path

from configwatch.localkafka import bootstrap_servers
from configwatch.settings import Settings
from policy.simulator import FleetSpec, run_gateway_and_simulator
from streaming.countjob import run_count_job

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--clients", type=int, default=300,
                        help="simulated clients pushing through the gateway (default 300)")


def run(settings: Settings, args: argparse.Namespace) -> int:
    logging.getLogger("policy.client").setLevel(logging.ERROR)  # one warning per simulated push otherwise
    with bootstrap_servers(settings) as bootstrap:
        ingest = run_gateway_and_simulator(settings, bootstrap, spec=FleetSpec(clients=args.clients))
        print("\n".join(ingest.lines()))
        with tempfile.TemporaryDirectory(prefix="configwatch-demo-") as tmp:
            from dataclasses import replace

            demo = replace(settings, checkpoint_dir=Path(tmp))
            totals = run_count_job(demo, bootstrap, available_now=True)
        print(f"demo done: {totals['valid']} records decoded, {totals['invalid']} invalid")
    return 0

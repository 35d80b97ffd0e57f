"""Run the whole system on embedded defaults: a local broker, the PushConfig gateway
with a simulated client fleet pushing into the input topic, and the streaming job
processing them once (available-now) into the quarantine, alerts and gauges topics.
The job's checkpoint is a fresh temporary directory, removed when the demo ends,
and it keeps no connection lease.

Then, unless --no-live, the live phase (cli/demo_live.py): a second
simulated fleet connects and stays connected, the job follows it continuously, and
the dashboard serves it; the last line printed is the live page's URL. Ctrl-C stops.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
from dataclasses import replace
from pathlib import Path

from cli.gateway_cmd import ensure_input_topic
from configwatch.errors import UsageError
from configwatch.localkafka import bootstrap_servers
from configwatch.settings import ENV_PREFIX, Settings

__all__ = ["add_arguments", "run"]

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--clients", type=int, default=300,
                        help="simulated clients pushing through the gateway (default 300)")
    parser.add_argument("--live", action=argparse.BooleanOptionalAction, default=True,
                        help="then keep a fleet connected, the job running and the dashboard serving until "
                        "Ctrl-C (default: on)")


def run(settings: Settings, args: argparse.Namespace) -> int:
    from policy.gateway.config import GatewayConfig  # the edge, Spark and friends load only for this command
    from policy.simulator import FleetSpec, run_gateway_and_simulator
    from streaming.job import JobOptions, run_job

    # The demo's job runs on a fresh temporary checkpoint and keeps no lease (its first run is available-now,
    # which a lease would never let finish): what the environment says otherwise is for configwatch run.
    given = [ENV_PREFIX + name.upper() for name, value in (("checkpoint_uri", settings.checkpoint_uri),
                                                            ("connection_ttl", settings.connection_ttl)) if value]
    if given:
        log.warning("the demo sets aside %s (for configwatch run)", ", ".join(given))
    settings = replace(settings, checkpoint_uri=None, connection_ttl=None)
    if args.clients < 1:
        raise UsageError(f"--clients must be at least 1, got {args.clients}")
    # The job's and the gateway's knobs: a usage error before the broker, the gateway and the fleet start.
    JobOptions.from_settings(_job_settings(settings, Path(tempfile.gettempdir())))
    GatewayConfig.from_settings(settings)
    logging.getLogger("policy.client").setLevel(logging.ERROR)  # one warning per simulated push otherwise
    with bootstrap_servers(settings) as bootstrap:
        ensure_input_topic(settings, bootstrap)
        ingest = run_gateway_and_simulator(settings, bootstrap, spec=FleetSpec(clients=args.clients))
        print("\n".join(ingest.lines()))
        with tempfile.TemporaryDirectory(prefix="configwatch-demo-") as tmp:
            demo = _job_settings(settings, Path(tmp))
            result = run_job(demo, JobOptions.from_settings(demo), bootstrap, stop_spark=False)
            print(f"demo done: {result.totals['records_in']} records processed, "
                  f"{result.totals['quarantine']} quarantined; outputs in topics {settings.alerts_topic}, "
                  f"{settings.quarantine_topic}, {settings.gauges_topic}")
            if args.live:
                from cli.demo_live import serve_live

                serve_live(settings, bootstrap, Path(tmp), args.clients)
    return 0


def _job_settings(settings: Settings, checkpoint_dir: Path) -> Settings:
    """The demo's first job run: the input topic to the output topics, once, on a throwaway checkpoint."""
    return replace(settings, checkpoint_dir=checkpoint_dir, source="kafka", sink="kafka", trigger="available-now")

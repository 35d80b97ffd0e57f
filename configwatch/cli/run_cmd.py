"""Run the streaming job: read the input topic, decode each record with the Arrow UDF,
and print one progress line per micro-batch.
"""

from __future__ import annotations

import argparse
import logging

from configwatch.localkafka import bootstrap_servers
from configwatch.settings import Settings
from streaming.countjob import run_count_job

__all__ = ["add_arguments", "run"]

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trigger", choices=("continuous", "available-now"), default="continuous",
                        help="micro-batches until stopped (default), or process what exists and exit")


def run(settings: Settings, args: argparse.Namespace) -> int:
    with bootstrap_servers(settings) as bootstrap:
        run_count_job(settings, bootstrap, available_now=args.trigger == "available-now")
    return 0

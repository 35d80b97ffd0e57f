"""Run the streaming job: read contract records (Kafka topic or replay files), decode them,
validate every batch (contract + Great Expectations), and write quarantine, alerts, gauges and
usage to Kafka topics or JSON Lines files. One progress line per micro-batch.

  configwatch run                                   the input topic -> the output topics, until SIGINT/SIGTERM
  configwatch run --source files:DIR --sink files:OUT --trigger available-now
                                                    replay the files in DIR into OUT/<output>/, then exit

Checkpoints live under --checkpoint-dir; a restarted job resumes where it stopped. See docs/operations.md.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from configwatch.localkafka import bootstrap_servers
from configwatch.settings import Settings

if TYPE_CHECKING:
    from streaming.job import JobOptions

__all__ = ["add_arguments", "run"]

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


@contextlib.contextmanager
def kafka_for(settings: Settings, options: JobOptions) -> Iterator[str | None]:
    """Bootstrap servers when the job needs Kafka (the embedded broker unless --bootstrap-servers)."""
    if not options.needs_kafka:
        yield None
        return
    with bootstrap_servers(settings) as bootstrap:
        yield bootstrap


def run(settings: Settings, args: argparse.Namespace) -> int:
    from streaming.job import JobOptions, run_job  # Spark loads only for this command

    options = JobOptions.from_settings(settings)  # flag mistakes fail here, before anything starts
    with kafka_for(settings, options) as bootstrap:
        run_job(settings, options, bootstrap)
    return 0

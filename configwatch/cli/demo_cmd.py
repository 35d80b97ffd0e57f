"""Run the whole system on embedded defaults: a local broker, sample events in the
input topic, and the streaming job decoding them.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from kafka import KafkaProducer

from configwatch.localkafka import bootstrap_servers
from configwatch.samples import sample_events
from configwatch.settings import Settings
from streaming.countjob import run_count_job

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--events", type=int, default=300, help="sample events to produce (default 300)")


def run(settings: Settings, args: argparse.Namespace) -> int:
    with bootstrap_servers(settings) as bootstrap:
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
        for event in sample_events(args.events):
            producer.send(settings.input_topic, event.to_json().encode(), key=event.kafka_key())
        producer.flush()
        producer.close()
        print(f"produced {args.events} sample events to {settings.input_topic} at {bootstrap}")
        with tempfile.TemporaryDirectory(prefix="configwatch-demo-") as tmp:
            from dataclasses import replace

            demo = replace(settings, checkpoint_dir=Path(tmp))
            totals = run_count_job(demo, bootstrap, available_now=True)
        print(f"demo done: {totals['valid']} records decoded, {totals['invalid']} invalid")
    return 0

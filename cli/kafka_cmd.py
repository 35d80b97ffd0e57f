"""Start, stop or inspect the local single-node KRaft broker (from the project's jars).

  configwatch kafka start     start it in the background and wait until it answers
  configwatch kafka status    print its bootstrap address, or say none runs
  configwatch kafka stop      stop it (controlled shutdown)
"""

from __future__ import annotations

import argparse

from configwatch.errors import UsageError
from configwatch.localkafka import LocalKafka
from configwatch.settings import Settings

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("action", choices=("start", "stop", "status"), help="what to do")


def run(settings: Settings, args: argparse.Namespace) -> int:
    if settings.kafka_port is not None and not 0 < settings.kafka_port < 65536:
        raise UsageError(f"--kafka-port {settings.kafka_port} is not a TCP port")
    if settings.kafka_home.exists() and not settings.kafka_home.is_dir():
        raise UsageError(f"--kafka-home {settings.kafka_home}: not a directory")
    broker = LocalKafka(settings.kafka_home, port=settings.kafka_port)
    if args.action == "start":
        running = broker.info()
        if running is not None:
            print(f"already running: {running.bootstrap_servers} (pid {running.pid}); "
                  "'configwatch kafka stop' stops it")
            return 0
        info = broker.start()
        print(f"started: {info.bootstrap_servers} (pid {info.pid}, data {info.data_dir})")
        return 0
    if args.action == "stop":
        print("stopped" if broker.stop() else "not running")
        return 0
    status = broker.info()
    if status is None:
        print("not running")
        return 3
    print(f"running: {status.bootstrap_servers} (pid {status.pid}, data {status.data_dir})")
    return 0

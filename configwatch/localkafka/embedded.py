"""The embedded default: use ``--bootstrap-servers`` if given, else a local broker."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from configwatch.localkafka.broker import LocalKafka
from configwatch.settings import Settings

__all__ = ["bootstrap_servers"]

log = logging.getLogger(__name__)


@contextmanager
def bootstrap_servers(settings: Settings) -> Iterator[str]:
    """Yield bootstrap servers; start (and later stop) a local broker when none is configured.

    A local broker already running from ``settings.kafka_home`` is reused and left running.
    """
    if settings.bootstrap_servers:
        yield settings.bootstrap_servers
        return
    broker = LocalKafka(settings.kafka_home)
    running = broker.info()
    if running is not None:
        log.info("using the local broker already running at %s", running.bootstrap_servers)
        yield running.bootstrap_servers
        return
    info = broker.start()
    log.info("started the embedded Kafka broker at %s", info.bootstrap_servers)
    try:
        yield info.bootstrap_servers
    finally:
        broker.stop()
        log.info("stopped the embedded Kafka broker")

"""The embedded default: use ``--bootstrap-servers`` if given (once it answers), else a local broker."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from configwatch.errors import UsageError
from configwatch.localkafka.broker import LocalKafka
from configwatch.reachability import check_broker
from configwatch.settings import Settings

__all__ = ["bootstrap_servers", "running_bootstrap"]

log = logging.getLogger(__name__)


@contextmanager
def bootstrap_servers(settings: Settings) -> Iterator[str]:
    """Yield bootstrap servers; start (and later stop) a local broker when none is configured.

    A local broker already running from ``settings.kafka_home`` is reused and left running. Given servers
    must answer within ``settings.connect_timeout_s`` (``BrokerUnreachableError`` otherwise).
    """
    if settings.bootstrap_servers:
        yield running_bootstrap(settings)
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


def running_bootstrap(settings: Settings) -> str:
    """Servers of a cluster that answers: ``--bootstrap-servers`` (checked), else the local broker if it runs.

    For commands that only read what others wrote (the dashboard, reports): they never start a broker.
    """
    if settings.bootstrap_servers:
        check_broker(settings.bootstrap_servers, settings.connect_timeout_s)
        return settings.bootstrap_servers
    running = LocalKafka(settings.kafka_home).info()
    if running is None:
        raise UsageError("no Kafka to read: give --bootstrap-servers, or start the local broker "
                         "('configwatch kafka start')")
    return running.bootstrap_servers

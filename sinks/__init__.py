"""Output writers for the job's streams (alerts, quarantine, gauges): the contract and its sinks.

The contract is ``sinks.base`` (factory + per-partition writer); each sink is
one module (``sinks.kafka``, ``sinks.files``, ...).
"""

from sinks.base import AT_LEAST_ONCE, EXACTLY_ONCE, Sink, SinkRecord, SinkWriter
from sinks.exceptions import SinkError, SinkSetupError, SinkWriteError

__all__ = [
    "AT_LEAST_ONCE",
    "EXACTLY_ONCE",
    "Sink",
    "SinkError",
    "SinkRecord",
    "SinkSetupError",
    "SinkWriteError",
    "SinkWriter",
]

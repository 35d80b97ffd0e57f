"""The Kafka sink: one topic per output stream, at least once.

Records are produced with ``acks=all`` and idempotence on; ``close()`` flushes
and fails the task if any record was not acknowledged, so nothing is lost. A
batch the job re-runs after a crash between writing and committing is written
again: consumers dedupe by record key (alerts: ``alert_id``; quarantine: the
source coordinates; gauges: a compacted topic keeps the last value per key, so
a repeat is harmless). A graceful stop lets the running batch commit and never
causes a repeat.

Writers on one Python worker share one producer per (servers, settings).

:class:`KafkaOutput` is what the job uses: Spark's own Kafka sink (``format("kafka")``),
one topic per kind from a ``topic`` column, keys as the contract says
(alerts by ``alert_id``, quarantine by source coordinates, gauges and usage by
``<name>/<version>``, a tombstone's value null); the same guarantee, at least once.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from configwatch.contract import GAUGES, OUTPUT_KINDS, USAGE
from sinks.base import AT_LEAST_ONCE, Sink, SinkRecord, SinkWriter
from sinks.encoding import to_json_bytes
from sinks.exceptions import SinkSetupError, SinkWriteError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["KafkaOutput", "KafkaSink", "KafkaWriter", "ensure_topic"]

log = logging.getLogger(__name__)

_PRODUCERS: dict[tuple[str, tuple[tuple[str, Any], ...]], Any] = {}
_LOCK = threading.Lock()
FLUSH_TIMEOUT_S = 120.0
# The job's producer batch per partition, not the client's 16 KB: a 120,000-record batch of the bench's
# workload writes some 18,000 findings, and fewer, larger requests spare the broker and the tasks waiting
# on it (500,000 records: local[2] 0.92x the time, local[1] 0.97x; measured 2026-11-27; git log
# docs/benchmarks.md). linger.ms still bounds the wait of a small batch.
JOB_BATCH_BYTES = 256 * 1024
# What makes the guarantee above, in Kafka's own property names: both producers (Spark's Kafka sink in the job
# and the Python ``KafkaSink``) are derived from it.
DELIVERY: Mapping[str, str] = {"acks": "all", "enable.idempotence": "true", "linger.ms": "5"}


def _python_settings(properties: Mapping[str, str]) -> dict[str, Any]:
    """kafka-python's keyword arguments for these producer properties."""
    typed = {"true": True, "false": False}
    return {name.replace(".", "_"): typed.get(value, int(value) if value.isdigit() else value)
            for name, value in properties.items()}


def _producer(bootstrap: str, config: tuple[tuple[str, Any], ...]) -> Any:
    from kafka import KafkaProducer

    key = (bootstrap, config)
    with _LOCK:
        producer = _PRODUCERS.get(key)
        if producer is None:
            settings = _python_settings({**DELIVERY, "client.id": "configwatch-sink"})
            settings.update(dict(config))
            producer = KafkaProducer(bootstrap_servers=bootstrap, **settings)
            _PRODUCERS[key] = producer
        return producer


@atexit.register
def _close_producers() -> None:
    with _LOCK:
        for producer in _PRODUCERS.values():
            producer.close(timeout=10)
        _PRODUCERS.clear()


def ensure_topic(bootstrap: str, topic: str, *, compact: bool = False, partitions: int = -1,
                 replication_factor: int = -1, timeout_s: float = 30.0) -> bool:
    """Create ``topic`` unless it exists (broker defaults for -1); True when this call created it."""
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError, TopicAlreadyExistsError

    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="configwatch-setup",
                                 request_timeout_ms=int(timeout_s * 1000))
    except KafkaError as exc:
        raise SinkSetupError(f"cannot create topic {topic}: no Kafka broker answered at {bootstrap} "
                             f"({type(exc).__name__})") from exc
    try:
        if topic in admin.list_topics():
            return False
        spec: dict[str, Any] = {"num_partitions": partitions, "replication_factor": replication_factor}
        if compact:
            spec["configs"] = {"cleanup.policy": "compact"}
        try:
            admin.create_topics({topic: spec}, timeout_ms=int(timeout_s * 1000), wait_for_metadata=True)
        except TopicAlreadyExistsError:
            return False  # someone else was faster
        log.info("created topic %s%s", topic, " (compacted)" if compact else "")
        return True
    except KafkaError as exc:
        raise SinkSetupError(f"cannot create topic {topic}: {exc}") from exc
    finally:
        admin.close()


class KafkaWriter(SinkWriter):
    """Sends records to one topic through the worker's shared producer; ``close()`` waits for every ack."""

    def __init__(self, producer: Any, topic: str) -> None:
        self._producer = producer
        self._topic = topic
        self._futures: list[Any] = []

    def write_batch(self, records: Sequence[SinkRecord]) -> None:
        from kafka.errors import KafkaError

        try:
            for r in records:
                value = None if r.tombstone else to_json_bytes(r.value)
                key = r.key.encode("utf-8") if r.key is not None else None
                self._futures.append(self._producer.send(self._topic, value=value, key=key))
        except KafkaError as exc:
            raise SinkWriteError(f"cannot send to {self._topic}: {exc}") from exc

    def close(self) -> None:
        from kafka.errors import KafkaError

        if not self._futures:
            return
        try:
            self._producer.flush(timeout=FLUSH_TIMEOUT_S)
            for f in self._futures:
                f.get(timeout=FLUSH_TIMEOUT_S)
        except KafkaError as exc:
            raise SinkWriteError(f"{self._topic}: not every record was acknowledged: {exc}") from exc
        finally:
            self._futures = []


@dataclass(frozen=True)
class KafkaSink(Sink):
    """Records to ``topic`` at ``bootstrap_servers``; ``compact`` makes a created topic compacted."""

    bootstrap_servers: str
    topic: str
    compact: bool = False
    producer_config: tuple[tuple[str, Any], ...] = field(default=())
    guarantee: ClassVar[str] = AT_LEAST_ONCE

    @property
    def description(self) -> str:
        return f"kafka topic {self.topic}" + (" (compacted)" if self.compact else "")

    def prepare(self) -> None:
        ensure_topic(self.bootstrap_servers, self.topic, compact=self.compact)

    def build(self, partition_id: int, epoch_id: int) -> KafkaWriter:
        return KafkaWriter(_producer(self.bootstrap_servers, self.producer_config), self.topic)


@dataclass(frozen=True)
class KafkaOutput:
    """Every kind to its topic through Spark's Kafka sink; the gauges and usage topics compacted."""

    guarantee: ClassVar[str] = AT_LEAST_ONCE
    one_pass: ClassVar[bool] = True  # one Kafka write of the whole frame

    bootstrap_servers: str
    topics: Mapping[str, str]  # kind -> topic

    @property
    def description(self) -> str:
        return "kafka topics " + ", ".join(self.topics[k] for k in OUTPUT_KINDS if k in self.topics)

    def prepare(self) -> None:
        for kind, topic in self.topics.items():
            ensure_topic(self.bootstrap_servers, topic, compact=kind in (GAUGES, USAGE))

    def write(self, frame: DataFrame, epoch_id: int, kinds: Iterable[str]) -> None:
        """One batch write of ``frame`` (kind, key, value, tombstone) through Spark's Kafka sink."""
        from pyspark.sql import functions as F

        topic = F.lit(None).cast("string")
        for kind, name in self.topics.items():
            topic = F.when(F.col("kind") == kind, F.lit(name)).otherwise(topic)
        value = F.when(F.col("tombstone"), F.lit(None).cast("string")).otherwise(F.col("value"))
        producer = {**DELIVERY, "bootstrap.servers": self.bootstrap_servers, "batch.size": str(JOB_BATCH_BYTES),
                    "client.id": "configwatch-job"}
        (frame.select(topic.alias("topic"), F.col("key"), value.alias("value"))
         .write.format("kafka").options(**{f"kafka.{name}": v for name, v in producer.items()})
         .mode("append").save())

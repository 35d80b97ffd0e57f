"""What the proxy tests' real clients do after producing: consume in a group until they have it all, and commit."""

from __future__ import annotations

import time
from typing import Any

import confluent_kafka
from kafka import KafkaConsumer, TopicPartition

__all__ = ["consume_and_commit_kafka_python", "consume_and_commit_librdkafka"]

DEADLINE_S = 60.0


def consume_and_commit_kafka_python(topic: str, group: str, count: int, partitions: int,
                                    **settings: Any) -> tuple[list[str], int]:
    """A kafka-python consumer in ``group``: the values received (up to ``count``) and the offsets committed."""
    consumer = KafkaConsumer(topic, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False,
                             **settings)
    received: list[str] = []
    deadline = time.monotonic() + DEADLINE_S
    while len(received) < count and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            received.extend(r.value.decode() for r in records)
    consumer.commit()
    committed = sum(consumer.committed(TopicPartition(topic, p)) or 0 for p in range(partitions))
    consumer.close()
    return received, committed


def consume_and_commit_librdkafka(topic: str, group: str, count: int, partitions: int,
                                  settings: dict[str, Any]) -> tuple[list[str], int]:
    """A confluent-kafka consumer in ``group``: the values received (up to ``count``) and the offsets committed."""
    consumer = confluent_kafka.Consumer({**settings, "group.id": group, "auto.offset.reset": "earliest",
                                         "enable.auto.commit": False})
    consumer.subscribe([topic])
    received: list[str] = []
    deadline = time.monotonic() + DEADLINE_S
    while len(received) < count and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            received.append(message.value().decode())
    consumer.commit(asynchronous=False)
    committed = consumer.committed([confluent_kafka.TopicPartition(topic, p) for p in range(partitions)], timeout=30)
    consumer.close()
    return received, sum(tp.offset for tp in committed if tp.offset >= 0)

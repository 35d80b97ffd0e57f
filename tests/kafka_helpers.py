"""Small kafka-python helpers for tests: produce contract records, read a topic to its end."""

from __future__ import annotations

from collections.abc import Iterable

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

__all__ = ["produce", "read_all"]


def produce(bootstrap: str, topic: str, records: Iterable[tuple[bytes | None, bytes | None]]) -> int:
    """Send (key, value) pairs with acks=all and wait for every acknowledgement."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, linger_ms=5)
    futures = [producer.send(topic, value=value, key=key) for key, value in records]
    producer.flush()
    for f in futures:
        f.get(timeout=30)
    producer.close()
    return len(futures)


def read_all(bootstrap: str, topic: str) -> list[tuple[bytes | None, bytes | None, int, int]]:
    """Every record now in ``topic`` as (key, value, partition, offset)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                             consumer_timeout_ms=2000)
    partitions = consumer.partitions_for_topic(topic) or set()
    tps = [TopicPartition(topic, p) for p in sorted(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    end = consumer.end_offsets(tps)
    out: list[tuple[bytes | None, bytes | None, int, int]] = []
    while any(consumer.position(tp) < end[tp] for tp in tps):
        for tp, msgs in consumer.poll(timeout_ms=1000).items():
            out.extend((m.key, m.value, tp.partition, m.offset) for m in msgs)
    consumer.close()
    return out

"""The second peer: the same work as a Quix Streams application (``quix_peer_records_per_s``).

A Quix ``Application`` (librdkafka consumer group, at-least-once, commits every
second) reads the workload topic; a ``BatchingSink`` receives each partition's
records of a checkpoint at once and runs exactly what the kafka-python peer runs
per batch (``bench.fig_peer.process_batch``: decode with GX, routing, the
keyed step in ``udfs.memory.MemoryPipeline``), then writes the three outputs
with Quix's own producer settings (librdkafka). Per-message ``apply`` would call
the batch functions once per record, so the sink's batches are the fair shape.
State lives in the pipeline's dicts, like the kafka-python peer, not in Quix's
RocksDB stores: that is the faster choice for the peer, so the comparison is
not flattered. The clock runs from ``Application.run`` to the last output
acknowledged, as for the other peer.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from typing import Any

from bench.fig_peer import PeerConfig, PeerState, kafka_batches, process_batch
from bench.harness import BenchContext, job_settings, median_of
from configwatch.contract import ALERTS, GAUGES, QUARANTINE

__all__ = ["measure"]

_COMMIT_INTERVAL_S = 1.0


class _Record:
    __slots__ = ("offset", "partition", "timestamp", "topic", "value")

    def __init__(self, topic: str, partition: int, offset: int, timestamp: int, value: bytes) -> None:
        self.topic, self.partition, self.offset, self.timestamp, self.value = topic, partition, offset, timestamp, value


def _run(bootstrap: str, topic: str, expected: int, config: PeerConfig, out_topics: dict[str, str]) -> dict[str, Any]:
    from confluent_kafka import Producer
    from quixstreams import Application
    from quixstreams.sinks import BatchingSink, SinkBatch

    state = PeerState(config)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    seen = {"records": 0, "written": 0, "batches": 0}
    done = threading.Event()

    class PipelineSink(BatchingSink):
        def write(self, batch: SinkBatch) -> None:
            records = [_Record(batch.topic, batch.partition, item.offset, item.timestamp, item.value)
                       for item in batch]
            out = process_batch(kafka_batches(records), state, config)
            for kind, recs in ((QUARANTINE, out.quarantine), (ALERTS, out.alerts), (GAUGES, out.gauges)):
                for r in recs:
                    producer.produce(out_topics[kind], key=r.key.encode() if r.key is not None else None,
                                     value=None if r.tombstone else _json(r.value))
                    seen["written"] += 1
                    producer.poll(0)
            producer.flush()
            seen["records"] += len(records)
            seen["batches"] += 1
            if seen["records"] >= expected:
                done.set()

    app = Application(broker_address=bootstrap, consumer_group=f"bench-quix-{uuid.uuid4().hex[:8]}",
                      auto_offset_reset="earliest", commit_interval=_COMMIT_INTERVAL_S, loglevel="WARNING",
                      use_changelog_topics=False, state_dir=None)
    source = app.topic(topic, value_deserializer="bytes", key_deserializer="bytes")
    app.dataframe(source).sink(PipelineSink())
    stopper = threading.Thread(target=lambda: (done.wait(), app.stop()), daemon=True)
    stopper.start()
    started = time.perf_counter()
    app.run()
    seconds = time.perf_counter() - started
    return {"seconds": seconds, **seen}


def _records_in(bootstrap: str, topic: str) -> int:
    """How many records ``topic`` holds (the sum of its end offsets; the workload is written once)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        return sum(consumer.end_offsets(tps).values())
    finally:
        consumer.close()


def _json(value: Any) -> bytes:
    import json

    return json.dumps(value, separators=(",", ":")).encode()


def measure(ctx: BenchContext) -> dict[str, Any]:
    """A warm-up round on the warm-up topic, then ``ctx.rounds`` measured rounds on the workload topic."""
    logging.getLogger("quixstreams").setLevel(logging.WARNING)
    config = PeerConfig.from_settings(job_settings(ctx, ctx.work / "quix-settings-only"))

    def topics() -> dict[str, str]:
        return {kind: ctx.topic_name(f"quix-{kind}") for kind in (ALERTS, QUARANTINE, GAUGES)}

    _run(ctx.bootstrap, ctx.warmup_topic, _records_in(ctx.bootstrap, ctx.warmup_topic), config, topics())
    rounds = [_run(ctx.bootstrap, ctx.topic, ctx.records, config, topics()) for _ in range(ctx.rounds)]
    last = rounds[-1]
    return {
        "quix_peer_records_per_s": round(last["records"] / median_of([r["seconds"] for r in rounds]), 1),
        "quix_peer_seconds": [round(r["seconds"], 3) for r in rounds],
        "quix_peer_records": last["records"],
        "quix_peer_batches": last["batches"],
        "quix_peer_outputs_written": last["written"],
    }

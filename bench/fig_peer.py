"""Figure 3 (issue 8), the peer: the job's work in one plain kafka-python consumer loop.

What a team might write instead of Spark. ``measure(ctx)`` runs a warm-up round (on
``ctx.warmup_topic``), then ``ctx.rounds`` measured rounds, and reports the median records/s. Every round
starts from scratch (empty state, three new output topics created before the clock).

- **Consume:** one ``KafkaConsumer`` is assigned every partition of ``ctx.topic``,
  seeks to the beginning and polls until each partition reaches the end offset read
  at the start, gathering micro-batches of up to ``BATCH_RECORDS`` records
  (the job's default batch bound, ``--max-offsets-per-trigger``: the batches the job makes of a backlog).
- **Process** (``process_batch``): the job's own functions, in the job's order.
  1. ``udfs.decode.decode_batches`` (the decode half of the ``mapInArrow`` body) over
     the columns the job's Kafka source selects, per partition in Arrow batches of at
     most ``ARROW_BATCH_ROWS`` (Spark's ``maxRecordsPerBatch``); GX on, as in the job.
  2. ``udfs.memory.MemoryPipeline``: the routing and the keyed step the job runs
     (quarantine, stateless and stateful detection, the connection gauges),
     with the same state variables in dicts; it yields the job's output records.
- **Write:** one ``KafkaProducer`` with the Kafka sink's settings (``acks=all``,
  idempotence, ``linger_ms=5``) through ``sinks.kafka.KafkaWriter``, so encoding and
  keys are the sink's; closing the writers flushes and checks every ack. The clock
  runs from creating the consumer to that final flush.

No threads, no multiprocessing: one loop on one core (kafka-python's producer I/O
thread aside); the job runs on ``local[2]``, two cores.
Without the optional ``crc32c`` package kafka-python computes record CRCs in pure
Python on consume and produce (``python_peer_native_crc32c``), as do the job's sinks.

Correctness check, ``python -m bench.fig_peer [--records N] [--batch-records A,B]``:
own broker, the workload, the real ``StreamingJob`` (available-now, ``job_settings``),
then a peer round per batch size; alert_id sets and quarantine counts are compared
(exit 1 on a difference). On 20 000 records (45 malformed) the job wrote 6 279 alert
ids and 45 quarantine records; the peer matched exactly with batches of 50 000 (one)
and 5 000 (four), and on 120 000 records (three batches; 37 420 ids, 248 quarantined).
Batches of 1 000 missed 11 ids (8 group-protocol-drift, 3
fleet-outlier): stateful findings depend on batch boundaries (a member is flagged in a
batch where its group visibly disagrees; an outlier is scored against the values seen
so far), and the available-now job reads the whole backlog as one micro-batch.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from kafka.record.util import crc32c_c

from bench.harness import BenchContext, job_settings, median_of, read_topic
from configwatch.contract import ALERTS, GAUGES, QUARANTINE
from configwatch.secrets import SecretStr
from configwatch.settings import Settings
from sinks.base import SinkRecord
from sinks.kafka import KafkaWriter, ensure_topic
from streaming.pipeline import gauge_config
from streaming.session import SparkSettings
from streaming.sources import PARTITION_FETCH_BYTES
from udfs.decode import decode_batches, output_schema
from udfs.gauges import GaugeConfig
from udfs.memory import MemoryPipeline

__all__ = ["ARROW_BATCH_ROWS", "BATCH_RECORDS", "KAFKA_SCHEMA", "BatchOutput", "PeerConfig", "PeerState",
           "RoundResult", "kafka_batches", "measure", "process_batch", "run_round"]

BATCH_RECORDS = Settings().max_offsets_per_trigger  # the job's default batch bound
if BATCH_RECORDS is None:
    raise RuntimeError("Settings.max_offsets_per_trigger has no default: the peer's batch size follows it")
ARROW_BATCH_ROWS = SparkSettings().arrow_batch_rows
POLL_TIMEOUT_MS = 500
PRODUCER_SETTINGS: dict[str, Any] = {"acks": "all", "enable_idempotence": True, "linger_ms": 5,
                                     "client_id": "configwatch-peer"}  # as sinks.kafka
_TIMESTAMP = pa.timestamp("us", tz="UTC")  # Spark's TimestampType in Arrow
KAFKA_SCHEMA = pa.schema([("value", pa.binary()), ("topic", pa.string()), ("partition", pa.int32()),
                          ("offset", pa.int64()), ("timestamp", _TIMESTAMP)])


@dataclass(frozen=True)
class PeerConfig:
    """What the job's settings decide for the work: the fingerprint key, GX on or off, the gauge knobs."""

    key: SecretStr
    expectations: bool = True
    gauges: GaugeConfig = field(default_factory=GaugeConfig)

    @classmethod
    def from_settings(cls, settings: Settings) -> PeerConfig:
        return cls(settings.fingerprint_key, settings.expectations, gauge_config(settings))


class PeerState:
    """One round's state in memory: the job's state variables in dicts."""

    def __init__(self, config: PeerConfig) -> None:
        self.pipeline = MemoryPipeline(config.key, config.gauges)


@dataclass
class BatchOutput:
    """The sink records of one micro-batch and the seconds each stage took."""

    alerts: list[SinkRecord]
    quarantine: list[SinkRecord]
    gauges: list[SinkRecord]
    seconds: dict[str, float]


def kafka_batches(records: Sequence[Any]) -> list[pa.RecordBatch]:
    """Consumer records (``topic``, ``partition``, ``offset``, ``timestamp`` ms, ``value``) as the Kafka
    source's columns, split as Spark feeds ``mapInArrow``: per partition, at most ``ARROW_BATCH_ROWS`` rows."""
    by_partition: dict[int, list[Any]] = {}
    for r in records:
        by_partition.setdefault(r.partition, []).append(r)
    out = []
    for part in (by_partition[p] for p in sorted(by_partition)):
        for i in range(0, len(part), ARROW_BATCH_ROWS):
            chunk = part[i:i + ARROW_BATCH_ROWS]
            out.append(pa.RecordBatch.from_arrays([
                pa.array([r.value for r in chunk], pa.binary()),
                pa.array([r.topic for r in chunk], pa.string()),
                pa.array([r.partition for r in chunk], pa.int32()),
                pa.array([r.offset for r in chunk], pa.int64()),
                pa.array([r.timestamp * 1000 for r in chunk], pa.int64()).cast(_TIMESTAMP),
            ], schema=KAFKA_SCHEMA))
    return out


def process_batch(raw: Sequence[pa.RecordBatch], state: PeerState, config: PeerConfig,
                  now_ms: int | None = None) -> BatchOutput:
    """Run the job's decode, routing and keyed step over one micro-batch (``kafka_batches``)."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    t0 = time.perf_counter()
    decoded = pa.Table.from_batches(list(decode_batches(raw, validate=config.expectations)),
                                    schema=output_schema(KAFKA_SCHEMA))
    t1 = time.perf_counter()
    records = state.pipeline.process(decoded, now)
    t2 = time.perf_counter()
    out: dict[str, list[SinkRecord]] = {ALERTS: [], QUARANTINE: [], GAUGES: []}
    for r in records:
        out[r.kind].append(SinkRecord(r.key, json.loads(r.value), r.tombstone))
    return BatchOutput(out[ALERTS], out[QUARANTINE], out[GAUGES], {"decode": t1 - t0, "state": t2 - t1})


@dataclass
class RoundResult:
    """One round: its seconds (consumer creation to final flush), counts, topics and stage profile."""

    seconds: float
    records: int
    batches: int
    written: dict[str, int]
    alert_ids: set[str]
    topics: dict[str, str]
    stages: dict[str, float]


def run_round(bootstrap: str, topic: str, topics: dict[str, str], config: PeerConfig,
              batch_records: int = BATCH_RECORDS) -> RoundResult:
    """Read ``topic`` from the beginning to its current end once and write the outputs to ``topics`` (kind -> name)."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    state = PeerState(config)
    stages = {"decode": 0.0, "state": 0.0, "write": 0.0}
    written = {kind: 0 for kind in topics}
    alert_ids: set[str] = set()
    records = batches = 0
    started = time.perf_counter()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             client_id="configwatch-peer",  # fetch sizes as the job's Kafka source
                             max_partition_fetch_bytes=PARTITION_FETCH_BYTES,
                             fetch_max_bytes=4 * PARTITION_FETCH_BYTES, max_poll_records=batch_records)
    producer = KafkaProducer(bootstrap_servers=bootstrap, **PRODUCER_SETTINGS)
    try:
        writers = {kind: KafkaWriter(producer, name) for kind, name in topics.items()}
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        end = consumer.end_offsets(tps)
        pending: list[Any] = []
        while True:
            more = any(consumer.position(tp) < end[tp] for tp in tps)
            if more:
                for tp, polled in consumer.poll(timeout_ms=POLL_TIMEOUT_MS,
                                                max_records=batch_records - len(pending)).items():
                    pending.extend(r for r in polled if r.offset < end[tp])
            if pending and (len(pending) >= batch_records or not more):
                out = process_batch(kafka_batches(pending), state, config)
                t0 = time.perf_counter()
                for kind, recs in ((QUARANTINE, out.quarantine), (ALERTS, out.alerts), (GAUGES, out.gauges)):
                    writers[kind].write_batch(recs)
                    written[kind] += len(recs)
                stages["write"] += time.perf_counter() - t0
                for stage, seconds in out.seconds.items():
                    stages[stage] += seconds
                alert_ids.update(r.key for r in out.alerts if r.key is not None)
                records += len(pending)
                batches += 1
                pending = []
            if not more and not pending:
                break
        t0 = time.perf_counter()
        for writer in writers.values():
            writer.close()  # the first flushes the producer; each checks its own acks
        stages["write"] += time.perf_counter() - t0
        seconds = time.perf_counter() - started
    finally:
        consumer.close()
        producer.close(timeout=10)
    stages["consume"] = seconds - sum(stages.values())
    return RoundResult(seconds, records, batches, written, alert_ids, dict(topics), stages)


def _fresh_topics(ctx: BenchContext) -> dict[str, str]:
    topics = {kind: ctx.topic_name(f"peer-{kind}") for kind in (ALERTS, QUARANTINE, GAUGES)}
    for kind, name in topics.items():
        ensure_topic(ctx.bootstrap, name, compact=kind == GAUGES)  # as KafkaSink.prepare, before the clock
    return topics


def measure(ctx: BenchContext) -> dict[str, Any]:
    """Figure 3: a warm-up round, then ``ctx.rounds`` measured rounds of the peer; median records/s."""
    config = PeerConfig.from_settings(job_settings(ctx, ctx.work / "peer-settings-only"))
    warmup = run_round(ctx.bootstrap, ctx.warmup_topic, _fresh_topics(ctx), config)
    rounds = [run_round(ctx.bootstrap, ctx.topic, _fresh_topics(ctx), config) for _ in range(ctx.rounds)]
    last = rounds[-1]
    seconds = [r.seconds for r in rounds]
    result: dict[str, Any] = {
        "python_peer_records_per_s": round(last.records / median_of(seconds), 1),
        "python_peer_seconds": [round(s, 3) for s in seconds],
        "python_peer_warmup_seconds": round(warmup.seconds, 3),
        "python_peer_records": last.records,
        "python_peer_batches": last.batches,
        "python_peer_batch_records": BATCH_RECORDS,
        "python_peer_cores": 1,
        "python_peer_native_crc32c": crc32c_c is not None,  # else kafka-python checksums in pure Python
        "python_peer_findings": last.written[ALERTS],
        "python_peer_distinct_alert_ids": len(last.alert_ids),
        "python_peer_quarantined": last.written[QUARANTINE],
        "python_peer_gauge_updates": last.written[GAUGES],
        "python_peer_alerts_topic": last.topics[ALERTS],
        "python_peer_quarantine_topic": last.topics[QUARANTINE],
        "python_peer_gauges_topic": last.topics[GAUGES],
    }
    result.update({f"python_peer_{stage}_s": round(s, 3) for stage, s in last.stages.items()})
    return result


def _alerts(bootstrap: str, topic: str) -> dict[str, str]:
    """alert_id -> rule of every alert record in ``topic``."""
    return {r.key.decode(): json.loads(r.value)["rule"] for r in read_topic(bootstrap, topic)}


def _check(records: int, partitions: int, batch_sizes: list[int]) -> int:
    """The real job and a peer round per batch size on one workload: alert_id sets and quarantine counts."""
    import shutil
    import tempfile
    from collections import Counter
    from pathlib import Path

    from bench.workload import produce_workload
    from configwatch.localkafka import LocalKafka
    from streaming.job import JobOptions, StreamingJob

    work = Path(tempfile.mkdtemp(prefix="fig-peer-check-"))
    broker = LocalKafka(work / "kafka")
    try:
        bootstrap = broker.start().bootstrap_servers
        key = SecretStr("fig-peer-check-key")
        ctx = BenchContext(bootstrap=bootstrap, work=work, topic="bench-workload", warmup_topic="bench-workload",
                           records=records,
                           partitions=partitions, rounds=1, quick=True, latency_s=0.0, latency_rate=0,
                           state_connections=0, fingerprint_key=key)
        produce_workload(bootstrap, ctx.topic, records, key, partitions=partitions)
        settings = job_settings(ctx, ctx.scratch("job-checkpoint"))
        job = StreamingJob(settings, JobOptions.from_settings(settings), bootstrap, out=lambda _: None)
        job.start()
        job.wait()
        job_ids = _alerts(bootstrap, settings.alerts_topic)
        job_quarantined = len(read_topic(bootstrap, settings.quarantine_topic))
        same = True
        for size in batch_sizes:
            peer = run_round(bootstrap, ctx.topic, _fresh_topics(ctx), PeerConfig.from_settings(settings), size)
            peer_ids = _alerts(bootstrap, peer.topics[ALERTS])
            equal = peer_ids.keys() == job_ids.keys() and peer.written[QUARANTINE] == job_quarantined
            same &= equal
            print(json.dumps({
                "records": records, "peer_batch_records": size, "peer_batches": peer.batches,
                "equal": equal,
                "alert_ids": {"job": len(job_ids), "peer": len(peer_ids)},
                "quarantined": {"job": job_quarantined, "peer": peer.written[QUARANTINE]},
                "only_job_by_rule": Counter(job_ids[k] for k in job_ids.keys() - peer_ids.keys()),
                "only_peer_by_rule": Counter(peer_ids[k] for k in peer_ids.keys() - job_ids.keys())}), flush=True)
        return 0 if same else 1
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="check the peer against the job (figures run via bench.run)")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--batch-records", default=str(BATCH_RECORDS), help="comma-separated peer batch sizes")
    args = parser.parse_args(argv)
    return _check(args.records, args.partitions, [int(n) for n in args.batch_records.split(",")])


if __name__ == "__main__":
    sys.exit(main())

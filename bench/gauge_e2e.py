"""Benchmark: the gauges through the real job, Kafka in and Kafka out (docs/benchmarks.md, "Gauges").

Usage::

    .venv/bin/python -m bench.gauge_e2e --connections 100000 --latency-s 60

1. Throughput: ``--connections`` simulated connections (``bench.gauge_workload``: every
   connection opens, 40% close, 5% of opens redelivered, 2% unknown closes) are produced
   to a 4-partition topic; the job (``--outputs gauges``, available-now) turns them into
   gauges on a compacted topic. Reports events/s and checks the gauges are exact.
2. Latency: the job keeps running (continuous, ``--trigger-interval``) on that state while
   a producer adds churn (``--churn`` events/s of new connections opening and closing) and,
   once a second, opens a probe connection of a new version; a consumer of the gauges
   topic timestamps the probe's gauge. Latency = gauge record received - the event's
   ``timestamp_ms`` (both wall clock on this machine).

Starts its own local broker in a temporary directory; prints JSON lines.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.gauge_workload import connection_events, expected_gauges
from bench.harness import fold_gauges
from configwatch.records import Event
from configwatch.settings import Settings

PROBE = "bench-probe"


def _produce(bootstrap: str, topic: str, events: list[Event]) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20, batch_size=256 * 1024)
    for ev in events:
        producer.send(topic, key=ev.kafka_key(), value=ev.to_json().encode())
    producer.flush()
    producer.close()


class _Progress:
    """Collects the gauge query's progress events (a public StreamingQueryListener)."""

    def __init__(self, spark: Any) -> None:
        from pyspark.sql.streaming import StreamingQueryListener

        self.batches: list[dict[str, Any]] = []
        outer = self

        class Listener(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None:  # noqa: N802
                pass

            def onQueryProgress(self, event: Any) -> None:  # noqa: N802
                p = event.progress
                if p.name == "gauges" and p.numInputRows > 0:
                    ops = p.stateOperators
                    outer.batches.append({"rows": p.numInputRows, "ms": p.batchDuration,
                                          "add_ms": p.durationMs.get("addBatch", 0),
                                          "state_ms": ops[0].allUpdatesTimeMs if ops else 0})

            def onQueryIdle(self, event: Any) -> None:  # noqa: N802
                pass

            def onQueryTerminated(self, event: Any) -> None:  # noqa: N802
                pass

        self.listener = Listener()
        spark.streams.addListener(self.listener)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--connections", type=int, default=100_000)
    parser.add_argument("--latency-s", type=float, default=60.0)
    parser.add_argument("--churn", type=int, default=200, help="background events per second during the latency run")
    parser.add_argument("--trigger-interval", default="1 second")
    parser.add_argument("--max-offsets-per-trigger", type=int, default=20_000)
    parser.add_argument("--no-expectations", action="store_true", help="skip the GX suite in the decode stage")
    args = parser.parse_args(argv)

    from configwatch.localkafka import LocalKafka
    from sinks.kafka import ensure_topic
    from streaming.job import JobOptions, StreamingJob
    from streaming.session import SparkSettings, build_spark_session

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the broker below is stopped on a kill
    work = Path(tempfile.mkdtemp(prefix="gauge-e2e-"))
    broker = LocalKafka(work / "kafka")
    bootstrap = broker.start().bootstrap_servers
    try:
        topic, gauges_topic = "bench-conns", "bench-gauges"
        ensure_topic(bootstrap, topic, partitions=4)
        events = connection_events(args.connections, start_ms=int(time.time() * 1000) - 3_600_000)
        t0 = time.perf_counter()
        _produce(bootstrap, topic, events)
        produce_s = time.perf_counter() - t0
        spark = build_spark_session(SparkSettings(app_name="bench-gauge-e2e"))
        progress = _Progress(spark)
        common = dict(bootstrap_servers=bootstrap, checkpoint_dir=work / "ckpt", input_topic=topic,
                      gauges_topic=gauges_topic, sink="kafka", outputs="gauges",
                      expectations=not args.no_expectations, max_offsets_per_trigger=args.max_offsets_per_trigger)

        # 1. Throughput: the backlog, available-now.
        settings = Settings(**common, trigger="available-now")
        job = StreamingJob(settings, JobOptions.from_settings(settings), bootstrap, out=lambda _: None)
        t0 = time.perf_counter()
        job.start()
        job.wait()
        wall_s = time.perf_counter() - t0
        deadline = time.monotonic() + 30  # listener events arrive asynchronously
        while sum(b["rows"] for b in progress.batches) < len(events) and time.monotonic() < deadline:
            time.sleep(0.2)
        batches = list(progress.batches)
        got = fold_gauges(bootstrap, gauges_topic)
        expected = expected_gauges(events)
        exact = got == expected
        busy_s = sum(b["ms"] for b in batches) / 1000
        print(json.dumps({
            "phase": "throughput", "connections": args.connections, "events": len(events),
            "expectations": not args.no_expectations, "produce_s": round(produce_s, 1), "job_wall_s": round(wall_s, 1),
            "events_per_s_wall": round(len(events) / wall_s), "batches": len(batches),
            "events_per_s_in_batches": round(len(events) / busy_s) if busy_s else None,
            "batch_s": [round(b["ms"] / 1000, 1) for b in batches], "gauges_exact": exact,
            "fleet_connections": sum(c for c, _ in got.values()),
        }), flush=True)

        # 2. Latency: a running job on that state; churn plus one probe per second.
        progress.batches.clear()
        settings = Settings(**common, trigger="continuous", trigger_interval=args.trigger_interval)
        job = StreamingJob(settings, JobOptions.from_settings(settings), bootstrap,
                           out=lambda line: print(line, file=sys.stderr, flush=True))
        job.start()
        warm = Event(event="connection_closed", timestamp_ms=int(time.time() * 1000), connection_id="warm-up")
        _produce(bootstrap, topic, [warm])
        while not progress.batches:  # warmed up: the restarted query has run a batch with data
            time.sleep(0.2)
        progress.batches.clear()
        sent: dict[str, int] = {}
        seen: dict[str, int] = {}
        stop, stop_reading = threading.Event(), threading.Event()

        def consume() -> None:
            from kafka import KafkaConsumer

            consumer = KafkaConsumer(gauges_topic, bootstrap_servers=bootstrap, auto_offset_reset="latest",
                                     enable_auto_commit=False, group_id=None)
            while not stop_reading.is_set():
                for records in consumer.poll(timeout_ms=100).values():
                    now = int(time.time() * 1000)
                    for r in records:
                        key = r.key.decode() if r.key else ""
                        if key.startswith(PROBE + "/") and key not in seen:
                            seen[key] = now
            consumer.close()

        def churn() -> None:
            from kafka import KafkaProducer

            producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
            i, started = 0, time.monotonic()
            while not stop.is_set():
                second = int(time.monotonic() - started)
                conn = f"churn-{i}"
                for kind in ("connection_opened", "connection_closed"):
                    ev = Event(event=kind, timestamp_ms=int(time.time() * 1000), connection_id=conn,
                               client_software_name="librdkafka", client_software_version="2.8.0")
                    producer.send(topic, key=conn.encode(), value=ev.to_json().encode())
                if i % max(1, args.churn // 2) == 0:
                    key = f"{PROBE}/0.{second}.{i}"
                    ts = int(time.time() * 1000)
                    probe = Event(event="connection_opened", timestamp_ms=ts, connection_id=f"probe-{i}",
                                  client_software_name=PROBE, client_software_version=key.split("/")[1])
                    producer.send(topic, key=probe.kafka_key(), value=probe.to_json().encode())
                    producer.flush()
                    sent[key] = ts
                i += 1
                time.sleep(2 / args.churn)
            producer.close()

        reader = threading.Thread(target=consume, daemon=True)
        writer = threading.Thread(target=churn, daemon=True)
        reader.start()
        time.sleep(3)  # the consumer is assigned before the first probe
        start_ms = int(time.time() * 1000)
        writer.start()
        time.sleep(args.latency_s)
        stop.set()
        writer.join()
        deadline = time.monotonic() + 120
        while len(seen) < len(sent) and time.monotonic() < deadline:
            time.sleep(0.5)
        stop_reading.set()
        job.request_stop()
        job.wait()
        reader.join()
        lat = [(seen[k] - sent[k]) / 1000 for k in sent if k in seen]
        print(json.dumps({
            "phase": "latency", "connections_in_state": sum(c for c, _ in got.values()),
            "trigger_interval": args.trigger_interval, "churn_events_per_s": args.churn, "probes": len(sent),
            "probes_seen": len(lat), "p50_s": round(statistics.median(lat), 2) if lat else None,
            "p95_s": round(_pct(lat, 0.95), 2) if lat else None, "max_s": round(max(lat), 2) if lat else None,
            "batch_s_median": round(statistics.median(b["ms"] for b in progress.batches) / 1000, 2)
            if progress.batches else None,
            "state_op_s_median": round(statistics.median(b["state_ms"] for b in progress.batches) / 1000, 2)
            if progress.batches else None,
            "unseen_probe_send_s": sorted(round((sent[k] - start_ms) / 1000, 1) for k in sent if k not in seen),
        }), flush=True)
        spark.stop()
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

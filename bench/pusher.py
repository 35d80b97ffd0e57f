"""A steady-rate producer of workload records, run as its own process by the latency figure.

Usage::

    python -m bench.pusher --bootstrap HOST:PORT --topic T --rate 2000 --seconds 150

Sends ``bench.workload`` records (fresh event times) at ``--rate`` records per
second, paced every 10 ms, and every ``--probe-ms`` one ``connection_opened`` of
a new software version (``bench-probe/0.<n>``) whose gauge record the latency
figure times. Each record's Kafka timestamp is its send time (CreateTime). Its
own process, so its GIL never slows the job's driver, and a librdkafka producer
(confluent-kafka), so it takes little of the CPUs the job and the broker share:
0.37 CPUs at 2,000 records/s with kafka-python's, which batches in Python
(measured 2026-11-26; git log docs/benchmarks.md). Prints one JSON line: records
and probes sent, and how far the pacing fell behind.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from configwatch.records import Event
from configwatch.secrets import SecretStr

__all__ = ["PROBE", "main"]

PROBE = "bench-probe"
_TICK_S = 0.01


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--rate", type=int, default=2000, help="records per second")
    parser.add_argument("--seconds", type=float, default=150.0)
    parser.add_argument("--probe-ms", type=int, default=100, help="one gauge probe every this many ms")
    args = parser.parse_args(argv)

    from confluent_kafka import Producer

    from bench.workload import workload_records

    total = int(args.rate * args.seconds)
    records = iter(list(workload_records(total, SecretStr("bench-pusher"), start_ms=int(time.time() * 1000))))
    # murmur2 as the Java client and kafka-python partition by key; acks=1, 5 ms linger as before.
    producer = Producer({"bootstrap.servers": args.bootstrap, "acks": 1, "linger.ms": 5,
                         "partitioner": "murmur2_random"})
    failed: list[str] = []  # delivery errors, served by poll() and flush()

    def delivered(error: Any, _message: Any) -> None:
        if error is not None:
            failed.append(str(error))
    sent = probes = 0
    worst_lag_s = 0.0
    started = time.monotonic()
    started_ms = int(time.time() * 1000)
    next_probe = 0.0
    while sent < total:
        elapsed = time.monotonic() - started
        due = min(total, int(elapsed * args.rate))
        worst_lag_s = max(worst_lag_s, (due - sent) / args.rate)
        while sent < due:
            record = next(records)
            producer.produce(args.topic, key=record.key, value=record.value, on_delivery=delivered)
            sent += 1
        if elapsed >= next_probe:
            probe = Event(event="connection_opened", timestamp_ms=int(time.time() * 1000),
                          connection_id=f"{PROBE}-{probes}", client_software_name=PROBE,
                          client_software_version=f"0.{probes}")
            producer.produce(args.topic, key=probe.kafka_key(), value=probe.to_json().encode(),
                             on_delivery=delivered)
            probes += 1
            next_probe += args.probe_ms / 1000
        producer.poll(0)  # serve delivery reports as they come
        time.sleep(max(0.0, started + (sent / args.rate) + _TICK_S - time.monotonic()))
    if producer.flush(30):
        raise SystemExit("bench.pusher: records still unsent after 30 s")
    if failed:
        raise SystemExit(f"bench.pusher: {len(failed)} records not delivered, first: {failed[0]}")
    print(json.dumps({"started_ms": started_ms, "ended_ms": int(time.time() * 1000), "records": sent,
                      "probes": probes, "seconds": round(time.monotonic() - started, 2),
                      "worst_lag_s": round(worst_lag_s, 3)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

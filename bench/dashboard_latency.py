"""Latency from a gauge record produced to Kafka to its ``gauges`` event on the live page's stream.

Starts a local broker (temporary directory) and the dashboard, follows ``/events``
like the page does, produces gauge updates at irregular intervals and records, for
each, the time until the stream carried the new value. Compares the consumer's
fetch wait (``poll_ms``): Kafka's default 500 ms against the dashboard's 100 ms.

    .venv/bin/python -m bench.dashboard_latency [--updates 60]
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path

from kafka import KafkaProducer

from configwatch.localkafka import LocalKafka
from configwatch.records import Gauge
from configwatch.secrets import SecretStr
from sinks.dashboard import DashboardConfig, DashboardService, Topics


def _follow(url: str, seen: dict[int, float], stop: threading.Event) -> None:
    host, port = url.removeprefix("http://").rstrip("/").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    conn.request("GET", "/events")
    resp = conn.getresponse()
    name = ""
    while not stop.is_set():
        line = resp.readline().decode()
        if not line:
            break
        if line.startswith("event: "):
            name = line[7:].strip()
        elif line.startswith("data: ") and name == "gauges":
            now = time.perf_counter()
            for g in json.loads(line[6:])["gauges"]:
                if g["key"] == "bench/1.0":
                    seen.setdefault(g["connections"], now)
    conn.close()


def _run(bootstrap: str, poll_ms: int, updates: int) -> list[float]:
    suffix = uuid.uuid4().hex[:6]
    topics = Topics(f"bench-gauges-{suffix}", f"bench-alerts-{suffix}", f"bench-configs-{suffix}")
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=0)
    producer.send(topics.gauges, key=b"bench/1.0", value=Gauge("bench", "1.0", 1, 1, 0).to_json().encode()).get(30)
    config = DashboardConfig(bootstrap, topics, SecretStr("k"), port=0, poll_ms=poll_ms)
    rng = random.Random(3)
    with DashboardService(config) as svc:
        svc.wait_ready(60)
        seen: dict[int, float] = {}
        stop = threading.Event()
        reader = threading.Thread(target=_follow, args=(svc.url, seen, stop), daemon=True)
        reader.start()
        while 1 not in seen:
            time.sleep(0.05)
        sent: dict[int, float] = {}
        for i in range(2, updates + 2):
            time.sleep(rng.uniform(0.05, 0.4))  # irregular gaps: no phase lock with the poll loop
            sent[i] = time.perf_counter()
            producer.send(topics.gauges, key=b"bench/1.0", value=Gauge("bench", "1.0", i, 1, 0).to_json().encode())
            producer.flush()
        deadline = time.monotonic() + 30
        while len([i for i in sent if i in seen]) < len(sent) and time.monotonic() < deadline:
            time.sleep(0.05)
        stop.set()
    producer.close()
    return [1000 * (seen[i] - t) for i, t in sent.items() if i in seen]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--updates", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-dashboard-") as tmp:
        broker = LocalKafka(Path(tmp) / "kafka")
        info = broker.start()
        try:
            print(f"{'poll_ms':>8} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
            for poll_ms in (500, 100):
                lat = sorted(_run(info.bootstrap_servers, poll_ms, args.updates))
                p95 = lat[int(0.95 * (len(lat) - 1))]
                print(f"{poll_ms:>8} {len(lat):>4} {statistics.median(lat):>8.1f} {p95:>8.1f} {lat[-1]:>8.1f}")
        finally:
            broker.stop()


if __name__ == "__main__":
    main()

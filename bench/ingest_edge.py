"""Benchmark the ingest edge on the real local broker.

1. ``process()`` cost: KafkaTopicPolicy (redact, then offer to a bounded buffer
   drained by a producer thread) against the obvious alternative, calling
   ``KafkaProducer.send`` inside ``process()``; with a healthy broker and with an
   unreachable one (where ``send`` blocks for metadata up to ``max_block_ms``).
2. Redaction in bursts: ``redact_all`` per push at several burst sizes (the
   gateway hands the policy every push that queued while it judged the last).
3. Gateway throughput: simulated clients over TCP (ApiVersions + PushConfig +
   close, no hold time) at several concurrency levels, in this process.

Usage: .venv/bin/python bench/ingest_edge.py [--pushes 5000] [--clients 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import socket
import statistics
import tempfile
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from kafka import KafkaProducer

from configwatch.localkafka import LocalKafka
from configwatch.secrets import SecretStr
from configwatch.settings import Settings
from policy import ClientConfigData, ClientConfigPolicy, KafkaTopicPolicy, RequestContext
from policy.exceptions import PolicyUnavailableError
from policy.gateway import running_gateway
from policy.publisher import EventPublisher
from policy.redaction import redact, redact_all
from policy.simulator import FleetSpec, RunOptions, fleet_pushes, generate_fleet, run_over_tcp

KEY = SecretStr("bench-key")


class InlineSendPolicy(ClientConfigPolicy):
    """The alternative: redact, then ``producer.send`` inside ``process`` (may block)."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.topic = configs["input_topic"]
        self.producer = KafkaProducer(bootstrap_servers=configs["bootstrap_servers"], acks="all",
                                      enable_idempotence=True, linger_ms=5,
                                      max_block_ms=int(configs.get("max_block_ms", 60000)))

    def process(self, context: RequestContext, data: ClientConfigData) -> str | None:
        event = redact(context, data, KEY).event
        self.producer.send(self.topic, event.to_json().encode(), key=event.kafka_key())
        return None

    def close(self) -> None:
        self.producer.flush()
        self.producer.close()


def _latencies(policy: ClientConfigPolicy, pushes: list[tuple[RequestContext, ClientConfigData]]) -> list[float]:
    out = []
    for ctx, data in pushes:
        started = time.perf_counter()
        with contextlib.suppress(PolicyUnavailableError):  # refused (retriable) while Kafka is unreachable
            policy.process(ctx, data)
        out.append((time.perf_counter() - started) * 1e6)
    return out


def _row(name: str, lat: list[float], wall: float) -> str:
    q = statistics.quantiles(lat, n=100)
    return (f"| {name} | {len(lat)} | {statistics.median(lat):.0f} | {q[98]:.0f} | {max(lat):.0f} | "
            f"{len(lat) / wall:.0f} |")


def bench_process(bootstrap: str, n: int) -> None:
    fleet = generate_fleet(FleetSpec(clients=int(n * 1.7), seed=1))
    pushes = list(fleet_pushes(fleet))[:n]
    print("| variant | pushes | p50 µs | p99 µs | max µs | pushes/s (incl. close/flush) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, cls in (("bounded buffer + producer thread (kept)", KafkaTopicPolicy), ("send() inside process()",
                                                                                       InlineSendPolicy)):
        policy = cls()
        policy.configure({"bootstrap_servers": bootstrap, "input_topic": f"bench-{cls.__name__}",
                          "fingerprint_key": KEY, "policy_buffer_size": 100_000})
        publisher = getattr(policy, "publisher", None)
        if isinstance(publisher, EventPublisher):
            publisher.wait_connected(30)
        started = time.perf_counter()
        lat = _latencies(policy, pushes)
        policy.close()
        print(_row(name, lat, time.perf_counter() - started))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{probe.getsockname()[1]}"
    few = pushes[:5]
    policy = KafkaTopicPolicy()
    policy.configure({"bootstrap_servers": dead, "input_topic": "x", "fingerprint_key": KEY, "policy_buffer_size": 2})
    lat = _latencies(policy, few)
    policy.close()
    print(f"broker unreachable, bounded buffer: max process() {max(lat):.0f} µs over {len(few)} pushes "
          "(each refused with a retriable error)")
    print("broker unreachable, send() inside process(): KafkaProducer() itself blocks until bootstrap "
          "times out (30 s default), then every send() blocks up to max_block_ms (60 s default)")


def bench_bursts(rounds: int = 3) -> None:
    pushes = list(fleet_pushes(generate_fleet(FleetSpec(clients=3000, seed=1))))
    redact_all(pushes[:50], KEY)  # warm
    print("| pushes per call | ms per push (median of rounds) | rounds |")
    print("|---:|---:|---|")
    for n in (1, 10, 50, 250):
        per_push = []
        for r in range(rounds):
            chunks = [pushes[i:i + n] for i in range(r * 7, r * 7 + 500, n)][:max(1, 300 // n)]
            started = time.perf_counter()
            for chunk in chunks:
                redact_all(chunk, KEY)
            per_push.append((time.perf_counter() - started) * 1000 / sum(len(c) for c in chunks))
        print(f"| {n} | {statistics.median(per_push):.2f} | {', '.join(f'{x:.2f}' for x in per_push)} |")


def bench_gateway(bootstrap: str, clients: int) -> None:
    settings = replace(Settings.load(environ={}), input_topic="bench-gateway", fingerprint_key=KEY)
    fleet = [replace(c, hold_ms=0) for c in generate_fleet(FleetSpec(clients=clients, seed=2))]
    print("| concurrency | clients | pushes | seconds | clients/s |")
    print("|---:|---:|---:|---:|---:|")
    for concurrency in (10, 100, 500):
        with running_gateway(settings, bootstrap, gateway_port=0, gateway_metrics_port=-1) as gw:
            started = time.perf_counter()
            report = asyncio.run(run_over_tcp(gw.address, fleet, RunOptions(concurrency=concurrency, hold=False)))
            wall = time.perf_counter() - started
        assert report.count("failed") == 0
        print(f"| {concurrency} | {clients} | {report.attempted} | {wall:.2f} | {clients / wall:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pushes", type=int, default=5000)
    parser.add_argument("--clients", type=int, default=2000)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the simulated clients' warnings are not the point here
    with tempfile.TemporaryDirectory(prefix="bench-kafka-") as tmp:
        broker = LocalKafka(Path(tmp))
        info = broker.start()
        try:
            bench_process(info.bootstrap_servers, args.pushes)
            bench_bursts()
            bench_gateway(info.bootstrap_servers, args.clients)
        finally:
            broker.stop()


if __name__ == "__main__":
    main()

"""Throughput of ``udfs.rules.detect`` (every stateless rule) and ``detect_with_state`` on realistic pushes.

Usage (from the repository root)::

    .venv/bin/python -m bench.detect_batch [--pushes 20000] [--repeat 3]

The pushes look like what the KIP's default key lists produce: Java producers
(11 keys) and consumers (10 keys) plus librdkafka clients, with a few custom keys,
a small share of misconfigurations and planted secrets. Prints pushes/s and
entries/s for one batch of ``--pushes`` rows (median of ``--repeat`` runs).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import uuid
from typing import Any

import pyarrow as pa

from configwatch.secrets import SecretStr
from udfs.rules.batch import CONFIGS_TYPE
from udfs.rules.detect import detect
from udfs.rules.stateful import detect_with_state

PRODUCER = {"acks": "all", "batch.size": "16384", "buffer.memory": "33554432", "compression.type": "lz4",
            "delivery.timeout.ms": "120000", "enable.idempotence": "true", "linger.ms": "5",
            "max.in.flight.requests.per.connection": "5", "request.timeout.ms": "30000", "retries": "2147483647"}
CONSUMER = {"auto.offset.reset": "latest", "enable.auto.commit": "true", "fetch.min.bytes": "1",
            "fetch.max.wait.ms": "500", "group.id": "orders", "isolation.level": "read_uncommitted",
            "max.poll.interval.ms": "300000", "max.poll.records": "500", "session.timeout.ms": "45000"}
RDKAFKA = {"acks": "-1", "linger.ms": "5", "enable.idempotence": "false", "queue.buffering.max.messages": "100000",
           "message.timeout.ms": "300000", "statistics.interval.ms": "0"}


def _entries(configs: dict[str, str], rng: random.Random) -> list[dict[str, Any]]:
    out = [{"key": k, "value": v, "type": "STRING", "is_default": rng.random() < 0.7, "redacted": None,
            "fingerprint": None} for k, v in configs.items()]
    if rng.random() < 0.1:
        out.append({"key": "app.custom.setting", "value": "on", "type": "STRING", "is_default": False,
                    "redacted": None, "fingerprint": None})
    return out


def pushes(n: int, seed: int = 5) -> pa.Table:
    rng = random.Random(seed)
    rows: dict[str, list[Any]] = {k: [] for k in ("client_instance_id", "client_software_name",
                                                   "client_software_version", "client_id", "principal",
                                                   "client_address", "connection_id", "timestamp_ms", "configs")}
    for i in range(n):
        kind = rng.random()
        if kind < 0.45:
            name, version, configs = "apache-kafka-java", "4.3.1", dict(PRODUCER)
            if rng.random() < 0.02:
                configs["acks"] = "1"
        elif kind < 0.9:
            name, version, configs = "apache-kafka-java", "3.9.0", dict(CONSUMER)
            configs["group.id"] = f"group-{rng.randrange(200)}"
            if rng.random() < 0.02:
                configs["heartbeat.interval.ms"] = "60000"
        else:
            name, version, configs = "librdkafka", "2.12.0", dict(RDKAFKA)
        if rng.random() < 0.005:
            configs["app.token"] = "ghp_" + "".join(rng.choice("abcdefghXYZ0123456789") for _ in range(36))
        rows["client_instance_id"].append(str(uuid.UUID(int=rng.getrandbits(128), version=4)))
        rows["client_software_name"].append(name)
        rows["client_software_version"].append(version)
        rows["client_id"].append(f"service-{i % 500}")
        rows["principal"].append(f"User:svc{i % 50}")
        rows["client_address"].append(f"10.0.{i % 256}.{i % 200}")
        rows["connection_id"].append(f"10.0.0.1:9092-10.0.{i % 256}.{i % 200}:{40000 + i % 20000}-{i}")
        rows["timestamp_ms"].append(1_790_000_000_000 + i)
        rows["configs"].append(_entries(configs, rng))
    return pa.table({k: pa.array(v, CONFIGS_TYPE if k == "configs" else None) for k, v in rows.items()})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pushes", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    key = SecretStr("bench-key")
    batch = pushes(args.pushes)
    entries = sum(len(c) for c in batch.column("configs").to_pylist())
    detect(batch.slice(0, 100), key, 0)  # warm up caches
    for name, fn in (("detect", lambda: detect(batch, key, 0)),
                     ("detect_with_state", lambda: detect_with_state(batch, key, 0)[0])):
        times, found = [], 0
        for _ in range(args.repeat):
            start = time.perf_counter()
            found = fn().num_rows
            times.append(time.perf_counter() - start)
        t = statistics.median(times)
        print(f"{name}: {args.pushes} pushes, {entries} entries, {found} findings in {t:.2f} s: "
              f"{args.pushes / t:,.0f} pushes/s, {entries / t:,.0f} entries/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What the gateway costs as a Kafka proxy (issue 15): produce throughput, produce latency, handshakes/s.

One local broker (KRaft, temporary directory) is both the upstream cluster and
the events topic's home; ``configwatch gateway --upstream`` runs as its own
process; the clients run in this process (librdkafka through confluent-kafka for
produce, raw asyncio sockets for handshakes).

1. Produce throughput, MB/s: one confluent-kafka producer (acks=all, 1 KiB
   values, librdkafka defaults otherwise) sends ``--messages`` records straight
   to the broker and through the gateway, alternating, ``--rounds`` each.
2. Produce latency: the same producer at a steady ``--rate`` msg/s for
   ``--latency-s`` seconds, send to delivery report, p50/p99; direct and through
   the gateway, alternating.
   With ``--push-rate N``, a third latency run per round goes through the gateway
   while ``configwatch simulate`` (its own process) pushes N configurations a
   second through it: what a fleet's pushes cost the proxied traffic.
3. New connections per second per gateway process: ``--concurrency`` client
   tasks each connect (a TLS handshake first under SASL_SSL), send ApiVersions
   v3 (a KIP-511 name and version), read the answer (forwarded to the broker and
   back) and close, for ``--handshake-s`` seconds. The CPU each process spent per
   connection (gateway, broker, these clients) says which one bounds the rate:
   all three share this machine's cores.

``--security-protocol SASL_SSL`` runs all three over the broker's SASL_SSL
listener (SCRAM-SHA-512): direct, and through a gateway speaking SASL_SSL on both
hops (certificates from ``configwatch.localkafka.certs``).

Usage: .venv/bin/python -m bench.proxy [--messages 100000] [--rounds 3] [--rate 2000] [--security-protocol SASL_SSL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import select
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from confluent_kafka import Producer

from bench.harness import machine
from bench.proctree import cpu_seconds
from configwatch.localkafka import LocalKafka
from configwatch.localkafka.certs import LocalCA
from configwatch.localkafka.security import BrokerSecurity
from configwatch.secrets import SecretStr
from policy.protocol import ApiVersionsRequest, encode_request

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent
VALUE = os.urandom(1024)
READY = re.compile(r"gateway listening on (\S+) ")


def _create_topic(bootstrap: str, topic: str) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, num_partitions=4, replication_factor=1)])
    finally:
        admin.close()


class _Security:
    """The run's security protocol: what the broker, the gateway and the clients are given."""

    def __init__(self, protocol: str, home: Path) -> None:
        self.protocol = protocol
        self.ca = LocalCA(home / "tls") if protocol == "SASL_SSL" else None
        self.password = SecretStr(uuid.uuid4().hex)

    def broker(self) -> BrokerSecurity | None:
        return BrokerSecurity(self.ca, {"bench": self.password}) if self.ca else None

    def gateway_flags(self, upstream: str) -> list[str]:
        if self.ca is None:
            return ["--upstream", upstream]
        pem = self.ca.issue("gateway", "/CN=gateway", server=True)
        return ["--upstream", f"SASL_SSL://{upstream}", "--upstream-ssl-cafile", str(self.ca.cert),
                "--gateway-security-protocol", "SASL_SSL", "--gateway-ssl-certfile", str(pem.cert),
                "--gateway-ssl-keyfile", str(pem.key)]

    def client(self) -> dict[str, str]:
        if self.ca is None:
            return {}
        return {"security.protocol": "SASL_SSL", "ssl.ca.location": str(self.ca.cert),
                "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "bench",
                "sasl.password": self.password.get_secret_value()}

    def tls(self) -> ssl.SSLContext | None:
        return ssl.create_default_context(cafile=str(self.ca.cert)) if self.ca else None


@contextmanager
def _gateway(broker: str, upstream: str, events: str, security: _Security) -> Iterator[tuple[str, int]]:
    """``configwatch gateway --upstream`` as its own process; yields its bootstrap address and pid."""
    cmd = [sys.executable, "-m", "cli.main", "--log-level", "WARNING", "gateway",
           "--bootstrap-servers", broker, "--input-topic", events, *security.gateway_flags(upstream),
           "--gateway-port", "0", "--gateway-metrics-port", "-1", "--gateway-broker-port-base", "0"]
    env = {**os.environ, "CONFIGWATCH_FINGERPRINT_KEY": "bench-proxy"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 120)
        match = READY.search(proc.stdout.readline() if ready else "")
        if match is None:
            raise RuntimeError(f"the gateway did not start (exit {proc.poll()})")
        yield match.group(1), proc.pid
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


@contextmanager
def _pushing(address: str, rate: int, seconds: float, security: _Security) -> Iterator[None]:
    """``configwatch simulate`` pushing ``rate`` configurations a second through the gateway, for the block."""
    if security.protocol != "PLAINTEXT":
        raise SystemExit("--push-rate: the simulated fleet speaks PLAINTEXT only")
    host, port = address.rsplit(":", 1)
    cmd = [sys.executable, "-m", "cli.main", "--log-level", "ERROR", "simulate", "--connect", "--gateway-host", host,
           "--gateway-port", port, "--clients", str(int(rate * (seconds + 30))), "--rate", str(rate),
           "--hold-ms", "0", "--concurrency", "50", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "CONFIGWATCH_FINGERPRINT_KEY": "bench-proxy"})
    try:
        time.sleep(3)  # the fleet's first connections; not a synchronisation: a bench warm-up
        yield
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def _producer(bootstrap: str, security: dict[str, str]) -> Producer:
    return Producer({"bootstrap.servers": bootstrap, "acks": "all", "client.id": "bench-proxy", **security})


def _throughput(bootstrap: str, topic: str, messages: int, security: dict[str, str]) -> float:
    """MB/s (10^6 bytes of values) for ``messages`` acknowledged 1 KiB records."""
    producer = _producer(bootstrap, security)
    producer.produce(topic, VALUE)
    producer.flush(60)  # metadata and connections before the clock starts
    start = time.perf_counter()
    for _ in range(messages):
        while True:
            try:
                producer.produce(topic, VALUE)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    if producer.flush(300) != 0:
        raise RuntimeError("records still unacknowledged after 300 s")
    return messages * len(VALUE) / 1e6 / (time.perf_counter() - start)


def _latency(bootstrap: str, topic: str, rate: int, seconds: float, security: dict[str, str]) -> dict[str, float]:
    """Send to delivery report at a steady rate; the first second is warm-up."""
    producer = _producer(bootstrap, security)
    producer.produce(topic, VALUE)
    producer.flush(60)
    samples: list[float] = []
    errors = 0

    def report(sent: float) -> Any:
        def done(err: Any, _msg: Any) -> None:
            nonlocal errors
            if err is not None:
                errors += 1
            elif sent >= warm:
                samples.append(time.perf_counter() - sent)
        return done

    start = time.perf_counter()
    warm = start + 1.0
    n = 0
    while (now := time.perf_counter()) < start + seconds + 1.0:
        due = int((now - start) * rate)
        while n < due:
            producer.produce(topic, VALUE, on_delivery=report(time.perf_counter()))
            n += 1
        producer.poll(0.0005)
    producer.flush(60)
    samples.sort()
    return {"messages": len(samples), "errors": errors,
            "p50_ms": round(1000 * samples[len(samples) // 2], 2),
            "p99_ms": round(1000 * samples[int(len(samples) * 0.99)], 2)}


async def _handshakes(address: str, concurrency: int, seconds: float, tls: ssl.SSLContext | None
                      ) -> dict[str, Any]:
    host, port = address.rsplit(":", 1)
    request = encode_request(ApiVersionsRequest(client_software_name="bench-handshake",
                                                client_software_version="1.0"), 3, 1, "bench-handshake")
    done = failed = 0
    end = time.perf_counter() + seconds

    async def client() -> None:
        nonlocal done, failed
        while time.perf_counter() < end:
            try:
                reader, writer = await asyncio.open_connection(host, int(port), ssl=tls)
                writer.write(request)
                size = int.from_bytes(await reader.readexactly(4), "big")
                await reader.readexactly(size)
                writer.close()
                await writer.wait_closed()
                done += 1
            except (OSError, asyncio.IncompleteReadError):
                failed += 1

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    return {"connections": done, "failed": failed, "seconds": round(elapsed, 2),
            "connections_per_s": round(done / elapsed)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.proxy", description=__doc__.split("\n")[0])
    p.add_argument("--messages", type=int, default=100_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--rate", type=int, default=2000)
    p.add_argument("--latency-s", type=float, default=20.0)
    p.add_argument("--concurrency", type=int, default=50)
    p.add_argument("--handshake-s", type=float, default=15.0)
    p.add_argument("--push-rate", type=int, default=0, help="pushes/s beside a third latency run (0: none)")
    p.add_argument("--security-protocol", choices=("PLAINTEXT", "SASL_SSL"), default="PLAINTEXT")
    p.add_argument("--out", type=Path, default=None, help="default: bench/results/proxy[-sasl_ssl].json")
    args = p.parse_args(argv)
    suffix = "" if args.security_protocol == "PLAINTEXT" else "-" + args.security_protocol.lower()
    args.out = args.out or ROOT / "bench" / "results" / f"proxy{suffix}.json"
    result: dict[str, Any] = {"parameters": vars(args) | {"out": str(args.out)}, "machine": machine()}
    with tempfile.TemporaryDirectory(prefix="bench-proxy-") as tmp:
        security = _Security(args.security_protocol, Path(tmp))
        broker = LocalKafka(Path(tmp) / "broker", heap="1g", security=security.broker())
        info = broker.start()
        plain, direct = info.bootstrap_servers, info.bootstrap_for(args.security_protocol)
        client = security.client()
        try:
            topic, events = f"bench-proxy-{uuid.uuid4().hex[:8]}", f"bench-proxy-events-{uuid.uuid4().hex[:8]}"
            _create_topic(plain, topic)
            _create_topic(plain, events)
            with _gateway(plain, direct, events, security) as (proxied, gateway_pid):
                _throughput(direct, topic, min(args.messages, 10_000), client)  # warm-up, both paths
                _throughput(proxied, topic, min(args.messages, 10_000), client)
                mbs: dict[str, list[float]] = {"direct": [], "gateway": []}
                lat: dict[str, list[dict[str, float]]] = {"direct": [], "gateway": []}
                if args.push_rate:
                    lat["gateway_with_pushes"] = []
                for _ in range(args.rounds):
                    for name, bootstrap in (("direct", direct), ("gateway", proxied)):
                        mbs[name].append(round(_throughput(bootstrap, topic, args.messages, client), 1))
                        print(f"throughput {name}: {mbs[name][-1]} MB/s", flush=True)
                for _ in range(args.rounds):
                    for name, bootstrap in (("direct", direct), ("gateway", proxied)):
                        lat[name].append(_latency(bootstrap, topic, args.rate, args.latency_s, client))
                        print(f"latency {name}: {lat[name][-1]}", flush=True)
                    if args.push_rate:
                        with _pushing(proxied, args.push_rate, args.latency_s, security):
                            lat["gateway_with_pushes"].append(
                                _latency(proxied, topic, args.rate, args.latency_s, client))
                        print(f"latency gateway, {args.push_rate} pushes/s: {lat['gateway_with_pushes'][-1]}",
                              flush=True)
                pids = {"gateway": gateway_pid, "broker": info.pid, "clients": os.getpid()}
                before = {name: cpu_seconds(pid) for name, pid in pids.items()}
                hand = asyncio.run(_handshakes(proxied, args.concurrency, args.handshake_s, security.tls()))
                hand["cpu_ms_per_connection"] = {
                    name: round(1000 * (cpu_seconds(pid) - before[name]) / max(hand["connections"], 1), 2)
                    for name, pid in pids.items()}
                print(f"handshakes: {hand}", flush=True)
        finally:
            broker.stop()
    med = {k: statistics.median(v) for k, v in mbs.items()}
    result["throughput_mb_s"] = mbs | {"ratio_gateway_over_direct": round(med["gateway"] / med["direct"], 3)}
    result["latency"] = lat | {"p99_ms_median": {k: statistics.median(r["p99_ms"] for r in v) for k, v in lat.items()}}
    result["handshakes"] = hand
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps({k: result[k] for k in ("throughput_mb_s", "handshakes")} |
                     {"p99_ms_median": result["latency"]["p99_ms_median"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

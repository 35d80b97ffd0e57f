"""Memory of the gateway and the dashboard under the attacks of issue 14 (PSS, from /proc).

Each service runs as its own ``configwatch`` process against a local broker:

- gateway: a baseline push, then ``--clients`` connections that each announce a
  128-character software name and push 1,900 empty entries (9.5 KB), first with
  Kafka up, then with the broker stopped (pushes are refused; connection events
  wait in the byte-bounded buffer);
- dashboard: ``--pushes`` config pushes of 1,900 entries under fresh instance ids
  on its input topic (the views are byte-bounded).

Prints one table of PSS per phase, in MB. Usage:
``.venv/bin/python -m bench.edge_memory [--clients 2000] [--pushes 300]``
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kafka import KafkaProducer

from configwatch.localkafka import LocalKafka
from configwatch.records import ConfigEntry, Event
from policy.protocol import ApiVersionsRequest, PushConfigRequest, encode_request

__all__ = ["main"]

CLI = [str(Path(sys.executable).parent / "configwatch"), "--log-level", "ERROR"]
NAME = "n" * 128


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pss_mb(pid: int) -> float:
    """PSS of one process in MB (``/proc/<pid>/smaps_rollup``)."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _wait_http(url: str, deadline_s: float = 60) -> None:
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _recv_frame(sock: socket.socket) -> bytes:
    head = sock.recv(4, socket.MSG_WAITALL)
    return sock.recv(int.from_bytes(head, "big"), socket.MSG_WAITALL) if len(head) == 4 else b""


def _attack_one(address: tuple[str, int], n: int) -> None:
    with socket.create_connection(address, timeout=30) as sock:
        sock.sendall(encode_request(ApiVersionsRequest(version=3, client_software_name=NAME,
                                                       client_software_version="1.0"), 3, 1, f"attacker-{n}"))
        _recv_frame(sock)
        configs = [PushConfigRequest.Config(config_key="", config_value="", config_type=2, is_default=True)
                   for _ in range(1900)]
        sock.sendall(encode_request(PushConfigRequest(version=0, configs=configs), 0, 2, f"attacker-{n}"))
        _recv_frame(sock)


def _attack(address: tuple[str, int], clients: int) -> None:
    with ThreadPoolExecutor(50) as pool:
        list(pool.map(lambda n: _attack_one(address, n), range(clients)))


def gateway_phases(broker: LocalKafka, bootstrap: str, clients: int) -> dict[str, float]:
    port, metrics = _free_port(), _free_port()
    proc = subprocess.Popen([*CLI, "gateway", "--bootstrap-servers", bootstrap, "--gateway-port", str(port),
                             "--gateway-metrics-port", str(metrics)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out: dict[str, float] = {}
    try:
        _wait_http(f"http://127.0.0.1:{metrics}/metrics")
        _attack(("127.0.0.1", port), 1)
        out["gateway: started, one push"] = pss_mb(proc.pid)
        _attack(("127.0.0.1", port), clients)
        out[f"gateway: {clients} connections x (128-char name + 1,900-entry push), Kafka up"] = pss_mb(proc.pid)
        broker.stop()
        _attack(("127.0.0.1", port), clients)
        out[f"gateway: {clients} more with Kafka stopped (pushes refused, events buffered)"] = pss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(60)
    return out


def dashboard_phases(bootstrap: str, pushes: int) -> dict[str, float]:
    port = _free_port()
    topic = "bench-dashboard-configs"
    proc = subprocess.Popen([*CLI, "dashboard", "--bootstrap-servers", bootstrap, "--input-topic", topic,
                             "--dashboard-port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out: dict[str, float] = {}
    try:
        _wait_http(f"http://127.0.0.1:{port}/healthz")
        out["dashboard: started"] = pss_mb(proc.pid)
        producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=20)
        entries = tuple(ConfigEntry("", "", "STRING", True) for _ in range(1900))
        for n in range(pushes):
            event = Event(event="config_push", timestamp_ms=n + 1, client_instance_id=f"instance-{n}",
                          client_software_name="apache-kafka-java", client_software_version="4.0.0", configs=entries)
            producer.send(topic, event.to_json().encode(), key=event.kafka_key())
        producer.flush()
        producer.close()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            doc = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=5).read())
            if sum(sum(t["records"].values()) for t in doc["topics"] if t["role"] == "configs") >= pushes:
                break
            time.sleep(0.5)
        out["dashboard: views kept"] = float(doc["tracked_clients"])
        out[f"dashboard: {pushes} pushes of 1,900 entries, fresh instance ids"] = pss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(60)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=2000)
    parser.add_argument("--pushes", type=int, default=300)
    args = parser.parse_args()
    os.environ.setdefault("CONFIGWATCH_FINGERPRINT_KEY", "bench-edge-memory")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-edge-") as tmp:
        broker = LocalKafka(Path(tmp))
        bootstrap = broker.start().bootstrap_servers
        try:
            results.update(dashboard_phases(bootstrap, args.pushes))
            results.update(gateway_phases(broker, bootstrap, args.clients))
        finally:
            broker.stop()
    print("| phase | PSS MB |\n|---|---:|")
    for phase, mb in results.items():
        print(f"| {phase} | {mb:.0f} |")


if __name__ == "__main__":
    main()

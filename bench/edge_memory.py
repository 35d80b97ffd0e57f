"""Memory of the gateway and the dashboard under the attacks of issue 14 (PSS, from /proc).

Each service runs as its own ``configwatch`` process against a local broker:

- gateway (``--gateway-push-rate-limit 5``), one attack after another, each row
  of the issue's table that can cost memory: ``--clients`` connections that each
  announce a 128-character software name and push 1,900 empty entries (rows 2
  and 4); 10 connections held with a 1 MB software name (row 4); 300 half-sent
  requests to ``/metrics`` (row 5); one client pushing in a loop for 10 s (row 6);
  1,000 connections switching identity (row 8); 50 clients that never read
  (row 10); unfinished frames, 2,000 of 60 KB and 200 of 1 MB (the frame
  budget); then with the broker stopped, ``--clients`` more, and connections until
  the 32 MiB publish buffer is full and drops;
- dashboard: ``--pushes`` config pushes of 1,900 entries under fresh instance ids
  on its input topic (row 3, the views are byte-bounded), 300 half-sent requests
  (row 5) and 200 connections in a burst (row 9).

After each attack a normal client must be served (a handshake, or a page), else
the run fails.

Prints one table of PSS per phase, in MB. Usage:
``.venv/bin/python -m bench.edge_memory [--clients 2000] [--pushes 300]``
"""

from __future__ import annotations

import argparse
import contextlib
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


def _attack(address: tuple[str, int], clients: int, one: Any = _attack_one) -> None:
    with ThreadPoolExecutor(50) as pool:
        list(pool.map(lambda n: one(address, n), range(clients)))


def _hello(sock: socket.socket, name: str, client_id: str, correlation_id: int = 1) -> bytes:
    sock.sendall(encode_request(ApiVersionsRequest(version=3, client_software_name=name,
                                                   client_software_version="1.0"), 3, correlation_id, client_id))
    return _recv_frame(sock)


def _normal_client(address: tuple[str, int]) -> None:
    """A normal handshake is answered (ApiVersions, error code NONE), or the run fails."""
    with socket.create_connection(address, timeout=30) as sock:
        answer = _hello(sock, "apache-kafka-java", "normal")
    if len(answer) < 6 or answer[4:6] != b"\0\0":
        raise SystemExit(f"a normal client was not served: {answer[:16]!r}")


def _switch_identity(address: tuple[str, int], n: int) -> None:
    with socket.create_connection(address, timeout=30) as sock:
        _hello(sock, "first", f"switch-{n}")
        _hello(sock, "second", f"switch-{n}", 2)


def _long_identity(address: tuple[str, int], n: int) -> None:
    """A handshake with a 128-character name and a 256-character client id: two ~1 KB events."""
    with socket.create_connection(address, timeout=30) as sock:
        _hello(sock, "n" * 128, f"{n:08d}" + "c" * 248)


def _held(address: tuple[str, int], count: int, first: bytes) -> list[socket.socket]:
    socks = []
    for _ in range(count):
        sock = socket.create_connection(address, timeout=30)
        sock.sendall(first)
        socks.append(sock)
    return socks


def _close_all(socks: list[socket.socket]) -> None:
    for sock in socks:
        sock.close()


def _push_loop(address: tuple[str, int], seconds: float) -> None:
    configs = [PushConfigRequest.Config(config_key="acks", config_value="all", config_type=2, is_default=False)]
    with socket.create_connection(address, timeout=30) as sock:
        _hello(sock, "noisy", "noisy")
        deadline, n = time.monotonic() + seconds, 2
        while time.monotonic() < deadline:
            sock.sendall(encode_request(PushConfigRequest(version=0, configs=configs), 0, n, "noisy"))
            _recv_frame(sock)
            n += 1


def _never_read(address: tuple[str, int], seconds: float) -> None:
    request = encode_request(ApiVersionsRequest(version=0), 0, 1, "never-reads")
    socks = []
    for _ in range(50):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(address)
        sock.setblocking(False)
        socks.append(sock)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.send(request * 200)
        time.sleep(0.05)  # pacing the flood, not synchronisation
    _close_all(socks)


def _metric(port: int, name: str) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name))


def gateway_phases(broker: LocalKafka, bootstrap: str, clients: int) -> dict[str, float]:
    port, metrics = _free_port(), _free_port()
    proc = subprocess.Popen([*CLI, "gateway", "--bootstrap-servers", bootstrap, "--gateway-port", str(port),
                             "--gateway-metrics-port", str(metrics), "--gateway-push-rate-limit", "5",
                             "--gateway-max-frame-bytes", str(2 * 1024 * 1024),
                             "--policy-buffer-size", "1000000"],  # the 32 MiB byte bound is the one that binds
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    address = ("127.0.0.1", port)
    out: dict[str, float] = {}

    def phase(name: str) -> None:
        _normal_client(address)
        out[f"gateway: {name}"] = pss_mb(proc.pid)
        print(f"  gateway: {name}: {out[f'gateway: {name}']:.0f} MB", file=sys.stderr)

    try:
        _wait_http(f"http://127.0.0.1:{metrics}/metrics")
        _attack(address, 1)
        phase("started, one push")
        _attack(address, clients)
        phase(f"rows 2, 4: {clients} connections x (128-char name + 1,900-entry push), Kafka up")
        held = _held(address, 10, encode_request(ApiVersionsRequest(
            version=3, client_software_name="k" * 1_000_000, client_software_version="1.0"), 3, 1, "huge"))
        phase("row 4: 10 connections with a 1 MB software name (refused)")
        _close_all(held)
        held = _held(("127.0.0.1", metrics), 300, b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        phase("row 5: 300 half-sent requests to /metrics (cap 32)")
        _close_all(held)
        _push_loop(address, 10)
        phase("row 6: one client pushing in a loop for 10 s (quota 5/s)")
        _attack(address, 1000, _switch_identity)
        phase("row 8: 1,000 connections switching identity")
        _never_read(address, 10)
        phase("row 10: 50 clients sending requests for 10 s, never reading")
        held = _held(address, 2000, (60_000).to_bytes(4, "big") + b"\0" * 30_000)
        held += _held(address, 200, (1_000_000).to_bytes(4, "big") + b"\0" * 500_000)
        phase("unfinished frames: 2,000 of 60 KB and 200 of 1 MB, half sent")
        _close_all(held)
        broker.stop()
        _attack(address, clients)
        phase(f"{clients} more with Kafka stopped (pushes refused, events buffered)")
        n = 0
        while _metric(metrics, 'configwatch_publisher_events{event="connection_opened",outcome="dropped"}') == 0:
            _attack(address, 2000, _long_identity)
            n += 2000
        phase(f"Kafka stopped, the 32 MiB publish buffer full ({n:,} more connections)")
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
        out[f"dashboard: row 3: {pushes} pushes of 1,900 entries, fresh instance ids"] = pss_mb(proc.pid)
        address = ("127.0.0.1", port)
        held = _held(address, 300, b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10).read()  # served during
        out["dashboard: row 5: 300 half-sent requests (cap 256)"] = pss_mb(proc.pid)
        _close_all(held)
        held = [socket.create_connection(address, timeout=10) for _ in range(200)]
        urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10).read()
        out["dashboard: row 9: 200 connections in a burst"] = pss_mb(proc.pid)
        _close_all(held)
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

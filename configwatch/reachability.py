"""Kafka answers within a deadline: the check every command makes before it uses a cluster.

A broker that is down, or a wrong ``--bootstrap-servers``, should be one clear line,
quickly, not a client library's retries, log lines and traceback. A TCP connect comes
first, so a refused port costs no Kafka client (and prints none of its logging).
``check_listening`` is the same for a port that is not Kafka's (``simulate --connect``'s gateway).
"""

from __future__ import annotations

import socket
import time

from configwatch.errors import BrokerUnreachableError, SetupError
from configwatch.hostports import host_ports

__all__ = ["check_broker", "check_listening", "unanswered"]


def _any_port_open(bootstrap: str, timeout_s: float) -> bool:
    try:
        servers = host_ports(bootstrap)
    except ValueError:
        return False
    for server in servers:
        try:
            with socket.create_connection(server, timeout=timeout_s):
                return True
        except OSError:
            continue
    return False


def unanswered(bootstrap: str, timeout_s: float) -> str | None:
    """One try: None when a broker at ``bootstrap`` answers a metadata request, else why not."""
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    if not _any_port_open(bootstrap, min(timeout_s, 2.0)):
        return "connection refused or timed out"  # no client, so none of its reconnect backoff or logging
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="configwatch-preflight",
                                 request_timeout_ms=max(1000, int(min(timeout_s, 10.0) * 1000)))
        try:
            return None if admin.describe_cluster().get("brokers") else "the cluster reports no brokers"
        finally:
            admin.close()
    except (KafkaError, OSError, ValueError) as exc:
        return type(exc).__name__


def check_broker(bootstrap: str, timeout_s: float) -> None:
    """Return once a broker at ``bootstrap`` answers a metadata request; raise at the deadline."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while (left := deadline - time.monotonic()) > 0:
        why = unanswered(bootstrap, left)
        if why is None:
            return
        last = why
        time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
    raise BrokerUnreachableError(f"cannot reach Kafka at {bootstrap} within {timeout_s:g} s ({last}); "
                                 "check --bootstrap-servers and that the broker runs")


def check_listening(host: str, port: int, timeout_s: float, what: str) -> None:
    """Return once something accepts a TCP connection at ``host:port``; at the deadline, SetupError naming ``what``."""
    deadline = time.monotonic() + timeout_s
    while (left := deadline - time.monotonic()) > 0:
        try:
            with socket.create_connection((host, port), timeout=min(left, 2.0)):
                return
        except OSError:
            time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
    raise SetupError(f"no {what} accepts connections at {host}:{port} within {timeout_s:g} s")

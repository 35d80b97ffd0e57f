"""Kafka answers within a deadline: the check every command makes before it uses a cluster.

A broker that is down, or a wrong ``--bootstrap-servers``, should be one clear line,
quickly, not a client library's retries, log lines and traceback. A TCP connect comes
first, so a refused port costs no Kafka client (and prints none of its logging).
``check_listening`` is the same for a port that is not Kafka's (``simulate --connect``'s gateway).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterable

from configwatch.errors import BrokerUnreachableError, SetupError
from configwatch.hostports import host_ports

__all__ = ["check_broker", "check_listening", "unanswered"]


def _accepts(servers: Iterable[tuple[str, int]], timeout_s: float) -> bool:
    """Whether any of ``servers`` accepts a TCP connection within ``timeout_s``."""
    for server in servers:
        try:
            with socket.create_connection(server, timeout=timeout_s):
                return True
        except OSError:
            continue
    return False


def _until(timeout_s: float, attempt: Callable[[float], str | None]) -> str | None:
    """Call ``attempt(seconds left)`` until it returns None (done) or the deadline passes; then the last reason."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while (left := deadline - time.monotonic()) > 0:
        why = attempt(left)
        if why is None:
            return None
        last = why
        time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
    return last


def unanswered(bootstrap: str, timeout_s: float) -> str | None:
    """One try: None when a broker at ``bootstrap`` answers a metadata request, else why not."""
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    try:
        servers = host_ports(bootstrap)
    except ValueError:
        return "not a HOST:PORT list"
    if not _accepts(servers, min(timeout_s, 2.0)):
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
    why = _until(timeout_s, lambda left: unanswered(bootstrap, left))
    if why is not None:
        raise BrokerUnreachableError(f"cannot reach Kafka at {bootstrap} within {timeout_s:g} s ({why}); "
                                     "check --bootstrap-servers and that the broker runs")


def check_listening(host: str, port: int, timeout_s: float, what: str) -> None:
    """Return once something accepts a TCP connection at ``host:port``; at the deadline, SetupError naming ``what``."""
    if _until(timeout_s, lambda left: None if _accepts([(host, port)], min(left, 2.0)) else "refused") is not None:
        raise SetupError(f"no {what} accepts connections at {host}:{port} within {timeout_s:g} s")

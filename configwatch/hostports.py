"""``host:port,host:port`` lists, as Kafka's ``bootstrap.servers`` takes them: parsed and checked in one place."""

from __future__ import annotations

__all__ = ["host_port", "host_ports"]


def host_port(item: str) -> tuple[str, int]:
    """``host:port`` (an IPv6 host in brackets) as a pair; ValueError saying what is wrong otherwise."""
    host, sep, port = item.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or any(c.isspace() for c in host) or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{item.strip()!r} is not HOST:PORT (a port 1-65535)")
    return host, int(port)


def host_ports(text: str) -> tuple[tuple[str, int], ...]:
    """Every ``host:port`` of a comma-separated list; ValueError for an empty list or a bad item."""
    items = [item for item in text.split(",") if item.strip()]
    if not items:
        raise ValueError("empty: give HOST:PORT,... (or leave it out)")
    return tuple(host_port(item) for item in items)

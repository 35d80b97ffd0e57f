"""Hosts and ``host:port,host:port`` lists as Kafka's ``bootstrap.servers`` takes them, checked in one place."""

from __future__ import annotations

import ipaddress
import re

__all__ = ["check_host", "host_port", "host_ports"]

# an RFC 1123 label; '_' too, which some internal DNS zones use and resolvers accept
_LABEL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")


def check_host(host: str) -> str:
    """``host`` if it is an IP address or a DNS name; ValueError saying what is wrong otherwise."""
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    labels = host[:-1].split(".") if host.endswith(".") else host.split(".")
    if len(host) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise ValueError(f"{host!r} is not a host name or IP address")
    return host


def host_port(item: str) -> tuple[str, int]:
    """``host:port`` (an IPv6 host in brackets) as a pair; ValueError saying what is wrong otherwise."""
    host, sep, port = item.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{item.strip()!r} is not HOST:PORT (a port 1-65535)")
    try:
        return check_host(host), int(port)
    except ValueError as exc:
        raise ValueError(f"{item.strip()!r} is not HOST:PORT: {exc}") from None


def host_ports(text: str) -> tuple[tuple[str, int], ...]:
    """Every ``host:port`` of a comma-separated list; ValueError for an empty list or a bad item."""
    items = [item for item in text.split(",") if item.strip()]
    if not items:
        raise ValueError("empty: give HOST:PORT,... (or leave it out)")
    return tuple(host_port(item) for item in items)

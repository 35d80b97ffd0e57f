"""The anomaly predicates of consumers, Kafka Streams and every client: masks over ``Effective``.

Each function takes the batch's effective values (``udfs.rules.effective``) and
returns one boolean per push; ``udfs.rules.anomalies`` pairs them with rule ids and
messages. The classic group protocol's timing rules stand down for consumers on
``group.protocol=consumer``, where the broker owns those settings (KIP-848).
"""

from __future__ import annotations

import ipaddress
from typing import Final

import pandas as pd

from udfs.rules.effective import Effective, flag

__all__ = ["BROKER_MAX_SESSION_MS", "BROKER_MIN_SESSION_MS", "CLASSIC_ONLY", "MAX_FETCH_BYTES", "MAX_POLL_RECORDS",
           "MIN_QUEUED_MESSAGES", "bootstrap_malformed", "bootstrap_public", "consumer_protocol", "eos_single_replica",
           "fetch_size", "fetch_wait", "hb_session", "hb_third", "max_poll_records", "queued_min_tiny",
           "reconnect_inverted", "retry_inverted", "session_bounds", "socket_setup_inverted"]

BROKER_MIN_SESSION_MS: Final = 6_000
BROKER_MAX_SESSION_MS: Final = 1_800_000
MAX_POLL_RECORDS: Final = 100_000  # max-poll-records-out-of-range (catalog rationale)
MAX_FETCH_BYTES: Final = 1 << 30  # fetch-size-out-of-range
MIN_QUEUED_MESSAGES: Final = 1_000  # queued-min-messages-tiny: 1 MiB (one partition's fetch) of 1 KiB messages
CLASSIC_ONLY: Final = ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy")
_IP_LITERAL: Final = r"(?:^|[,\s/])(\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\])(?=[:,\s]|$)"


def _classic(e: Effective) -> pd.Series:
    proto = e.value("group.protocol").astype("string").str.strip().str.lower()
    return flag(proto.isna() | (proto == "classic"))


_PLAINTEXT_PREFIX: Final = r"(?i)(^|,)\s*PLAINTEXT://"  # an entry's prefix naming the default protocol


def bootstrap_malformed(e: Effective) -> pd.Series:
    """A scheme in an entry, or an empty entry beside others (a wholly empty list fails at the client's start).

    Not ``PLAINTEXT://``: it names the protocol a client speaks by default; the Java client skips any prefix,
    librdkafka takes one that names its ``security.protocol``, and Testcontainers' ``KafkaContainer`` writes it."""
    servers = e.value("bootstrap.servers").astype("string").str.strip()
    scheme = servers.str.replace(_PLAINTEXT_PREFIX, r"\1", regex=True).str.contains("://", regex=False)
    empty = servers.str.contains(r"^,|,\s*,|,$", regex=True)
    return e.sent["bootstrap.servers"] & flag(scheme | empty)


def _public(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.strip("[]")).is_global
    except ValueError:
        return False


def bootstrap_public(e: Effective) -> pd.Series:
    """An entry whose host is an IP literal outside the private, loopback, shared and reserved ranges."""
    servers = e.value("bootstrap.servers").astype("string")
    hosts = servers.str.findall(_IP_LITERAL).explode().dropna()
    public = hosts.map({h: _public(h) for h in hosts.unique()}).astype(bool)
    return e.sent["bootstrap.servers"] & public.groupby(level=0).any().reindex(servers.index, fill_value=False)


def reconnect_inverted(e: Effective) -> pd.Series:
    inverted = flag(e.value("reconnect.backoff.max.ms") < e.value("reconnect.backoff.ms"))
    return inverted & ((e.judge != "java") | e.explicit["reconnect.backoff.max.ms"])


def retry_inverted(e: Effective) -> pd.Series:
    return flag(e.value("retry.backoff.max.ms") < e.value("retry.backoff.ms"))


def socket_setup_inverted(e: Effective) -> pd.Series:
    return flag(e.value("socket.connection.setup.timeout.max.ms") < e.value("socket.connection.setup.timeout.ms"))


def hb_session(e: Effective) -> pd.Series:
    return e.consumers & _classic(e) & flag(e.value("heartbeat.interval.ms") >= e.value("session.timeout.ms"))


def hb_third(e: Effective) -> pd.Series:
    hb, st = e.value("heartbeat.interval.ms"), e.value("session.timeout.ms")
    return e.consumers & _classic(e) & flag(hb > st / 3) & flag(hb < st)


def session_bounds(e: Effective) -> pd.Series:
    st = e.value("session.timeout.ms")
    return e.consumers & _classic(e) & flag((st < BROKER_MIN_SESSION_MS) | (st > BROKER_MAX_SESSION_MS))


def fetch_wait(e: Effective) -> pd.Series:
    return e.consumers & flag(e.value("fetch.max.wait.ms") >= e.value("request.timeout.ms"))


def max_poll_records(e: Effective) -> pd.Series:
    return e.consumers & e.set_by_user("max.poll.records", e.value("max.poll.records") > MAX_POLL_RECORDS)


def queued_min_tiny(e: Effective) -> pd.Series:
    return (e.consumers & (e.judge == "librdkafka")
            & e.set_by_user("queued.min.messages", e.value("queued.min.messages") < MIN_QUEUED_MESSAGES))


def fetch_size(e: Effective) -> pd.Series:
    return e.consumers & (e.set_by_user("fetch.max.bytes", e.value("fetch.max.bytes") > MAX_FETCH_BYTES)
                          | e.set_by_user("max.partition.fetch.bytes",
                                          e.value("max.partition.fetch.bytes") > MAX_FETCH_BYTES))


def eos_single_replica(e: Effective) -> pd.Series:
    guarantee = e.value("processing.guarantee").astype("string").str.strip().str.lower()
    return (e.role == "streams") & flag(guarantee.str.startswith("exactly_once")) & flag(
        e.value("replication.factor") == 1)


def consumer_protocol(e: Effective) -> pd.Series:
    proto = e.value("group.protocol").astype("string").str.strip().str.lower()
    explicit_any = e.explicit[list(CLASSIC_ONLY)].any(axis=1)
    return e.consumers & flag(proto == "consumer") & explicit_any

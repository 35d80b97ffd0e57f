"""Stateless anomaly rules: boolean masks over the effective values of a whole batch.

Each rule is a vectorized predicate over :class:`udfs.rules.effective.Effective`
(pandas columns, no loop per push). Where a client adjusts a value itself, the
rule judges what the client will actually run with:

- Java producer (and kafka-python 3): idempotence is on by default from 3.0 and, in
  the releases ``defaults.json`` records, silently turned off when the user sets acks,
  retries or max.in.flight in conflict (``idempotence-implicitly-disabled``); the
  conflict rules fire only for an explicit ``enable.idempotence=true``, and only for
  values the user set: an idempotent Java producer sets acks (default 1 before 3.0)
  to all and retries to the maximum itself when they were not set. A default
  ``delivery.timeout.ms`` below linger + request timeout is raised by the client,
  and a ``reconnect.backoff.ms`` set without a maximum becomes the maximum.
- librdkafka: with idempotence on it adjusts acks, retries and max.in.flight
  unless the user set them, so only explicit conflicts count; message.timeout.ms
  (``delivery.timeout.ms``) 0 means infinite.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd

from udfs.rules.catalog import rule as catalog_rule
from udfs.rules.effective import STRING_KEYS, Effective
from udfs.rules.findings import raw_frame

__all__ = ["BROKER_MAX_SESSION_MS", "BROKER_MIN_SESSION_MS", "CLASSIC_ONLY", "ENUMS", "FAILOVER_MS",
           "IDEMPOTENCE_MAX_IN_FLIGHT", "MAX_FETCH_BYTES", "MAX_POLL_RECORDS", "MIN_BUFFER_MEMORY", "PLACEHOLDER",
           "SHOWN_ACKS_ALL", "SHOWN_SET", "STATELESS_ANOMALIES", "UNBOUNDED_MS", "AnomalyRule", "evaluate"]

BROKER_MIN_SESSION_MS: Final = 6_000
BROKER_MAX_SESSION_MS: Final = 1_800_000
IDEMPOTENCE_MAX_IN_FLIGHT: Final = 5
MAX_POLL_RECORDS: Final = 100_000  # max-poll-records-out-of-range (catalog rationale)
MAX_FETCH_BYTES: Final = 1 << 30  # fetch-size-out-of-range
UNBOUNDED_MS: Final = 86_400_000  # a day: a wait this long is no bound (max-block-, delivery-timeout-unbounded)
MIN_BUFFER_MEMORY: Final = 1 << 20  # buffer-memory-too-small
FAILOVER_MS: Final = 18_000  # retries-limited: zookeeper.session.timeout.ms, the longest default wait to notice a
#                              dead broker (KRaft's broker.session.timeout.ms is 9 s) before its leaderships move


@dataclass(frozen=True)
class AnomalyRule:
    """A rule id, its predicate over the batch and its message; the keys its finding names are the catalog's."""

    id: str
    predicate: Callable[[Effective], pd.Series]
    message: str

    @property
    def keys(self) -> tuple[str, ...]:
        return catalog_rule(self.id).keys


def _b(series: pd.Series) -> pd.Series:
    return series.fillna(False).astype(bool)


def _is(col: pd.Series, value: bool) -> pd.Series:
    return _b(col.eq(value))


def _producer(e: Effective) -> pd.Series:
    return ~e.role.isin(["consumer", "admin"])


def _consumer(e: Effective) -> pd.Series:
    return ~e.role.isin(["producer", "admin"])


def _classic(e: Effective) -> pd.Series:
    proto = e.values["group.protocol"].astype("string").str.strip().str.lower()
    return _b(proto.isna() | (proto == "classic"))


def _counts(e: Effective, key: str) -> pd.Series:
    """librdkafka and the Java producer adjust conflicting idempotence settings unless the user set them.

    Java (ProducerConfig.postProcessParsedConfig) sets acks to all and retries to Integer.MAX_VALUE
    for an idempotent producer when they were not set; a default acks 1 (before 3.0) is not a conflict.
    """
    return ~e.judge.isin(["librdkafka", "java"]) | e.explicit[key]


def _idempotence_on(e: Effective) -> pd.Series:
    """Idempotence is on whatever else is set: set explicitly, or on by a default that does not give way.

    The Java producer's default never holds against a conflict: from 3.0.1 and 3.1.1 it gives way, and
    3.0.0 and 3.1.0 applied it only when set (KAFKA-13598; ``defaults.json``).
    """
    on = _is(e.values["enable.idempotence"], True)
    return on & (e.explicit["enable.idempotence"] | (~e.yields & (e.judge != "java")))


def _v(e: Effective, key: str) -> pd.Series:
    return e.values[key]


def _idem_acks(e: Effective) -> pd.Series:
    return _producer(e) & _idempotence_on(e) & _b(_v(e, "acks").isin([0, 1])) & _counts(e, "acks")


def _idem_inflight(e: Effective) -> pd.Series:
    bad = _b(_v(e, "max.in.flight.requests.per.connection") > IDEMPOTENCE_MAX_IN_FLIGHT)
    return _producer(e) & _idempotence_on(e) & bad & _counts(e, "max.in.flight.requests.per.connection")


def _idem_retries(e: Effective) -> pd.Series:
    return _producer(e) & _idempotence_on(e) & _b(_v(e, "retries") == 0) & _counts(e, "retries")


def _idem_implicit(e: Effective) -> pd.Series:
    """Default idempotence given way (releases with that behaviour) to a value the user set.

    Where the user did not set it, the release's default (on) holds whatever value was pushed: the Java
    producer pushes its post-processed ``false`` once it has given way.
    """
    acks, mif = _v(e, "acks"), "max.in.flight.requests.per.connection"
    conflict = ((_b(acks.notna() & (acks != -1)) & e.explicit["acks"])
                | (_b(_v(e, mif) > IDEMPOTENCE_MAX_IN_FLIGHT) & e.explicit[mif])
                | (_b(_v(e, "retries") == 0) & e.explicit["retries"]))
    return _producer(e) & e.yields & ~e.explicit["enable.idempotence"] & conflict


def _txn_no_idem(e: Effective) -> pd.Series:
    off = _is(_v(e, "enable.idempotence"), False) & (e.explicit["enable.idempotence"] | (e.judge == "none"))
    return _producer(e) & _transactional(e) & off


def _batching_disabled(e: Effective) -> pd.Series:
    return _producer(e) & _b(_v(e, "batch.size") == 0)


def _acks_all_retries_zero(e: Effective) -> pd.Series:
    return _producer(e) & _b(_v(e, "acks") == -1) & _b(_v(e, "retries") == 0) & ~_idempotence_on(e)


def _retries_limited(e: Effective) -> pd.Series:
    """Java from 2.1, where delivery.timeout.ms bounds a send (KIP-91): retries set so low that, even at the
    longest backoff, they run out before it and before a dead broker's leaderships move (0 is for
    acks-all-retries-zero and idempotence-retries)."""
    retries = _v(e, "retries")
    backoff = pd.concat([_v(e, "retry.backoff.ms"), _v(e, "retry.backoff.max.ms")], axis=1).max(axis=1)
    budget = retries * backoff
    early = _b(retries >= 1) & _b(budget < _v(e, "delivery.timeout.ms")) & _b(budget < FAILOVER_MS)
    return _producer(e) & (e.judge == "java") & e.explicit["retries"] & early


def _bootstrap_malformed(e: Effective) -> pd.Series:
    """A scheme in an entry, or an empty entry beside others (a wholly empty list fails at the client's start)."""
    servers = _v(e, "bootstrap.servers").astype("string").str.strip()
    scheme = servers.str.contains("://", regex=False)
    empty = servers.str.contains(r"^,|,\s*,|,$", regex=True)
    return e.sent["bootstrap.servers"] & _b(scheme | empty)


_IP_LITERAL: Final = r"(?:^|[,\s/])(\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\])(?=[:,\s]|$)"


def _public(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.strip("[]")).is_global
    except ValueError:
        return False


def _bootstrap_public(e: Effective) -> pd.Series:
    """An entry whose host is an IP literal outside the private, loopback, shared and reserved ranges."""
    servers = _v(e, "bootstrap.servers").astype("string")
    hosts = servers.str.findall(_IP_LITERAL).explode().dropna()
    public = hosts.map({h: _public(h) for h in hosts.unique()}).astype(bool)
    return e.sent["bootstrap.servers"] & public.groupby(level=0).any().reindex(servers.index, fill_value=False)


def _out_of_range(e: Effective, key: str, bad: pd.Series) -> pd.Series:
    """``bad`` where the user set ``key``: a release's own default is that release's behaviour, not a choice
    (0.10.0's max.poll.records is Integer.MAX_VALUE; 0.10.1 made it 500, KIP-62)."""
    return _b(bad) & e.explicit[key]


def _buffer_too_small(e: Effective) -> pd.Series:
    return _producer(e) & _out_of_range(e, "buffer.memory", _v(e, "buffer.memory") < MIN_BUFFER_MEMORY)


def _max_block(e: Effective) -> pd.Series:
    """Not on a Kafka Connect task's producer: Connect blocks its task thread on purpose (Worker sets
    max.block.ms to Long.MAX_VALUE so that a source task waits out an outage instead of failing)."""
    return _producer(e) & (e.judge == "java") & ~e.connect & _b(_v(e, "max.block.ms") >= UNBOUNDED_MS)


def _transactional(e: Effective) -> pd.Series:
    txn = _v(e, "transactional.id").astype("string").str.strip()
    return _b(txn.notna() & (txn != ""))


def _delivery_unbounded(e: Effective) -> pd.Series:
    """A day or more, or librdkafka's 0 (infinite). Not on a producer Kafka Connect configures (it sets
    Integer.MAX_VALUE on its tasks' and its internal topics' producers, on purpose) nor a transactional one, whose
    transaction.timeout.ms bounds every send (Kafka Streams under exactly-once sets Integer.MAX_VALUE)."""
    dt = _v(e, "delivery.timeout.ms")
    unbounded = _b(dt >= UNBOUNDED_MS) | ((e.judge == "librdkafka") & _b(dt == 0))
    return _producer(e) & unbounded & ~e.connect & ~_transactional(e)


def _max_poll_records(e: Effective) -> pd.Series:
    return _consumer(e) & _out_of_range(e, "max.poll.records", _v(e, "max.poll.records") > MAX_POLL_RECORDS)


def _fetch_size(e: Effective) -> pd.Series:
    return _consumer(e) & (_out_of_range(e, "fetch.max.bytes", _v(e, "fetch.max.bytes") > MAX_FETCH_BYTES)
                           | _out_of_range(e, "max.partition.fetch.bytes",
                                           _v(e, "max.partition.fetch.bytes") > MAX_FETCH_BYTES))


def _eos_single_replica(e: Effective) -> pd.Series:
    guarantee = _v(e, "processing.guarantee").astype("string").str.strip().str.lower()
    return (e.role == "streams") & _b(guarantee.str.startswith("exactly_once")) & _b(_v(e, "replication.factor") == 1)


def _acks_zero(e: Effective) -> pd.Series:
    return _producer(e) & _b(_v(e, "acks") == 0)


def _delivery_short(e: Effective) -> pd.Series:
    dt = _v(e, "delivery.timeout.ms")
    short = _b(dt < _v(e, "linger.ms") + _v(e, "request.timeout.ms"))
    infinite = (e.judge == "librdkafka") & _b(dt == 0)
    return _producer(e) & short & ~infinite & ((e.judge != "java") | e.explicit["delivery.timeout.ms"])


def _buffer_batch(e: Effective) -> pd.Series:
    return _producer(e) & _b(_v(e, "buffer.memory") < _v(e, "batch.size"))


def _reconnect(e: Effective) -> pd.Series:
    inverted = _b(_v(e, "reconnect.backoff.max.ms") < _v(e, "reconnect.backoff.ms"))
    return inverted & ((e.judge != "java") | e.explicit["reconnect.backoff.max.ms"])


def _retry(e: Effective) -> pd.Series:
    return _b(_v(e, "retry.backoff.max.ms") < _v(e, "retry.backoff.ms"))


def _socket(e: Effective) -> pd.Series:
    return _b(_v(e, "socket.connection.setup.timeout.max.ms") < _v(e, "socket.connection.setup.timeout.ms"))


def _hb_session(e: Effective) -> pd.Series:
    return _consumer(e) & _classic(e) & _b(_v(e, "heartbeat.interval.ms") >= _v(e, "session.timeout.ms"))


def _hb_third(e: Effective) -> pd.Series:
    hb, st = _v(e, "heartbeat.interval.ms"), _v(e, "session.timeout.ms")
    return _consumer(e) & _classic(e) & _b(hb > st / 3) & _b(hb < st)


def _session_bounds(e: Effective) -> pd.Series:
    st = _v(e, "session.timeout.ms")
    return _consumer(e) & _classic(e) & _b((st < BROKER_MIN_SESSION_MS) | (st > BROKER_MAX_SESSION_MS))


def _fetch_wait(e: Effective) -> pd.Series:
    return _consumer(e) & _b(_v(e, "fetch.max.wait.ms") >= _v(e, "request.timeout.ms"))


CLASSIC_ONLY: Final = ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy")


def _consumer_protocol(e: Effective) -> pd.Series:
    proto = _v(e, "group.protocol").astype("string").str.strip().str.lower()
    explicit_any = e.explicit[list(CLASSIC_ONLY)].any(axis=1)
    return _consumer(e) & _b(proto == "consumer") & explicit_any


STATELESS_ANOMALIES: tuple[AnomalyRule, ...] = (
    AnomalyRule("idempotence-acks", _idem_acks,
                "enable.idempotence=true with acks={acks}: idempotence needs acks=all"),
    AnomalyRule("idempotence-max-in-flight", _idem_inflight,
                "enable.idempotence=true with max.in.flight.requests.per.connection="
                "{max.in.flight.requests.per.connection}: idempotence needs at most 5"),
    AnomalyRule("idempotence-retries", _idem_retries,
                "enable.idempotence=true with retries=0: idempotence needs retries > 0"),
    AnomalyRule("idempotence-implicitly-disabled", _idem_implicit,
                "default idempotence is silently disabled by acks={acks}, max.in.flight.requests.per.connection="
                "{max.in.flight.requests.per.connection}, retries={retries}"),
    AnomalyRule("transactional-without-idempotence", _txn_no_idem,
                "a transactional.id is set with enable.idempotence=false"),
    AnomalyRule("batching-disabled", _batching_disabled, "batch.size=0 disables batching"),
    AnomalyRule("acks-all-retries-zero", _acks_all_retries_zero,
                "acks=all with retries=0: one transient error fails the write"),
    AnomalyRule("retries-limited", _retries_limited,
                "retries={retries} runs out before delivery.timeout.ms={delivery.timeout.ms}"),
    AnomalyRule("acks-zero", _acks_zero, "acks=0: failed writes go unnoticed and retries do not apply"),
    AnomalyRule("bootstrap-servers-malformed", _bootstrap_malformed,
                "bootstrap.servers has an entry with a URL scheme or an empty entry"),
    AnomalyRule("bootstrap-public-address", _bootstrap_public,
                "bootstrap.servers names a broker by a public IP address: check that the connection uses TLS"),
    AnomalyRule("delivery-timeout-too-short", _delivery_short,
                "delivery.timeout.ms={delivery.timeout.ms} is below linger.ms={linger.ms} + "
                "request.timeout.ms={request.timeout.ms}"),
    AnomalyRule("buffer-below-batch", _buffer_batch,
                "buffer.memory={buffer.memory} is below batch.size={batch.size}"),
    AnomalyRule("reconnect-backoff-inverted", _reconnect,
                "reconnect.backoff.max.ms={reconnect.backoff.max.ms} is below "
                "reconnect.backoff.ms={reconnect.backoff.ms}"),
    AnomalyRule("retry-backoff-inverted", _retry,
                "retry.backoff.max.ms={retry.backoff.max.ms} is below retry.backoff.ms={retry.backoff.ms}"),
    AnomalyRule("socket-setup-timeout-inverted", _socket,
                "socket.connection.setup.timeout.max.ms={socket.connection.setup.timeout.max.ms} is below "
                "socket.connection.setup.timeout.ms={socket.connection.setup.timeout.ms}"),
    AnomalyRule("heartbeat-not-below-session", _hb_session,
                "heartbeat.interval.ms={heartbeat.interval.ms} is not below session.timeout.ms={session.timeout.ms}"),
    AnomalyRule("heartbeat-above-third", _hb_third,
                "heartbeat.interval.ms={heartbeat.interval.ms} is above a third of "
                "session.timeout.ms={session.timeout.ms}"),
    AnomalyRule("session-timeout-out-of-bounds", _session_bounds,
                "session.timeout.ms={session.timeout.ms} is outside the broker's default bounds 6000..1800000"),
    AnomalyRule("max-block-unbounded", _max_block, "max.block.ms={max.block.ms} is a day or more"),
    AnomalyRule("delivery-timeout-unbounded", _delivery_unbounded,
                "delivery.timeout.ms={delivery.timeout.ms} is a day or more, or infinite (librdkafka's 0)"),
    AnomalyRule("buffer-memory-too-small", _buffer_too_small, "buffer.memory={buffer.memory} is below 1 MiB"),
    AnomalyRule("max-poll-records-out-of-range", _max_poll_records,
                "max.poll.records={max.poll.records} is above 100000"),
    AnomalyRule("fetch-size-out-of-range", _fetch_size,
                "fetch.max.bytes={fetch.max.bytes} or max.partition.fetch.bytes={max.partition.fetch.bytes} is "
                "above 1 GiB"),
    AnomalyRule("exactly-once-single-replica", _eos_single_replica,
                "processing.guarantee={processing.guarantee} with replication.factor=1"),
    AnomalyRule("fetch-wait-not-below-request-timeout", _fetch_wait,
                "fetch.max.wait.ms={fetch.max.wait.ms} is not below request.timeout.ms={request.timeout.ms}"),
    AnomalyRule("consumer-protocol-ignores-classic-keys", _consumer_protocol,
                "group.protocol=consumer ignores the classic-protocol keys set explicitly"),
)


ENUMS: Final = {"group.protocol": ("classic", "consumer"),
                "processing.guarantee": ("at_least_once", "exactly_once", "exactly_once_beta", "exactly_once_v2")}
SHOWN_SET: Final = "set"  # how a finding shows a free-text value
SHOWN_ACKS_ALL: Final = "all"  # how a finding shows acks -1
EXACT_INTEGERS: Final = 2**53  # above it a float is not the integer that was sent (Long.MAX_VALUE): shown as a float


def _shown(value: Any, key: str) -> Any:
    """A value as findings show it: numbers, booleans and known enum words only.

    Free-text keys (``transactional.id``, ``partition.assignment.strategy``) show as
    ``"set"``: their text could hold anything, and the rules only need to know they are set.
    """
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if key in STRING_KEYS:
        text = str(value).strip().lower()
        return text if text in ENUMS.get(key, ()) else SHOWN_SET
    if isinstance(value, float) and value.is_integer() and abs(value) <= EXACT_INTEGERS:
        value = int(value)
    if key == "acks" and value == -1:
        return SHOWN_ACKS_ALL
    return value


PLACEHOLDER: Final = re.compile(r"\{([a-z.]+)\}")


def _text(value: Any) -> str:
    return "true" if value is True else "false" if value is False else str(value)


def _fill(template: str, shown: dict[str, Any]) -> str:
    def one(match: re.Match[str]) -> str:
        return _text(shown.get(match.group(1)))

    return PLACEHOLDER.sub(one, template)


def _defaults_note(template: str, keys: list[str], shown: dict[str, Any], eff: Effective, row: int) -> str:
    """``; <key>=<value> is the default of the client's release`` for the values the user did not set."""
    named = set(PLACEHOLDER.findall(template)) | {k for k in keys if f"{k}=" in template}
    unset = [k for k in keys if k in named and not bool(eff.explicit.at[row, k]) and shown.get(k) is not None]
    if not unset:
        return ""
    values = ", ".join(f"{k}={_text(shown[k])}" for k in unset)
    return f"; {values} {'is' if len(unset) == 1 else 'are'} the default of the client's release"


def evaluate(eff: Effective) -> pd.DataFrame:
    """Findings of every stateless anomaly rule: columns row, rule, keys, message, evidence."""
    rows: list[dict[str, Any]] = []
    for rule in STATELESS_ANOMALIES:
        hits = np.flatnonzero(rule.predicate(eff).to_numpy(dtype=bool))
        for row in hits:
            keys = [k for k in rule.keys if k in ("enable.idempotence", "group.protocol") or
                    rule.id != "consumer-protocol-ignores-classic-keys" or bool(eff.explicit.at[row, k])]
            shown = {k: _shown(eff.values.at[row, k], k) for k in keys}
            defaulted = sorted(k for k in keys if not bool(eff.sent.at[row, k]))
            text = _fill(rule.message, shown) + _defaults_note(rule.message, keys, shown, eff, int(row))
            rows.append({"row": int(row), "rule": rule.id, "keys": tuple(sorted(keys)), "message": text + ".",
                         "evidence": {"values": shown, "defaulted": defaulted}})
    return raw_frame(rows)

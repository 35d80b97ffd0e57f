"""Stateless anomaly rules: each catalog id with its vectorized predicate and message, and ``evaluate``.

The predicates are boolean masks over :class:`udfs.rules.effective.Effective` (pandas
columns, no loop per push): producers' in ``udfs.rules.producer_checks``, consumers',
Streams' and every client's in ``udfs.rules.client_checks``. A finding shows numbers,
booleans and known enum words only, and says which of its values are the default of
the client's release.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd

from udfs.rules import client_checks as c
from udfs.rules import producer_checks as p
from udfs.rules.catalog import rule as catalog_rule
from udfs.rules.effective import STRING_KEYS, Effective
from udfs.rules.findings import raw_frame

__all__ = ["ENUMS", "PLACEHOLDER", "SHOWN_ACKS_ALL", "SHOWN_SET", "STATELESS_ANOMALIES", "AnomalyRule", "evaluate"]


@dataclass(frozen=True)
class AnomalyRule:
    """A rule id, its predicate over the batch and its message; the keys its finding names are the catalog's."""

    id: str
    predicate: Callable[[Effective], pd.Series]
    message: str

    @property
    def keys(self) -> tuple[str, ...]:
        return catalog_rule(self.id).keys


STATELESS_ANOMALIES: tuple[AnomalyRule, ...] = (
    AnomalyRule("idempotence-acks", p.idem_acks,
                "enable.idempotence=true with acks={acks}: idempotence needs acks=all"),
    AnomalyRule("idempotence-max-in-flight", p.idem_inflight,
                "enable.idempotence=true with max.in.flight.requests.per.connection="
                "{max.in.flight.requests.per.connection}: idempotence needs at most 5"),
    AnomalyRule("idempotence-retries", p.idem_retries,
                "enable.idempotence=true with retries=0: idempotence needs retries > 0"),
    AnomalyRule("idempotence-implicitly-disabled", p.idem_implicit,
                "default idempotence is silently disabled by acks={acks}, max.in.flight.requests.per.connection="
                "{max.in.flight.requests.per.connection}, retries={retries}"),
    AnomalyRule("transactional-without-idempotence", p.txn_no_idem,
                "a transactional.id is set with enable.idempotence=false"),
    AnomalyRule("batching-disabled", p.batching_disabled, "batch.size=0 disables batching"),
    AnomalyRule("acks-all-retries-zero", p.acks_all_retries_zero,
                "acks=all with retries=0: one transient error fails the write"),
    AnomalyRule("retries-limited", p.retries_limited,
                "retries={retries} runs out before delivery.timeout.ms={delivery.timeout.ms}"),
    AnomalyRule("request-timeout-below-replica-lag", p.request_timeout_short,
                "acks=all with request.timeout.ms={request.timeout.ms}: below 10000, the least a follower may lag "
                "before it leaves the ISR"),
    AnomalyRule("socket-timeout-below-request-timeout", p.socket_timeout_below_request,
                "socket.timeout.ms={socket.timeout.ms} is below request.timeout.ms={request.timeout.ms}: the client "
                "gives a produce request up before the broker's ack timeout"),
    AnomalyRule("transactional-id-random", p.transactional_id_random,
                "transactional.id holds a UUID: a new transactional id every start, which fences no earlier instance"),
    AnomalyRule("batch-size-above-request-size", p.batch_above_request_size,
                "batch.size={batch.size} is above the request size cap max.request.size={max.request.size}"),
    AnomalyRule("idempotence-off-reordering", p.idem_off_reordering,
                "acks=all with enable.idempotence=false, retries={retries} and max.in.flight.requests.per.connection="
                "{max.in.flight.requests.per.connection}: a retried batch can be duplicated or reordered"),
    AnomalyRule("acks-zero", p.acks_zero, "acks=0: failed writes go unnoticed and retries do not apply"),
    AnomalyRule("acks-leader-only", p.acks_leader_only,
                "acks=1 where the client's default is all: a write the leader acknowledged is lost if it fails "
                "before a follower copies it"),
    AnomalyRule("bootstrap-servers-malformed", c.bootstrap_malformed,
                "bootstrap.servers has an entry with a URL scheme or an empty entry"),
    AnomalyRule("bootstrap-public-address", c.bootstrap_public,
                "bootstrap.servers names a broker by a public IP address: check that the connection uses TLS"),
    AnomalyRule("delivery-timeout-too-short", p.delivery_short,
                "delivery.timeout.ms={delivery.timeout.ms} is below linger.ms={linger.ms} + "
                "request.timeout.ms={request.timeout.ms}, or below 9000 (a broker failover)"),
    AnomalyRule("buffer-below-batch", p.buffer_below_batch,
                "buffer.memory={buffer.memory} is below batch.size={batch.size}"),
    AnomalyRule("reconnect-backoff-inverted", c.reconnect_inverted,
                "reconnect.backoff.max.ms={reconnect.backoff.max.ms} is below "
                "reconnect.backoff.ms={reconnect.backoff.ms}"),
    AnomalyRule("retry-backoff-inverted", c.retry_inverted,
                "retry.backoff.max.ms={retry.backoff.max.ms} is below retry.backoff.ms={retry.backoff.ms}"),
    AnomalyRule("socket-setup-timeout-inverted", c.socket_setup_inverted,
                "socket.connection.setup.timeout.max.ms={socket.connection.setup.timeout.max.ms} is below "
                "socket.connection.setup.timeout.ms={socket.connection.setup.timeout.ms}"),
    AnomalyRule("heartbeat-not-below-session", c.hb_session,
                "heartbeat.interval.ms={heartbeat.interval.ms} is not below session.timeout.ms={session.timeout.ms}"),
    AnomalyRule("heartbeat-above-third", c.hb_third,
                "heartbeat.interval.ms={heartbeat.interval.ms} is above a third of "
                "session.timeout.ms={session.timeout.ms}"),
    AnomalyRule("session-timeout-out-of-bounds", c.session_bounds,
                "session.timeout.ms={session.timeout.ms} is outside the broker's default bounds 6000..1800000"),
    AnomalyRule("max-block-too-short", p.max_block_short,
                "max.block.ms={max.block.ms} is below 9000: send() gives up before a broker failover is over"),
    AnomalyRule("max-block-unbounded", p.max_block_unbounded, "max.block.ms={max.block.ms} is a day or more"),
    AnomalyRule("delivery-timeout-unbounded", p.delivery_unbounded,
                "delivery.timeout.ms={delivery.timeout.ms} is a day or more, or infinite (librdkafka's 0)"),
    AnomalyRule("buffer-memory-too-small", p.buffer_too_small, "buffer.memory={buffer.memory} is below 1 MiB"),
    AnomalyRule("max-poll-records-out-of-range", c.max_poll_records,
                "max.poll.records={max.poll.records} is above 100000"),
    AnomalyRule("fetch-size-out-of-range", c.fetch_size,
                "fetch.max.bytes={fetch.max.bytes} or max.partition.fetch.bytes={max.partition.fetch.bytes} is "
                "above 1 GiB"),
    AnomalyRule("queued-min-messages-tiny", c.queued_min_tiny,
                "queued.min.messages={queued.min.messages} is below 1000 (default 100000): the fetcher pauses after "
                "nearly every response"),
    AnomalyRule("exactly-once-single-replica", c.eos_single_replica,
                "processing.guarantee={processing.guarantee} with replication.factor=1"),
    AnomalyRule("fetch-wait-not-below-request-timeout", c.fetch_wait,
                "fetch.max.wait.ms={fetch.max.wait.ms} is not below request.timeout.ms={request.timeout.ms}"),
    AnomalyRule("consumer-protocol-ignores-classic-keys", c.consumer_protocol,
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


def _named(rule: AnomalyRule) -> frozenset[str]:
    """The keys ``rule``'s message shows a value of."""
    return frozenset(PLACEHOLDER.findall(rule.message)) | {k for k in rule.keys if f"{k}=" in rule.message}


def _message(rule: AnomalyRule, shown: dict[str, Any], unset: list[str]) -> str:
    """The finding's text, ending ``; <key>=<value> is the default of the client's release`` for values the user
    did not set."""
    text = _fill(rule.message, shown)
    if unset:
        values = ", ".join(f"{k}={_text(shown[k])}" for k in unset)
        text += f"; {values} {'is' if len(unset) == 1 else 'are'} the default of the client's release"
    return text + "."


def _hits(rule: AnomalyRule, eff: Effective) -> Iterator[tuple[int, tuple[str, ...], dict[str, Any], list[str], str]]:
    """Per push ``rule`` flags: its row, the keys its finding names, their shown values, which were not sent, and
    the message. The batch's columns are read once per rule; a message is built once per distinct finding text."""
    hits = np.flatnonzero(rule.predicate(eff).to_numpy(dtype=bool))
    if not len(hits):
        return
    every = list(rule.keys)
    values = eff.values[every].to_numpy(dtype=object)[hits]
    sent = eff.sent[every].to_numpy(dtype=bool)[hits]
    explicit = eff.explicit[every].to_numpy(dtype=bool)[hits]
    named = _named(rule)
    only_explicit = rule.id == "consumer-protocol-ignores-classic-keys"
    messages: dict[tuple[Any, ...], str] = {}
    for i, row in enumerate(hits.tolist()):
        picked = [j for j, k in enumerate(every) if not only_explicit or k in ("enable.idempotence", "group.protocol")
                  or explicit[i, j]]
        keys = tuple(every[j] for j in picked)
        shown = {every[j]: _shown(values[i, j], every[j]) for j in picked}
        defaulted = sorted(every[j] for j in picked if not sent[i, j])
        unset = [every[j] for j in picked if every[j] in named and not explicit[i, j] and shown[every[j]] is not None]
        cached = (keys, tuple((type(v), v) for v in shown.values()), tuple(unset))
        text = messages.get(cached)
        if text is None:
            text = messages[cached] = _message(rule, shown, unset)
        yield row, keys, shown, defaulted, text


def evaluate(eff: Effective) -> pd.DataFrame:
    """Findings of every stateless anomaly rule: columns row, rule, keys, message, evidence."""
    rows = [{"row": row, "rule": rule.id, "keys": tuple(sorted(keys)), "message": text,
             "evidence": {"values": shown, "defaulted": defaulted}}
            for rule in STATELESS_ANOMALIES for row, keys, shown, defaulted, text in _hits(rule, eff)]
    return raw_frame(rows)

"""Each push's effective value of the keys the anomaly rules read, judged like the client judges.

A key the client sent keeps its value; a key it did not send takes the documented
default of its profile (family, version and role); a redacted value stays unknown.
Keys are read under their Java names through the profile's equivalents (sarama's
``Producer.RequiredAcks`` is ``acks``); a family that writes durations as Go text
has its ``*.ms`` keys read in milliseconds (``9s`` is 9000, ``udfs.rules.durations``),
and the acks constants of sarama and franz-go read as their numbers.
The result is a wide, typed pandas frame (one row per push, one column per rule
key) plus two masks: ``sent`` (the push carried the key) and ``explicit`` (sent with
``is_default`` false, i.e. the user set it). Built with numpy scatter and one fill
per profile, never a loop per entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from udfs.rules.batch import PushBatch
from udfs.rules.durations import go_durations_ms
from udfs.rules.identity import CONNECT_PRODUCER, STREAMS_PRODUCER
from udfs.rules.keysets import GO_DURATIONS, STREAMS

__all__ = ["ACKS_DECORATION", "ACKS_WORDS", "BOOL_KEYS", "BOOL_WORDS", "JAVA_INT_MAX", "JAVA_LONG_MAX", "MS_COLUMNS",
           "NO_PROFILE", "NUMBER", "NUMERIC_KEYS", "RULE_KEYS", "STRING_KEYS", "YIELDING_IDEMPOTENCE", "Effective",
           "effective", "flag"]

NUMERIC_KEYS: Final = (
    "acks", "max.in.flight.requests.per.connection", "retries", "delivery.timeout.ms", "linger.ms",
    "request.timeout.ms", "buffer.memory", "batch.size", "reconnect.backoff.ms", "reconnect.backoff.max.ms",
    "retry.backoff.ms", "retry.backoff.max.ms", "socket.connection.setup.timeout.ms",
    "socket.connection.setup.timeout.max.ms", "heartbeat.interval.ms", "session.timeout.ms", "fetch.max.wait.ms",
    "max.poll.records", "fetch.max.bytes", "max.partition.fetch.bytes", "replication.factor", "max.block.ms",
    "max.request.size", "socket.timeout.ms", "queued.min.messages",
)
BOOL_KEYS: Final = ("enable.idempotence",)
STRING_KEYS: Final = ("transactional.id", "group.protocol", "partition.assignment.strategy", "group.id",
                      "bootstrap.servers", "processing.guarantee")
RULE_KEYS: Final = NUMERIC_KEYS + BOOL_KEYS + STRING_KEYS
JAVA_INT_MAX: Final = 2**31 - 1  # Integer.MAX_VALUE and Long.MAX_VALUE: the Java clients' "no bound"
JAVA_LONG_MAX: Final = 2**63 - 1
YIELDING_IDEMPOTENCE: Final = "default-idempotence-yields"  # the behaviour's name in defaults.json
NO_PROFILE: Final = "none"  # role and judge of a push without a profile
BOOL_WORDS: Final = {"true": True, "false": False}  # a boolean key's text, stripped and lower-cased

@dataclass(frozen=True)
class Effective:
    """Typed effective values per push and rule key, with what was sent and what was set explicitly."""

    values: pd.DataFrame     # numeric keys float, bool keys object (True/False/None), strings object
    sent: pd.DataFrame       # bool
    explicit: pd.DataFrame   # bool
    role: pd.Series          # profile role per push, "none" without a profile
    judge: pd.Series         # "java", "librdkafka" or "none" per push
    yields: pd.Series        # bool: default idempotence gives way to conflicting settings at this release
    connect: pd.Series       # bool: a producer Kafka Connect configures itself (its client id or overrides say so)
    streams: pd.Series       # bool: a producer Kafka Streams configures itself (its client id says so)

    def value(self, key: str) -> pd.Series:
        return self.values[key]

    @property
    def producers(self) -> pd.Series:
        """Pushes a producer's rules apply to (an unknown role counts for both)."""
        return ~self.role.isin(["consumer", "admin"])

    @property
    def consumers(self) -> pd.Series:
        return ~self.role.isin(["producer", "admin"])

    def set_by_user(self, key: str, bad: pd.Series) -> pd.Series:
        """``bad`` where the user set ``key``: a release's own default is that release's behaviour, not a choice."""
        return flag(bad) & self.explicit[key]


def _connect_overrides(typed: pd.DataFrame) -> pd.Series:
    """The overrides Kafka Connect's Worker gives every task producer, all at once (Worker.java, every release:
    request.timeout.ms Integer.MAX_VALUE, max.block.ms Long.MAX_VALUE, acks all, one request in flight): a task
    producer of a release whose client ids do not name it (before 2.3, KIP-411)."""
    return (flag(typed["request.timeout.ms"] == JAVA_INT_MAX) & flag(typed["max.block.ms"] == JAVA_LONG_MAX)
            & flag(typed["acks"] == -1) & flag(typed["max.in.flight.requests.per.connection"] == 1))


def flag(mask: pd.Series) -> pd.Series:
    """A comparison's result as a plain mask: an unknown value (NaN, None) is not a finding."""
    return mask.fillna(False).astype(bool)


_COLUMN: Final = {k: i for i, k in enumerate(RULE_KEYS)}


def _rule_key_columns(batch: PushBatch) -> np.ndarray:
    """Per entry: the column of the rule key it carries under its push's profile, or -1 (Arrow lookups)."""
    column = np.full(len(batch.entry_row), -1, dtype=np.int64)

    def assign(idx: np.ndarray, mapping: dict[str, int]) -> None:
        if not len(idx) or not mapping:
            return
        found = pc.index_in(batch.keys.take(pa.array(idx)), value_set=pa.array(list(mapping), pa.string()))
        hit = pc.is_valid(found).to_numpy(zero_copy_only=False)
        column[idx[hit]] = np.array(list(mapping.values()), dtype=np.int64)[
            found.filter(pa.array(hit)).to_numpy(zero_copy_only=False)]

    entries = batch.profile_codes
    profiled = np.zeros(len(column), dtype=bool)
    for pid, prof in batch.profiles.items():
        mine = entries.get(pid, np.zeros(0, dtype=np.int64))
        profiled[mine] = True
        assign(mine, {src: _COLUMN[rk] for rk in RULE_KEYS for src in prof.sources(rk)})
    assign(np.flatnonzero(~profiled), dict(_COLUMN))  # no profile: key names as they are
    return column


NUMBER: Final = r"^-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$"
# acks words: Java's "all"; sarama's RequiredAcks constants; franz-go's Acks constructors (kgo.NoAck() ...).
ACKS_WORDS: Final = {"all": "-1", "noresponse": "0", "waitforlocal": "1", "waitforall": "-1", "noack": "0",
                      "leaderack": "1", "allisracks": "-1"}
ACKS_DECORATION: Final = r"^(?:sarama|kgo)\.|\(\)$"
MS_COLUMNS: Final = np.array([i for i, k in enumerate(NUMERIC_KEYS) if k.endswith(".ms")])


def _floats(text: pa.Array) -> np.ndarray:
    """Strings to floats, NaN where not a number."""
    numeric = pc.fill_null(pc.match_substring_regex(text, NUMBER), False)
    values = pc.cast(pc.if_else(numeric, text, pa.scalar(None, pa.string())), pa.float64())
    return values.to_numpy(zero_copy_only=False).astype(float)


def _normalised(cells: np.ndarray) -> pa.Array:
    return pc.utf8_lower(pc.utf8_trim_whitespace(pa.array(cells, pa.string())))


def _acks(cells: np.ndarray) -> np.ndarray:
    """The acks column: ``all`` and the Go clients' acks constants read as numbers."""
    text = _normalised(cells)
    words = pc.replace_substring_regex(text, pattern=ACKS_DECORATION, replacement="")
    vocabulary = pa.array(list(ACKS_WORDS))
    named = pc.fill_null(pc.is_in(words, value_set=vocabulary), False)
    text = pc.if_else(named, pc.take(pa.array(list(ACKS_WORDS.values())), pc.index_in(words, value_set=vocabulary)),
                      text)
    return _floats(text)


def _numbers(block: np.ndarray) -> np.ndarray:
    """``NUMERIC_KEYS`` columns of object strings (n x k) to floats, NaN where not a number; the acks column
    reads ``all`` and the Go clients' acks constants as numbers. Arrow-vectorized."""
    values = _floats(_normalised(block.ravel())).reshape(block.shape)
    acks = _COLUMN["acks"]
    if acks < block.shape[1]:
        values[:, acks] = _acks(block[:, acks])
    return values


def _go_durations(numeric: np.ndarray, wide: np.ndarray, batch: PushBatch) -> None:
    """In place: the ``*.ms`` columns of pushes whose family writes Go durations, read as milliseconds."""
    for pid, prof in batch.profiles.items():
        mine = np.flatnonzero(batch.profile_ids == pid)
        if prof.durations == GO_DURATIONS and len(mine):
            cells = np.ix_(mine, MS_COLUMNS)
            numeric[cells] = go_durations_ms(wide[cells])


def effective(batch: PushBatch) -> Effective:
    """The effective rule-key values of every push in ``batch``."""
    n, k = batch.n, len(RULE_KEYS)
    wide = np.full((n, k), None, dtype=object)
    sent = np.zeros((n, k), dtype=bool)
    explicit = np.zeros((n, k), dtype=bool)
    column = _rule_key_columns(batch)
    use = np.flatnonzero(column >= 0)  # entry order: a later duplicate key overwrites an earlier one
    rows, cols = batch.entry_row[use], column[use]
    values = batch.values.take(pa.array(use)).to_numpy(zero_copy_only=False)
    known = ~batch.redacted[use] & pd.notna(values)
    wide[rows, cols] = np.where(known, values, None)
    sent[rows, cols] = True
    explicit[rows, cols] = ~batch.is_default[use]
    for pid, prof in batch.profiles.items():
        defaults = np.array([prof.default(rk) for rk in RULE_KEYS], dtype=object)
        mine = np.flatnonzero(batch.profile_ids == pid)
        if len(mine):
            # A Streams client reports its StreamsConfig's defaults, but hands its producer and consumers only
            # what the user set (StreamsConfig.getProducerConfigs reads originals()): a key at its reported
            # default takes the profile's default, the embedded clients'.
            kept = sent[mine] & explicit[mine] if prof.role == STREAMS else sent[mine]
            wide[mine] = np.where(kept, wide[mine], defaults[None, :])
    index = pd.RangeIndex(n)
    numeric = _numbers(wide[:, : len(NUMERIC_KEYS)])
    _go_durations(numeric, wide, batch)
    typed = pd.DataFrame(numeric, columns=list(NUMERIC_KEYS), index=index)
    for rule_key in BOOL_KEYS:
        text = pd.Series(wide[:, _COLUMN[rule_key]], dtype=object).astype("string").str.strip().str.lower()
        typed[rule_key] = text.map(BOOL_WORDS).astype(object)
    for rule_key in STRING_KEYS:
        typed[rule_key] = pd.Series(wide[:, _COLUMN[rule_key]], index=index, dtype=object)
    profile_ids = pd.Series(batch.profile_ids, index=index, dtype=object)
    role = profile_ids.map({pid: prof.role for pid, prof in batch.profiles.items()}).fillna(NO_PROFILE)
    judge = profile_ids.map({pid: prof.judge for pid, prof in batch.profiles.items()}).fillna(NO_PROFILE)
    yields = profile_ids.isin([pid for pid, prof in batch.profiles.items() if YIELDING_IDEMPOTENCE in prof.behaviours])
    client_ids = pa.array(batch.context["client_id"], pa.string(), from_pandas=True)

    def client_id_matches(pattern: str) -> pd.Series:
        return pd.Series(pc.fill_null(pc.match_substring_regex(client_ids, pattern), False)
                         .to_numpy(zero_copy_only=False), index=index)

    return Effective(values=typed, sent=pd.DataFrame(sent, columns=list(RULE_KEYS), index=index),
                     explicit=pd.DataFrame(explicit, columns=list(RULE_KEYS), index=index), role=role, judge=judge,
                     yields=yields, connect=client_id_matches(CONNECT_PRODUCER) | _connect_overrides(typed),
                     streams=client_id_matches(STREAMS_PRODUCER))

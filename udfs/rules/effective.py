"""Each push's effective value of the keys the anomaly rules read, judged like the client judges.

A key the client sent keeps its value; a key it did not send takes the documented
default of its profile (family, version and role); a redacted value stays unknown.
The result is a wide, typed pandas frame (one row per push, one column per rule
key) plus two masks: ``sent`` (the push carried the key) and ``explicit`` (sent with
``is_default`` false, i.e. the user set it). Built with one pivot and a fill per
profile, never a loop per entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd

from udfs.rules.batch import PushBatch

__all__ = ["BOOL_KEYS", "NUMERIC_KEYS", "RULE_KEYS", "STRING_KEYS", "Effective", "effective"]

NUMERIC_KEYS: Final = (
    "acks", "max.in.flight.requests.per.connection", "retries", "delivery.timeout.ms", "linger.ms",
    "request.timeout.ms", "buffer.memory", "batch.size", "reconnect.backoff.ms", "reconnect.backoff.max.ms",
    "retry.backoff.ms", "retry.backoff.max.ms", "socket.connection.setup.timeout.ms",
    "socket.connection.setup.timeout.max.ms", "heartbeat.interval.ms", "session.timeout.ms", "fetch.max.wait.ms",
)
BOOL_KEYS: Final = ("enable.idempotence",)
STRING_KEYS: Final = ("transactional.id", "group.protocol", "partition.assignment.strategy", "group.id")
RULE_KEYS: Final = NUMERIC_KEYS + BOOL_KEYS + STRING_KEYS

_REDACTED = "\x00redacted"


@dataclass(frozen=True)
class Effective:
    """Typed effective values per push and rule key, with what was sent and what was set explicitly."""

    values: pd.DataFrame     # numeric keys float, bool keys object (True/False/None), strings object
    sent: pd.DataFrame       # bool
    explicit: pd.DataFrame   # bool
    role: pd.Series          # profile role per push, "none" without a profile
    judge: pd.Series         # "java", "librdkafka" or "none" per push


def _long_frame(batch: PushBatch) -> pd.DataFrame:
    """Entries whose key carries a rule key under the push's profile, renamed to that rule key."""
    frame = pd.DataFrame({
        "row": batch.entry_row,
        "key": batch.keys.to_numpy(zero_copy_only=False),
        "value": batch.values.to_numpy(zero_copy_only=False),
        "explicit": ~batch.is_default,
        "redacted": batch.redacted,
        "profile": batch.entry_profile_ids(),
    })
    frame.loc[frame["redacted"] | frame["value"].isna(), "value"] = _REDACTED
    parts = []
    # Pushes without a profile: the key names are taken as they are.
    plain = frame[frame["profile"].isna() & frame["key"].isin(RULE_KEYS)].assign(rule_key=lambda f: f["key"])
    parts.append(plain)
    for pid, prof in batch.profiles.items():
        mapping = {src: rk for rk in RULE_KEYS for src in prof.sources(rk)}
        mine = frame[frame["profile"] == pid]
        mine = mine.assign(rule_key=mine["key"].map(mapping))
        parts.append(mine[mine["rule_key"].notna()])
    return pd.concat(parts, ignore_index=True)


def _parse_acks(col: pd.Series) -> pd.Series:
    text = col.astype("string").str.strip().str.lower()
    return pd.to_numeric(text.replace({"all": "-1"}), errors="coerce")


def _parse_bool(col: pd.Series) -> pd.Series:
    text = col.astype("string").str.strip().str.lower()
    return text.map({"true": True, "false": False}).astype(object)


def effective(batch: PushBatch) -> Effective:
    """The effective rule-key values of every push in ``batch``."""
    n = batch.n
    index = pd.RangeIndex(n)
    long = _long_frame(batch).drop_duplicates(["row", "rule_key"], keep="last")
    wide = long.pivot(index="row", columns="rule_key", values="value").reindex(
        index=index, columns=list(RULE_KEYS)).astype(object)
    explicit = long.pivot(index="row", columns="rule_key", values="explicit").reindex(
        index=index, columns=list(RULE_KEYS)).astype("boolean").fillna(False).astype(bool)
    sent = wide.notna()
    profile_ids = pd.Series(batch.profile_ids, index=index)
    for pid, prof in batch.profiles.items():
        rows = (profile_ids == pid).to_numpy()
        for rule_key in RULE_KEYS:
            default = prof.default(rule_key)
            if default is None:
                continue
            fill = rows & wide[rule_key].isna().to_numpy()
            if fill.any():
                wide.loc[fill, rule_key] = default
    wide = wide.replace(_REDACTED, np.nan)
    typed = pd.DataFrame(index=index)
    for rule_key in NUMERIC_KEYS:
        col = wide[rule_key]
        typed[rule_key] = _parse_acks(col) if rule_key == "acks" else pd.to_numeric(
            col.astype("string").str.strip(), errors="coerce").astype(float)
    for rule_key in BOOL_KEYS:
        typed[rule_key] = _parse_bool(wide[rule_key])
    for rule_key in STRING_KEYS:
        typed[rule_key] = wide[rule_key].astype(object)
    role = profile_ids.map({pid: prof.role for pid, prof in batch.profiles.items()}).fillna("none")
    judge = profile_ids.map({pid: prof.judge for pid, prof in batch.profiles.items()}).fillna("none")
    return Effective(values=typed, sent=sent, explicit=explicit & sent, role=role, judge=judge)


"""Consumer-group drift: members of one group.id disagreeing on assignment strategy or protocol.

State per group (keyed by the group id's fingerprint) is a :class:`GroupState`: each
member's (subject fingerprint) effective ``group.protocol``, canonical
``partition.assignment.strategy`` list and last push time. It merges by keeping
each member's latest observation, is bounded (members unseen for ``MEMBER_TTL_MS``
and the oldest beyond ``MAX_MEMBERS`` are dropped) and serializes to JSON for Spark
state; it never holds a raw client id or group id.

Effective values follow the client's defaults (Java: RangeAssignor then
CooperativeStickyAssignor; librdkafka: range,roundrobin; protocol classic), so a
member that sent nothing still counts. Strategies are compared by canonical name
(Java class names map to range/roundrobin/sticky/cooperative-sticky, a custom
assignor to ``custom:<fingerprint>``); only classic-protocol members are compared
on strategy, because the consumer protocol ignores it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from configwatch.secrets import SecretStr, fingerprint
from udfs.rules.batch import CONTEXT_COLUMNS, SUBJECT, PushBatch, redacted_marker
from udfs.rules.effective import Effective
from udfs.rules.secretscan import scan

__all__ = ["MAX_MEMBERS", "MEMBER_TTL_MS", "GroupState", "canonical_strategy", "drift", "drift_batch",
           "group_observations"]

MAX_MEMBERS = 5_000
MEMBER_TTL_MS = 7 * 24 * 3600 * 1000
_BUILTIN = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.StickyAssignor": "sticky",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
    "range": "range", "roundrobin": "roundrobin", "sticky": "sticky", "cooperative-sticky": "cooperative-sticky",
}
_COLUMNS = ["row", "rule", "keys", "message", "evidence"]


def canonical_strategy(value: str | None, key: SecretStr) -> str | None:
    """A strategy list as comparable text: built-in names, custom classes as fingerprints."""
    if value is None:
        return None
    names = [p.strip() for p in value.split(",") if p.strip()]
    return ",".join(_BUILTIN.get(n, f"custom:{fingerprint(n, key)}") for n in names)


@dataclass(frozen=True)
class GroupState:
    """Latest (protocol, strategy, time) per member of one consumer group."""

    members: Mapping[str, tuple[str, str | None, int]] = field(default_factory=dict)

    def merge(self, other: GroupState) -> GroupState:
        merged = dict(self.members)
        for member, obs in other.members.items():
            if member not in merged or obs[2] >= merged[member][2]:
                merged[member] = obs
        return GroupState(merged)

    def observe(self, member: str, protocol: str, strategy: str | None, at_ms: int) -> GroupState:
        return self.merge(GroupState({member: (protocol, strategy, at_ms)}))

    def bounded(self, now_ms: int) -> GroupState:
        live = {m: o for m, o in self.members.items() if now_ms - o[2] <= MEMBER_TTL_MS}
        if len(live) > MAX_MEMBERS:
            newest = sorted(live.items(), key=lambda kv: kv[1][2], reverse=True)[:MAX_MEMBERS]
            live = dict(newest)
        return GroupState(live)

    def to_json(self) -> str:
        return json.dumps({m: list(o) for m, o in sorted(self.members.items())}, separators=(",", ":"))

    @classmethod
    def from_json(cls, data: str | None) -> GroupState:
        if not data:
            return cls()
        return cls({m: (o[0], o[1], int(o[2])) for m, o in json.loads(data).items()})


def group_observations(batch: PushBatch, eff: Effective, key: SecretStr) -> pd.DataFrame:
    """One row per consumer push that names a group.id: group_fp, group label, protocol, strategy, context."""
    group_id = eff.values["group.id"]
    consumer = ~eff.role.isin(["producer", "admin"]) & group_id.notna() & (group_id.astype("string") != "")
    rows = np.flatnonzero(consumer.to_numpy(dtype=bool))
    columns = ["group_fp", "group", "protocol", "strategy", *CONTEXT_COLUMNS, SUBJECT]
    if len(rows) == 0:
        return pd.DataFrame(columns=columns)
    groups = group_id.iloc[rows].astype(str)
    secret = pd.notna(scan(pa.array(groups.tolist(), pa.string())).to_numpy(zero_copy_only=False))
    labels = groups.to_numpy(dtype=object).copy()
    labels[secret] = [redacted_marker(g, key) for g in labels[secret]]
    distinct = groups.drop_duplicates()
    prints = {g: fingerprint(g, key) for g in distinct}
    protocol = eff.values["group.protocol"].iloc[rows].astype("string").str.strip().str.lower().fillna("classic")
    strategies = eff.values["partition.assignment.strategy"].iloc[rows]
    canon = {s: canonical_strategy(s, key) for s in strategies.dropna().unique()}
    out = pd.DataFrame({
        "group_fp": groups.map(prints).to_numpy(),
        "group": labels,
        "protocol": protocol.to_numpy(dtype=object),
        "strategy": strategies.map(canon).to_numpy(dtype=object),
    })
    ctx = batch.context[[*CONTEXT_COLUMNS, SUBJECT]].iloc[rows].reset_index(drop=True)
    return pd.concat([out, ctx], axis=1)[columns]


def _counts(values: list[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[str(v)] = out.get(str(v), 0) + 1
    return dict(sorted(out.items()))


_Obs = tuple[int, str, str, "str | None", int]  # row, member, protocol, strategy, time


def _drift(obs: list[_Obs], label: str, prior: GroupState) -> tuple[list[dict[str, Any]], GroupState]:
    """The drift findings of one group's observations (plain lists) and its new state."""
    seen = {member: (protocol, strategy, ts) for _, member, protocol, strategy, ts in sorted(obs, key=lambda o: o[4])}
    state = prior.merge(GroupState(seen))
    state = state.bounded(max((o[2] for o in state.members.values()), default=0))
    members = list(state.members.values())
    protocols = _counts([m[0] for m in members])
    classic = [m[1] for m in members if m[0] == "classic" and m[1] is not None]
    strategies = _counts(classic)
    common = sorted(set.intersection(*(set(s.split(",")) for s in classic))) if classic else []
    out: list[dict[str, Any]] = []
    for row, _, protocol, strategy, _ in obs:
        if len(protocols) > 1:
            out.append({"row": row, "rule": "group-protocol-drift", "keys": ("group.id", "group.protocol"),
                        "message": f"members of consumer group {label} disagree on group.protocol "
                                   f"({', '.join(f'{k}: {v}' for k, v in protocols.items())}); this member uses "
                                   f"{protocol}.",
                        "evidence": {"group": label, "protocols": protocols, "member_protocol": protocol}})
        if protocol == "classic" and strategy is not None and len(strategies) > 1:
            out.append({"row": row, "rule": "group-assignment-drift",
                        "keys": ("group.id", "partition.assignment.strategy"),
                        "message": f"members of consumer group {label} use {len(strategies)} different "
                                   f"partition.assignment.strategy lists; "
                                   + (f"common strategies: {', '.join(common)}." if common else
                                      "no strategy is common to all, so joins fail."),
                        "evidence": {"group": label, "strategies": strategies, "member_strategy": strategy,
                                     "common": common}})
    return out, state


def _as_lists(observations: pd.DataFrame) -> tuple[list[str], list[str], list[_Obs]]:
    ts = pd.to_numeric(observations["timestamp_ms"], errors="coerce").fillna(0).astype("int64").tolist()
    strategies = [None if pd.isna(s) else str(s) for s in observations["strategy"].tolist()]
    obs = list(zip(observations.index.tolist(), observations[SUBJECT].astype(str).tolist(),
                   observations["protocol"].astype(str).tolist(), strategies, ts, strict=True))
    return observations["group_fp"].astype(str).tolist(), observations["group"].astype(str).tolist(), obs


def drift(observations: pd.DataFrame, prior: GroupState) -> tuple[pd.DataFrame, GroupState]:
    """Raw drift findings for one group's observations (``row`` indexes them) and the new state."""
    _, labels, obs = _as_lists(observations)
    out, state = _drift(obs, labels[0] if labels else "", prior)
    return pd.DataFrame(out, columns=_COLUMNS), state


def drift_batch(observations: pd.DataFrame, states: Mapping[str, GroupState]
                ) -> tuple[pd.DataFrame, dict[str, GroupState]]:
    """Every group of a batch against ``states`` (no Spark): raw findings and the updated states."""
    new_states = dict(states)
    observations = observations.reset_index(drop=True)
    groups, labels, obs = _as_lists(observations)
    by_group: dict[str, list[_Obs]] = {}
    label_of: dict[str, str] = {}
    for group_fp, label, one in zip(groups, labels, obs, strict=True):
        by_group.setdefault(group_fp, []).append(one)
        label_of[group_fp] = label
    found: list[dict[str, Any]] = []
    for group_fp in sorted(by_group):
        out, new_states[group_fp] = _drift(by_group[group_fp], label_of[group_fp],
                                           states.get(group_fp, GroupState()))
        found += out
    return pd.DataFrame(found, columns=_COLUMNS), new_states

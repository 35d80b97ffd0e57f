"""Consumer-group drift: members of one group.id that cannot agree, one finding per group.

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

Compatibility follows the broker. Classic JoinGroup picks an assignor every member
lists (GroupMetadata.selectProtocol: candidates all members support, then a vote
of first preferences); a member sharing none is refused with
INCONSISTENT_GROUP_PROTOCOL. So lists with no common assignor are
``group-assignment-drift``, while lists that still share one (the KIP-429 rolling
move ``range`` -> ``cooperative-sticky,range`` -> ``cooperative-sticky``) are one
``group-assignment-transition`` (info). Members on ``classic`` and ``consumer``
are a KIP-848 online migration (``group-protocol-migration``, info; the broker
converts the group when ``group.consumer.migration.policy`` allows it); any other
mix of protocols has no online migration (``group-protocol-drift``).

Every finding is about the group: its subject is ``group:<group fingerprint>``, so
its ``alert_id`` depends only on rule and group, its identity fields are empty and
its evidence names members by subject fingerprint (at most ``EVIDENCE_MEMBERS``
per list). A batch emits a group's finding only when the finding is new or its
lists (or protocols) changed since the group's previous state: a member joining
on a list already seen adds nothing; a new list re-emits the same ``alert_id``
with updated evidence.
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
from udfs.rules.findings import raw_frame
from udfs.rules.secretscan import scan

__all__ = ["ASSIGNMENT_DRIFT", "ASSIGNMENT_KEYS", "ASSIGNMENT_TRANSITION", "BUILTIN", "COUNTED", "CUSTOM_PREFIX",
           "DEFAULT_PROTOCOL", "EVIDENCE_MEMBERS", "LISTS_SEP", "LIST_SEP", "MAX_MEMBERS", "MEMBER", "MEMBER_TTL_MS",
           "MESSAGES", "MIGRATABLE", "NAMES_SEP", "NOT_CONSUMERS", "PROTOCOL_DRIFT", "PROTOCOL_KEYS",
           "PROTOCOL_MIGRATION", "GroupFinding", "GroupState", "assess", "canonical_strategy", "drift", "drift_batch",
           "group_observations", "group_subject"]

MAX_MEMBERS = 5_000
MEMBER_TTL_MS = 7 * 24 * 3600 * 1000
EVIDENCE_MEMBERS = 20
MEMBER = "member_fp"  # observation column: the member's subject fingerprint (SUBJECT is the group's)
DEFAULT_PROTOCOL = "classic"  # a consumer's group.protocol when it sets none
NOT_CONSUMERS = ("producer", "admin")  # roles whose group.id names no membership
MIGRATABLE = frozenset({DEFAULT_PROTOCOL, "consumer"})  # the protocols KIP-848 migrates between online
LIST_SEP = ","  # between the assignors of a partition.assignment.strategy list
CUSTOM_PREFIX = "custom:"  # a custom assignor class: this and its fingerprint
BUILTIN = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.StickyAssignor": "sticky",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
    "range": "range", "roundrobin": "roundrobin", "sticky": "sticky", "cooperative-sticky": "cooperative-sticky",
}
ASSIGNMENT_DRIFT = "group-assignment-drift"
ASSIGNMENT_TRANSITION = "group-assignment-transition"
PROTOCOL_MIGRATION = "group-protocol-migration"
PROTOCOL_DRIFT = "group-protocol-drift"
ASSIGNMENT_KEYS = ("group.id", "partition.assignment.strategy")
PROTOCOL_KEYS = ("group.id", "group.protocol")
COUNTED = "{value}: {count}"  # a strategy list or protocol and how many members use it, in a message
LISTS_SEP = "; "  # between the COUNTED strategy lists of a message
NAMES_SEP = ", "  # between the COUNTED protocols and between the common assignors of a message
MESSAGES = {
    ASSIGNMENT_DRIFT: "members of consumer group {label} share no partition.assignment.strategy ({shown}); "
                      "JoinGroup needs an assignor every member supports, so members are refused with "
                      "INCONSISTENT_GROUP_PROTOCOL.",
    ASSIGNMENT_TRANSITION: "consumer group {label} is moving between partition.assignment.strategy lists ({shown}); "
                           "every member supports {common}, so the group keeps assigning with {selected} until the "
                           "move completes.",
    PROTOCOL_MIGRATION: "consumer group {label} has members on group.protocol classic and consumer ({shown}): "
                        "a KIP-848 online migration, which the broker carries out when "
                        "group.consumer.migration.policy allows it.",
    PROTOCOL_DRIFT: "members of consumer group {label} use group.protocol values that no online migration "
                    "connects ({shown}).",
}


def canonical_strategy(value: str | None, key: SecretStr) -> str | None:
    """A strategy list as comparable text: built-in names, custom classes as fingerprints."""
    if value is None:
        return None
    names = [p.strip() for p in value.split(LIST_SEP) if p.strip()]
    return LIST_SEP.join(BUILTIN.get(n, f"{CUSTOM_PREFIX}{fingerprint(n, key)}") for n in names)


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


def group_subject(group_fp: str) -> str:
    """The subject of a group-level finding (what its ``alert_id`` is keyed on)."""
    return f"group:{group_fp}"


def group_observations(batch: PushBatch, eff: Effective, key: SecretStr) -> pd.DataFrame:
    """One row per consumer push that names a group.id: group_fp, group label, protocol, strategy, member, context.

    ``SUBJECT`` is the group's (:func:`group_subject`), ``MEMBER`` the push's subject
    fingerprint; the identity fields are empty: the findings are about the group.
    """
    group_id = eff.values["group.id"]
    consumer = ~eff.role.isin(list(NOT_CONSUMERS)) & group_id.notna() & (group_id.astype("string") != "")
    rows = np.flatnonzero(consumer.to_numpy(dtype=bool))
    columns = ["group_fp", "group", "protocol", "strategy", MEMBER, *CONTEXT_COLUMNS, SUBJECT]
    if len(rows) == 0:
        return pd.DataFrame(columns=columns)
    groups = group_id.iloc[rows].astype(str)
    secret = pd.notna(scan(pa.array(groups.tolist(), pa.string())).to_numpy(zero_copy_only=False))
    labels = groups.to_numpy(dtype=object).copy()
    labels[secret] = [redacted_marker(g, key) for g in labels[secret]]
    distinct = groups.drop_duplicates()
    prints = {g: fingerprint(g, key) for g in distinct}
    protocol = eff.values["group.protocol"].iloc[rows].astype("string").str.strip().str.lower().fillna(DEFAULT_PROTOCOL)
    strategies = eff.values["partition.assignment.strategy"].iloc[rows]
    canon = {s: canonical_strategy(s, key) for s in strategies.dropna().unique()}
    group_fp = groups.map(prints).to_numpy(dtype=object)
    ctx = batch.context.iloc[rows].reset_index(drop=True)
    out = pd.DataFrame({
        "group_fp": group_fp,
        "group": labels,
        "protocol": protocol.to_numpy(dtype=object),
        "strategy": strategies.map(canon).to_numpy(dtype=object),
        MEMBER: ctx[SUBJECT].to_numpy(dtype=object),
        **{name: None for name in CONTEXT_COLUMNS if name != "timestamp_ms"},
        "timestamp_ms": ctx["timestamp_ms"].to_numpy(),
        SUBJECT: [group_subject(g) for g in group_fp],
    })
    return out[columns]


def _counts(values: list[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[str(v)] = out.get(str(v), 0) + 1
    return dict(sorted(out.items()))


def _listed(members: Mapping[str, str]) -> dict[str, list[str]]:
    """Member fingerprints per value, sorted, at most ``EVIDENCE_MEMBERS`` each."""
    out: dict[str, list[str]] = {}
    for member, value in sorted(members.items()):
        if len(out.setdefault(value, [])) < EVIDENCE_MEMBERS:
            out[value].append(member)
    return dict(sorted(out.items()))


def _selected(lists: list[str], common: set[str]) -> str:
    """The assignor JoinGroup would pick: most first preferences among the common ones (ties by name)."""
    votes = _counts([next(n for n in s.split(LIST_SEP) if n in common) for s in lists])
    return min(votes, key=lambda n: (-votes[n], n))


@dataclass(frozen=True)
class GroupFinding:
    """One group-level finding; ``signature`` is what must change for it to be emitted again."""

    rule: str
    keys: tuple[str, ...]
    message: str
    evidence: dict[str, Any]
    signature: tuple[str, ...]


def _assignment(state: GroupState, label: str) -> GroupFinding | None:
    classic = {m: o[1] for m, o in state.members.items() if o[0] == DEFAULT_PROTOCOL and o[1] is not None}
    strategies = _counts(list(classic.values()))
    if len(strategies) < 2:
        return None
    common = set.intersection(*(set(s.split(LIST_SEP)) for s in strategies))
    shown = LISTS_SEP.join(COUNTED.format(value=s, count=n) for s, n in strategies.items())
    evidence: dict[str, Any] = {"group": label, "strategies": strategies, "common": sorted(common),
                                "members": _listed(classic)}
    if not common:
        message = MESSAGES[ASSIGNMENT_DRIFT].format(label=label, shown=shown)
        return GroupFinding(ASSIGNMENT_DRIFT, ASSIGNMENT_KEYS, message, evidence, tuple(strategies))
    selected = _selected(list(classic.values()), common)
    evidence["selected"] = selected
    message = MESSAGES[ASSIGNMENT_TRANSITION].format(label=label, shown=shown, selected=selected,
                                                     common=NAMES_SEP.join(sorted(common)))
    return GroupFinding(ASSIGNMENT_TRANSITION, ASSIGNMENT_KEYS, message, evidence, tuple(strategies))


def _protocol(state: GroupState, label: str) -> GroupFinding | None:
    protocols = _counts([o[0] for o in state.members.values()])
    if len(protocols) < 2:
        return None
    shown = NAMES_SEP.join(COUNTED.format(value=p, count=n) for p, n in protocols.items())
    evidence = {"group": label, "protocols": protocols,
                "members": _listed({m: o[0] for m, o in state.members.items()})}
    rule_id = PROTOCOL_MIGRATION if set(protocols) <= MIGRATABLE else PROTOCOL_DRIFT
    return GroupFinding(rule_id, PROTOCOL_KEYS, MESSAGES[rule_id].format(label=label, shown=shown), evidence,
                        tuple(protocols))


def assess(state: GroupState, label: str) -> list[GroupFinding]:
    """The group-level findings that hold for ``state`` (at most one per rule)."""
    return [f for f in (_protocol(state, label), _assignment(state, label)) if f is not None]


_Obs = tuple[int, str, str, "str | None", int]  # row, member, protocol, strategy, time


def _drift(obs: list[_Obs], label: str, prior: GroupState) -> tuple[list[dict[str, Any]], GroupState]:
    """The group findings that are new or changed after this batch's observations, and the new state."""
    seen = {member: (protocol, strategy, ts) for _, member, protocol, strategy, ts in sorted(obs, key=lambda o: o[4])}
    state = prior.merge(GroupState(seen))
    state = state.bounded(max((o[2] for o in state.members.values()), default=0))
    if not obs:
        return [], state
    before = {f.rule: f.signature for f in assess(prior, label)}
    row = max(obs, key=lambda o: (o[4], o[0]))[0]  # the latest push stands for the batch
    out = [{"row": row, "rule": f.rule, "keys": f.keys, "message": f.message, "evidence": f.evidence}
           for f in assess(state, label) if before.get(f.rule) != f.signature]
    return out, state


def _as_lists(observations: pd.DataFrame) -> tuple[list[str], list[str], list[_Obs]]:
    ts = pd.to_numeric(observations["timestamp_ms"], errors="coerce").fillna(0).astype("int64").tolist()
    strategies = [None if pd.isna(s) else str(s) for s in observations["strategy"].tolist()]
    obs = list(zip(observations.index.tolist(), observations[MEMBER].astype(str).tolist(),
                   observations["protocol"].astype(str).tolist(), strategies, ts, strict=True))
    return observations["group_fp"].astype(str).tolist(), observations["group"].astype(str).tolist(), obs


def drift(observations: pd.DataFrame, prior: GroupState) -> tuple[pd.DataFrame, GroupState]:
    """Raw drift findings for one group's observations (``row`` indexes them) and the new state."""
    _, labels, obs = _as_lists(observations)
    out, state = _drift(obs, labels[0] if labels else "", prior)
    return raw_frame(out), state


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
    return raw_frame(found), new_states

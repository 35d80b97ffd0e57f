"""Run the labelled fleet through the detection code path and score the alerts against the labels.

``run`` feeds the fleet, in shuffled batches as a stream delivers it, to
``udfs.rules.detect.detect_with_state`` (the stateless and stateful rules the
job's UDF bodies run), either as the clients sent it (``raw``: redaction at the
edge turned off) or after the gateway's edge (``edge``: ``policy.redaction.redact``
and ``mask_identity``, the default deployment). In ``edge`` mode a leak in an entry
is expected as ``policy-redacted`` (the entry arrives without its value), and an
anomaly on a value the edge took out (credentials in ``bootstrap.servers``) is
allowed, not expected: no rule behind the edge can read it.

Scoring is per alert: one (subject, rule) pair, the subject a client instance or,
for group rules, the group. A fired pair is a true positive when the rule is
expected, a false positive when it is neither expected nor allowed; an expected
pair that did not fire is a false negative.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Final

import pyarrow as pa

from configwatch.records import ConfigEntry, Event
from configwatch.secrets import SecretStr
from policy.api import ClientConfigData
from policy.redaction import redact
from tests.eval.clients import Client
from tests.eval.fleet import Fleet
from udfs.rules.batch import CONFIGS_TYPE, CONTEXT_COLUMNS, redacted_marker
from udfs.rules.catalog import CATALOG
from udfs.rules.stateful import DetectionState, detect_with_state
from udfs.sensitivity import mask_identity

__all__ = ["KINDS", "MODES", "Example", "Report", "RuleScore", "run"]

KEY: Final = SecretStr("eval-deployment-key")
START_MS: Final = 1_790_000_000_000
MODES: Final = ("raw", "edge")
KINDS: Final = ("sensitive_leak", "anomaly")
BATCH: Final = 500
IDENTITY_RULE = "secret-in-identity"
REDACTED_RULE = "policy-redacted"
ENTRY_LEAK_RULES: Final = frozenset(r.id for r in CATALOG if r.kind == "sensitive_leak") - {IDENTITY_RULE,
                                                                                              REDACTED_RULE}
VALUE_KEYS: Final = {r.id: frozenset(r.keys) for r in CATALOG if r.kind == "anomaly"}  # what each anomaly reads


@dataclass(frozen=True)
class Example:
    """One false positive or negative, told without values."""

    subject: str
    family: str
    software: str
    scenario: str
    keys: tuple[str, ...]
    message: str


@dataclass
class RuleScore:
    """Counts of one rule over the fleet."""

    rule: str
    kind: str
    tp: int = 0
    fp: int = 0
    fn: int = 0
    allowed: int = 0
    alerts: int = 0
    false_positives: list[Example] = field(default_factory=list)
    false_negatives: list[Example] = field(default_factory=list)

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


@dataclass(frozen=True)
class Report:
    """The scores of one run."""

    mode: str
    instances: int
    groups: int
    rules: dict[str, RuleScore]
    alerts: int
    secrets_in_output: int
    labelled: Counter[str]
    by_family: dict[tuple[str, str], RuleScore]  # (family or "group", kind) -> counts

    def kind(self, kind: str) -> RuleScore:
        total = RuleScore(kind, kind)
        for s in self.rules.values():
            if s.kind == kind:
                total.tp, total.fp, total.fn = total.tp + s.tp, total.fp + s.fp, total.fn + s.fn
                total.allowed, total.alerts = total.allowed + s.allowed, total.alerts + s.alerts
        return total

    def per_thousand(self, kind: str | None = None) -> float:
        alerts = self.alerts if kind is None else self.kind(kind).alerts
        return 1000.0 * alerts / self.instances if self.instances else 0.0


def _edge_labels(rules: frozenset[str], redacted: frozenset[str] = frozenset()) -> frozenset[str]:
    """Labels as the job sees them behind the edge: an entry's leak arrives as a redacted entry, and a rule
    that reads the value of a key the edge redacted (``redacted``) cannot judge it."""
    moved = rules & ENTRY_LEAK_RULES
    blind = {r for r in rules if VALUE_KEYS.get(r, frozenset()) & redacted}
    return (rules - ENTRY_LEAK_RULES - blind) | ({REDACTED_RULE} if moved else frozenset())


def _row(client: Client, mode: str, ts: int) -> tuple[dict[str, Any], frozenset[str]]:
    """The push as the job reads it, and the keys whose values the edge took out (none in ``raw``)."""
    ctx = client.context
    data = ClientConfigData(client.configs, ts, None)
    if mode == "edge":
        event = mask_identity(redact(ctx, data, KEY).event, KEY)
    else:
        event = Event(event="config_push", timestamp_ms=ts, configs=tuple(
            ConfigEntry(c.key, c.value, c.type, c.is_default) for c in client.configs), **ctx.event_fields())
    row: dict[str, Any] = {name: getattr(event, name) for name in CONTEXT_COLUMNS}
    row["timestamp_ms"] = ts
    row["configs"] = [e.to_dict() | {"redacted": e.redacted} for e in event.configs or ()]
    return row, frozenset(e.key for e in event.configs or () if e.redacted)


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    columns: dict[str, pa.Array] = {
        name: pa.array([r[name] for r in rows], pa.int64() if name == "timestamp_ms" else pa.string())
        for name in CONTEXT_COLUMNS}
    columns["configs"] = pa.array([r["configs"] for r in rows], CONFIGS_TYPE)
    return pa.table(columns)


def _findings(fleet: Fleet, mode: str) -> tuple[list[dict[str, Any]], dict[str, frozenset[str]]]:
    """The findings over the fleet, and per instance the keys the edge redacted."""
    order = list(range(len(fleet.clients)))
    random.Random(fleet.seed).shuffle(order)
    state: DetectionState | None = None
    out: list[dict[str, Any]] = []
    redacted: dict[str, frozenset[str]] = {}
    for start in range(0, len(order), BATCH):
        rows = []
        for i in order[start:start + BATCH]:
            row, redacted[fleet.clients[i].instance_id] = _row(fleet.clients[i], mode, START_MS + i)
            rows.append(row)
        table, state = detect_with_state(_table(rows), KEY, START_MS + len(fleet.clients), state)
        out.extend(table.to_pylist())
    return out, redacted


def _example(subject: str, client: Client | None, scenario: str, keys: tuple[str, ...], message: str) -> Example:
    family = client.family if client else "group"
    software = f"{client.context.client_software_name}/{client.context.client_software_version}" if client else ""
    return Example(subject, family, software, scenario, keys, message)


def run(fleet: Fleet, mode: str = "raw", max_examples: int = 5) -> Report:
    """Detect over the fleet in ``mode`` and score every alert against the labels."""
    rows, redacted = _findings(fleet, mode)
    groups = {g.group_id: g for g in fleet.groups}
    group_of_label = {label: gid for gid in groups for label in (gid, redacted_marker(gid, KEY))}
    fired: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)  # subject -> rule -> a finding
    alert_ids: dict[str, set[str]] = defaultdict(set)
    secrets = [s for c in fleet.clients for s in c.secrets]
    leaked = 0
    for r in rows:
        text = json.dumps(r, default=str)
        leaked += sum(1 for s in secrets if s in text)
        if r["rule"].startswith("group-"):
            label = json.loads(r["evidence"]).get("group", "")
            subject = "group:" + group_of_label.get(label, label)
        else:
            subject = str(r["client_instance_id"])
        fired[subject].setdefault(r["rule"], r)
        alert_ids[r["rule"]].add(r["alert_id"])
    labels: dict[str, tuple[frozenset[str], frozenset[str], Client | None, str]] = {}
    for c in fleet.clients:
        expected, allowed = c.expected, c.allowed
        if mode == "edge":
            seen = _edge_labels(expected, redacted[c.instance_id])
            blind = expected - seen - ENTRY_LEAK_RULES  # expected, but on a value the edge took out
            expected, allowed = seen, (_edge_labels(allowed) | blind) - seen
        labels[c.instance_id] = (expected, allowed, c, c.scenario)
    for g in fleet.groups:
        labels["group:" + g.group_id] = (g.expected, g.allowed, None, g.scenario)
    scores = {r.id: RuleScore(r.id, r.kind) for r in CATALOG}
    by_family: dict[tuple[str, str], RuleScore] = {}
    labelled: Counter[str] = Counter()
    for subject in set(labels) | set(fired):
        expected, allowed, client, scenario = labels.get(subject, (frozenset(), frozenset(), None, "unknown"))
        got = fired.get(subject, {})
        labelled.update(expected)
        family = client.family if client else "group"
        for rule_id, finding in got.items():
            s = scores[rule_id]
            f = by_family.setdefault((family, s.kind), RuleScore(family, s.kind))
            if rule_id in expected:
                s.tp, f.tp = s.tp + 1, f.tp + 1
            elif rule_id in allowed:
                s.allowed, f.allowed = s.allowed + 1, f.allowed + 1
            else:
                s.fp, f.fp = s.fp + 1, f.fp + 1
                if len(s.false_positives) < max_examples:
                    s.false_positives.append(_example(subject, client, scenario, tuple(finding["keys"]),
                                                      str(finding["message"])))
        for rule_id in expected - set(got):
            s = scores[rule_id]
            s.fn += 1
            f = by_family.setdefault((family, s.kind), RuleScore(family, s.kind))
            f.fn += 1
            if len(s.false_negatives) < max_examples:
                s.false_negatives.append(_example(subject, client, scenario, (), "not raised"))
    for rule_id, ids in alert_ids.items():
        scores[rule_id].alerts = len(ids)
    return Report(mode, len(fleet.clients), len(fleet.groups), scores, sum(len(v) for v in alert_ids.values()),
                  leaked, labelled, by_family)

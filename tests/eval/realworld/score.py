"""Detection over the real-world set, scored against its hand labels.

Every exact-release configuration becomes one push (``tests.eval.realworld.to_push`` for a Java
client's printed block, ``tests.eval.realworld.rdkafka.to_push`` for a librdkafka application's
configuration) and the job's stateless detection (``udfs.rules.detect``) runs over all of them.
A finding is right when its keys meet a label of its own configuration; a label counts for
recall when the push shows one of its keys (a label on keys the KIP client withholds, ``ssl.*``
for one, no push can show). Every key in a Java block is one its release's ConfigDef defines (a
client prints no other), so every ``kip-sensitive-custom`` finding there is a false positive by
construction: they are also counted apart.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import pyarrow as pa

from configwatch.secrets import SecretStr
from tests.eval.realworld import Dump, Label, Push, instance_id, load, rdkafka, to_push
from tests.eval.realworld.rdkafka import RdkafkaConfig
from udfs.rules.batch import CONFIGS_TYPE, CONTEXT_COLUMNS
from udfs.rules.detect import detect
from udfs.sensitivity import RULE_CUSTOM

__all__ = ["RealWorldReport", "cases", "format_realworld", "score"]

KEY: Final = SecretStr("eval-realworld-key")
NOW_MS: Final = 1_790_000_000_000


@dataclass
class RealWorldReport:
    """What the rules found on the set, per rule and per label."""

    dumps: int = 0
    excluded: dict[str, str] = field(default_factory=dict)  # dump id -> why it is not scored
    tp: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # rule -> findings meeting a label
    fp: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    false_findings: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)  # (dump, rule, keys)
    found: list[tuple[str, Label]] = field(default_factory=list)
    missed: list[tuple[str, Label]] = field(default_factory=list)
    hidden: list[tuple[str, Label]] = field(default_factory=list)  # on keys no push shows
    # on keys the push carries with a run-time value the set does not record: neither found nor missed
    unknown: list[tuple[str, Label]] = field(default_factory=list)
    custom_keys: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (dump, keys) custom findings
    true_findings: list[tuple[str, str]] = field(default_factory=list)  # (dump, rule)
    group: dict[str, str] = field(default_factory=dict)  # dump id -> its client family and batch

    def precision(self, rule: str) -> float:
        return self.tp[rule] / (self.tp[rule] + self.fp[rule])

    @property
    def rules(self) -> list[str]:
        return sorted(set(self.tp) | set(self.fp))

    @property
    def recall(self) -> float | None:
        shown = len(self.found) + len(self.missed)
        return len(self.found) / shown if shown else None

    def by_group(self) -> list[tuple[str, int, int, int, int, int]]:
        """Per family and batch: configurations, labels a push shows, found, true findings, false findings."""
        rows = []
        for name in sorted(set(self.group.values())):
            ids = {d for d, g in self.group.items() if g == name}
            found = sum(d in ids for d, _ in self.found)
            rows.append((name, len(ids), found + sum(d in ids for d, _ in self.missed), found,
                         sum(d in ids for d, _ in self.true_findings),
                         sum(d in ids for d, _, _ in self.false_findings)))
        return rows


def _table(pushes: list[Push]) -> pa.Table:
    rows: dict[str, list[Any]] = {name: [] for name in CONTEXT_COLUMNS}
    for p in pushes:
        context = {"client_instance_id": instance_id(p.dump), "client_software_name": p.software_name,
                   "client_software_version": p.software_version, "client_id": p.client_id,
                   "connection_id": f"realworld-{p.dump.id}", "timestamp_ms": NOW_MS}
        for name in CONTEXT_COLUMNS:
            rows[name].append(context.get(name))
    columns = {name: pa.array(values, pa.int64() if name == "timestamp_ms" else pa.string())
               for name, values in rows.items()}
    columns["configs"] = pa.array([[{"redacted": None, "fingerprint": None} | e for e in p.entries]
                                   for p in pushes], CONFIGS_TYPE)
    return pa.table(columns)


def cases() -> list[Dump | RdkafkaConfig]:
    """The whole set: the Java clients' printed blocks, then the librdkafka applications' configurations."""
    return [*load(), *rdkafka.load()]


def _push(case: Dump | RdkafkaConfig) -> Push:
    return to_push(case) if isinstance(case, Dump) else rdkafka.to_push(case)


def score(chosen: Sequence[Dump | RdkafkaConfig] | None = None) -> RealWorldReport:
    """Detect over every exact-release configuration and score the findings against the labels."""
    report = RealWorldReport()
    pushes = []
    for case in chosen if chosen is not None else cases():
        if not case.exact_release:
            report.excluded[case.id] = f"release {case.release!r} is not one exact version" + (
                " from librdkafka 1.4 on" if isinstance(case, RdkafkaConfig) else "")
            continue
        if isinstance(case, RdkafkaConfig) and (unknown := rdkafka.rejected(case)):
            report.excluded[case.id] = (f"librdkafka {case.release} refuses {', '.join(unknown)}: the client is never "
                                        "created, so it never pushes")
            continue
        pushes.append(_push(case))
        family = "java" if isinstance(case, Dump) else "librdkafka"
        report.group[case.id] = f"{family}: {case.batch or 'development'}"
    report.dumps = len(pushes)
    by_instance = {instance_id(p.dump): p for p in pushes}
    met: set[tuple[str, int]] = set()
    for finding in detect(_table(pushes), KEY, NOW_MS).to_pylist():
        push = by_instance[finding["client_instance_id"]]
        keys = tuple(finding["keys"])
        if finding["rule"] == RULE_CUSTOM and isinstance(push.dump, Dump):
            report.custom_keys.append((push.dump.id, keys))
        hits = [i for i, label in enumerate(push.dump.labels) if push.pushed_as(label.keys) & push.pushed_as(keys)]
        if hits:
            report.tp[finding["rule"]] += 1
            report.true_findings.append((push.dump.id, finding["rule"]))
            met.update((push.dump.id, i) for i in hits)
        else:
            report.fp[finding["rule"]] += 1
            report.false_findings.append((push.dump.id, finding["rule"], keys))
    for push in pushes:
        for i, label in enumerate(push.dump.labels):
            shown = push.pushed_as(label.keys) & push.sent
            if not shown:
                report.hidden.append((push.dump.id, label))
            elif (push.dump.id, i) in met:
                report.found.append((push.dump.id, label))
            elif shown <= push.unknown:
                report.unknown.append((push.dump.id, label))
            else:
                report.missed.append((push.dump.id, label))
    return report


def format_realworld(report: RealWorldReport) -> str:
    """The report as markdown, as ``make eval`` prints it."""
    recall = "-" if report.recall is None else f"{report.recall:.3f}"
    out = [f"real-world set: {report.dumps} published client configurations scored "
           f"({len(report.excluded)} excluded), {len(report.found) + len(report.missed)} labelled misconfigurations "
           f"a push shows: recall {recall} ({len(report.found)} found); {len(report.hidden)} more on keys a KIP "
           f"client withholds, {len(report.unknown)} on run-time values the set does not record; custom-key "
           f"findings on keys the release defines: {len(report.custom_keys)}",
           "", "| rule | precision | TP | FP |", "|---|---|---|---|"]
    out += [f"| `{rule}` | {report.precision(rule):.3f} | {report.tp[rule]} | {report.fp[rule]} |"
            for rule in report.rules]
    out += ["", "| family: batch | configurations | labels a push shows | found | true findings | false findings |",
            "|---|---|---|---|---|---|"]
    out += [f"| {name} | {n} | {shown} | {found} | {tp} | {fp} |"
            for name, n, shown, found, tp, fp in report.by_group()]
    out.append("")
    for title, rows in (("missed", report.missed), ("hidden from pushes", report.hidden),
                        ("value not recorded", report.unknown)):
        out += [f"- {title}: `{dump}` {', '.join(label.keys)}: {label.problem}" for dump, label in rows]
    out += [f"- false: `{dump}` {rule} on {', '.join(keys)}" for dump, rule, keys in report.false_findings]
    out += [f"- excluded: `{dump}`: {why}" for dump, why in report.excluded.items()]
    return "\n".join(out)

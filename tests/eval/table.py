"""The evaluation's tables, as Markdown (what ``make eval`` prints and ``docs/detection.md`` shows)."""

from __future__ import annotations

from tests.eval.score import KINDS, Report, RuleScore

__all__ = ["format_errors", "format_families", "format_report"]


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _line(name: str, s: RuleScore, instances: int) -> str:
    per_k = 1000.0 * s.alerts / instances if instances else 0.0
    return (f"| {name} | {_f(s.precision)} | {_f(s.recall)} | {s.tp} | {s.fp} | {s.fn} | {s.allowed} | "
            f"{s.alerts} | {per_k:.1f} |")


def format_report(report: Report) -> str:
    """Per kind, then per rule: precision, recall, counts and alerts per 1,000 instances."""
    head = ["| | precision | recall | TP | FP | FN | allowed | alerts | per 1,000 |",
            "|---|---|---|---|---|---|---|---|---|"]
    out = [f"mode `{report.mode}`: {report.instances} client instances, {report.groups} labelled groups, "
           f"{report.alerts} alerts ({report.per_thousand():.1f} per 1,000 instances), "
           f"planted secrets found in findings: {report.secrets_in_output}", "", *head]
    out += [_line(f"**{kind}**", report.kind(kind), report.instances) for kind in KINDS]
    rows = sorted((s for s in report.rules.values() if s.tp or s.fp or s.fn or s.allowed or s.alerts),
                  key=lambda s: (s.kind, s.rule))
    out += [_line(f"`{s.rule}`", s, report.instances) for s in rows]
    return "\n".join(out)


def format_families(report: Report, instances: dict[str, int]) -> str:
    """Precision and recall per client family and kind (``instances``: instances per family)."""
    out = ["| family | instances | leak precision | leak recall | anomaly precision | anomaly recall |",
           "|---|---|---|---|---|---|"]
    for family in sorted({f for f, _ in report.by_family} | set(instances)):
        cells = []
        for kind in KINDS:
            s = report.by_family.get((family, kind), RuleScore(family, kind))
            cells += [_f(s.precision), _f(s.recall)]
        out.append(f"| {family} | {instances.get(family, '-')} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def format_errors(report: Report) -> str:
    """False positives and negatives by rule, with examples (family, release, scenario, keys; never values)."""
    out = [f"false positives / negatives (mode `{report.mode}`):"]
    for s in sorted(report.rules.values(), key=lambda s: s.rule):
        for what, examples, count in (("FP", s.false_positives, s.fp), ("FN", s.false_negatives, s.fn)):
            if not count:
                continue
            out.append(f"- `{s.rule}` {what} {count}:")
            for e in examples:
                keys = ", ".join(e.keys)
                out.append(f"    - {e.family} {e.software} [{e.scenario}] keys ({keys}): {e.message[:160]}")
    return "\n".join(out)

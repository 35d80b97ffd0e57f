"""Per-batch accounting: decode statistics from the executors, and the one progress line per batch.

The decode UDF reports each Arrow batch's :class:`udfs.decode.DecodeStats` into
a Spark accumulator (one per job); the batch function reads its value after the
batch's write job, so the difference is that batch's counts, including what the
Great Expectations suite found and cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyspark.accumulators import AccumulatorParam

from configwatch.contract import ALERTS, GAUGES, OUTPUT_KINDS, QUARANTINE, USAGE

__all__ = ["BatchReport", "StatsParam", "diff_stats", "new_stats_accumulator"]

_NUMBERS = ("records", "valid", "invalid", "expectation_failed", "fast_rows", "decode_seconds", "gx_seconds",
            "gx_batches", "gx_errors")


class StatsParam(AccumulatorParam):
    """Sums DecodeStats dicts (numbers add; per-expectation failure counts add by name)."""

    def zero(self, value: dict[str, Any]) -> dict[str, Any]:
        return {}

    def addInPlace(self, value1: dict[str, Any], value2: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        for name in _NUMBERS:
            if name in value2:
                value1[name] = value1.get(name, 0) + value2[name]
        failed = value1.setdefault("failed_by_expectation", {})
        for name, count in value2.get("failed_by_expectation", {}).items():
            failed[name] = failed.get(name, 0) + count
        return value1


def new_stats_accumulator(spark_context: Any) -> Any:
    return spark_context.accumulator({}, StatsParam())


def diff_stats(now: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {name: now.get(name, 0) - before.get(name, 0) for name in _NUMBERS}
    failed_now, failed_before = now.get("failed_by_expectation", {}), before.get("failed_by_expectation", {})
    out["failed_by_expectation"] = {
        name: count - failed_before.get(name, 0) for name, count in failed_now.items()
        if count - failed_before.get(name, 0)
    }
    return out


_COUNTS_AS = {ALERTS: "findings", QUARANTINE: "quarantined", GAUGES: "gauge updates", USAGE: "usage updates"}


@dataclass
class BatchReport:
    """One micro-batch of the job: records in, records out per kind, verdicts, GX summary, duration."""

    batch_id: int
    written: dict[str, int]  # output kind -> records written
    seconds: float
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def records_in(self) -> int:
        return int(self.stats.get("records", 0))

    def line(self) -> str:
        """The progress line, e.g. ``batch 3: 1000 records in, 950 valid, 50 invalid; out 2 findings, ...``."""
        s = self.stats
        out = ", ".join(f"{self.written.get(k, 0)} {_COUNTS_AS[k]}" for k in OUTPUT_KINDS)
        gx = f"gx {s.get('gx_seconds', 0.0) * 1000:.0f} ms"
        failed = s.get("failed_by_expectation") or {}
        if failed:
            gx += " (" + ", ".join(f"{name} {count}" for name, count in sorted(failed.items())) + ")"
        return (f"batch {self.batch_id}: {self.records_in} records in, {s.get('valid', 0)} valid, "
                f"{s.get('invalid', 0)} invalid; out {out} in {self.seconds:.2f} s; "
                f"decode {s.get('decode_seconds', 0.0) * 1000:.0f} ms, {gx}")

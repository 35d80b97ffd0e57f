"""The labelled evaluation set (issue 13): a 1,500-instance fleet through the real detection code path.

1,500, not fewer: ``fleet-outlier`` judges a value rare only once its peer group has
reported 50 values, which the groups of a smaller fleet seldom reach (docs/detection.md).

The labels are ground truth written with the fleet (``tests/eval``), apart from the
examples the rules were developed against; the thresholds are issue 13's.
"""

from __future__ import annotations

import functools

import pytest

from tests.eval.fleet import Fleet, build_fleet
from tests.eval.score import KINDS, MODES, Report, run
from tests.eval.table import format_errors

SEED = 13
SIZE = 1500
KIND_THRESHOLD = 0.97
RULE_PRECISION = 0.9


@functools.cache
def _fleet() -> Fleet:
    return build_fleet(SEED, SIZE)


@functools.cache
def _report(mode: str) -> Report:
    return run(_fleet(), mode)


def test_fleet_is_deterministic_and_about_a_quarter_has_a_problem() -> None:
    fleet = _fleet()
    assert [c.instance_id for c in build_fleet(SEED, SIZE).clients] == [c.instance_id for c in fleet.clients]
    planted = sum(1 for c in fleet.clients if c.expected)
    assert 0.18 <= planted / len(fleet.clients) <= 0.35
    assert {c.family for c in fleet.clients} == {"java", "librdkafka", "kafka-python", "sarama", "franz-go"}


@pytest.mark.parametrize("mode", MODES)
def test_no_planted_secret_in_any_finding(mode: str) -> None:
    assert _report(mode).secrets_in_output == 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_precision_and_recall_per_kind(mode: str, kind: str) -> None:
    report = _report(mode)
    score = report.kind(kind)
    assert score.precision is not None and score.recall is not None
    assert score.precision >= KIND_THRESHOLD and score.recall >= KIND_THRESHOLD, format_errors(report)


@pytest.mark.parametrize("mode", MODES)
def test_every_rule_precision(mode: str) -> None:
    report = _report(mode)
    low = {s.rule: s.precision for s in report.rules.values()
           if s.precision is not None and s.precision < RULE_PRECISION}
    assert not low, format_errors(report)

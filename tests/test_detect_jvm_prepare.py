"""The JVM route stage's detection for pushes (``Detector.prepare``) against ``udfs.rules.stateful.prepare``.

Every push of realistic fleets (the simulator's, the evaluation fleet raw and behind the edge)
goes through both; the stateless findings must be the same records, byte for byte, and the
fleet and group observations the same rows.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from tests.jvm_pushes import KEY, eval_pushes, simulator_pushes, table
from tests.jvmprobe import probe
from udfs.rules.stateful import FLEET, GROUP, KEY_SEP, PASS, prepare

NOW = 1_790_000_100_000
_CONTEXT = ("client_instance_id", "client_software_name", "client_software_version", "client_id", "principal",
            "client_address", "timestamp_ms", "subject_fp")


def _python(rows: list[dict[str, Any]]) -> tuple[Counter[Any], Counter[Any], Counter[Any]]:
    out = prepare(table(rows), KEY, NOW).to_pylist()
    findings = Counter((r["out_key"], r["finding"]) for r in out if r["state_key"].startswith(PASS + KEY_SEP))
    fleet = Counter((r["peer_group"], tuple(r["config_keys"]), tuple(r["config_values"]),
                     tuple(r[c] for c in _CONTEXT)) for r in out if r["state_key"].startswith(FLEET + KEY_SEP))
    groups = Counter((r["group_fp"], r["group"], r["protocol"], r["strategy"], r["member_fp"], r["timestamp_ms"])
                     for r in out if r["state_key"].startswith(GROUP + KEY_SEP))
    return findings, fleet, groups


def _java(rows: list[dict[str, Any]]) -> tuple[Counter[Any], Counter[Any], Counter[Any]]:
    answers = probe("PrepareProbe", [{"push": r, "now": NOW} for r in rows])
    findings: Counter[Any] = Counter()
    fleet: Counter[Any] = Counter()
    groups: Counter[Any] = Counter()
    for a in answers:
        findings.update((i, j) for i, j in a["findings"])
        if a["fleet"]:
            f = a["fleet"]
            fleet[(f["peer_group"], tuple(f["keys"]), tuple(float(v) for v in f["values"]),
                   tuple(f["context"][c] for c in _CONTEXT))] += 1
        if a["group"]:
            g = a["group"]
            groups[(g["group_fp"], g["group"], g["protocol"], g["strategy"], g["member_fp"], g["timestamp_ms"])] += 1
    return findings, fleet, groups


def _same(rows: list[dict[str, Any]]) -> None:
    py, jv = _python(rows), _java(rows)
    for name, a, b in zip(("findings", "fleet rows", "group rows"), py, jv, strict=True):
        missing, extra = a - b, b - a
        assert not missing and not extra, (
            f"{name}: {sum(missing.values())} only in Python, {sum(extra.values())} only in Java; e.g. "
            f"{json.dumps([list(missing)[:2], list(extra)[:2]], default=str)[:3000]}")
    assert sum(py[0].values()) > 0


@pytest.mark.parametrize("seed", [5, 11])
def test_simulator_fleet(seed: int) -> None:
    _same(simulator_pushes(600, seed))


@pytest.mark.parametrize(("seed", "mode"), [(13, "raw"), (13, "edge"), (29, "raw"), (41, "edge")])
def test_evaluation_fleet(seed: int, mode: str) -> None:
    _same(eval_pushes(700, seed, mode))


# Number texts around the JVM's shortcut for plain integers (PandasNumbers): signs, padding, zeros, the 15-digit
# edge, and texts that only the full pattern reads or that are no number at all.
_NUMBER_TEXTS = ("-0", "+5", " 12 ", "\t7\n", "007", "-42", "999999999999999", "1000000000000000",
                 "12345678901234567890", "1e3", "5.", ".5", "-", "+", "", "1_000", "\u0663", "0x10", "12a", "--1")


def test_number_texts_give_pythons_fleet_values() -> None:
    rows = simulator_pushes(600, 5)
    n = 0
    for row in rows:
        for entry in row["configs"]:
            if entry["type"] in ("INT", "LONG", "DOUBLE", "SHORT"):
                entry["value"] = _NUMBER_TEXTS[n % len(_NUMBER_TEXTS)]
                n += 1
    assert n > 10 * len(_NUMBER_TEXTS)
    _same(rows)

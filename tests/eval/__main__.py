"""``python -m tests.eval [--seed N] [--size N] [--mode raw|edge|both] [--errors]``: print the evaluation.

The generated fleet first (per mode), then the real-world set (``tests/eval/realworld``).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from tests.eval.fleet import build_fleet
from tests.eval.realworld.score import format_realworld, score
from tests.eval.score import MODES, run
from tests.eval.table import format_errors, format_families, format_report

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.eval", description=__doc__)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--size", type=int, default=3000, help="client instances")
    parser.add_argument("--mode", choices=(*MODES, "both"), default="both")
    parser.add_argument("--errors", action="store_true", help="list false positives/negatives with examples")
    args = parser.parse_args(argv)
    started = time.monotonic()
    fleet = build_fleet(args.seed, args.size)
    planted = sum(1 for c in fleet.clients if c.expected)
    traps = sum(1 for c in fleet.clients if "trap/" in c.scenario)
    print(f"fleet seed {args.seed}: {len(fleet.clients)} instances, {planted} with a planted problem "
          f"({100.0 * planted / len(fleet.clients):.0f}%), {traps} with a trap, {len(fleet.groups)} labelled groups "
          f"({sum(1 for g in fleet.groups if g.expected)} drifting)")
    for mode in MODES if args.mode == "both" else (args.mode,):
        report = run(fleet, mode)
        print()
        print(format_report(report))
        print()
        print(format_families(report, dict(Counter(c.family for c in fleet.clients))))
        if args.errors:
            print()
            print(format_errors(report))
    print()
    print(format_realworld(score()))
    print(f"\n({time.monotonic() - started:.1f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

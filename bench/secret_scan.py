"""Secret scan benchmark: configwatch's vectorized scanner vs Yelp's detect-secrets.

Usage (from the repository root, with the bench extra installed:
``.venv/bin/pip install -e '.[dev,bench]'``)::

    .venv/bin/python -m bench.secret_scan [--repeat 5] [--out bench/results/secret-scan.json]

Both scanners get the same labelled values (``bench/secret_corpus.py``): configwatch
as one Arrow array (``udfs.rules.secretscan.scan``); detect-secrets (default plugins
and filters) in its two modes: the ad-hoc string scan, one value at a time (a value
counts as flagged when the ``--string`` CLI would print True for any plugin), and
the file scan of all values written as one YAML mapping.
It reports precision, recall and entries per second on this machine, plus the
throughput on a realistic mix (every documented default value of the Java and
librdkafka key sets), and writes the numbers as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import pyarrow as pa

from bench.secret_corpus import labelled_values
from udfs.rules.keysets import profile
from udfs.rules.secretscan import scan

REPO = Path(__file__).resolve().parent.parent


def configwatch_flags(values: list[str]) -> list[bool]:
    return [r is not None for r in scan(pa.array(values, pa.string())).to_pylist()]


def detect_secrets_flags(values: list[str]) -> list[bool]:
    from detect_secrets.core import plugins
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    out = []
    with default_settings():
        for value in values:
            flagged = False
            for secret in scan_line(value):
                shown: str = plugins.initialize.from_secret_type(secret.type).format_scan_result(secret)
                if shown.startswith("True"):
                    flagged = True
                    break
            out.append(flagged)
    return out


def detect_secrets_file_flags(values: list[str]) -> list[bool]:
    """detect-secrets' file scan: the values as one YAML mapping (its YAML transformer unquotes them)."""
    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "values.yaml"
        path.write_text("".join(f"v{i}: {json.dumps(v)}\n" for i, v in enumerate(values)))
        with default_settings():
            lines = {secret.line_number for secret in scan_file(str(path))}
    return [i + 1 in lines for i in range(len(values))]


def realistic_mix() -> list[str]:
    """Every documented non-empty default of the Java 4.3 and librdkafka key sets: what pushes mostly carry."""
    values: list[str] = []
    for file, roles in (("apache-kafka-java-4.3.json", ("producer", "consumer", "admin", "streams")),
                        ("librdkafka-2.15.json", ("producer", "consumer"))):
        for role in roles:
            values += [s.default for s in profile(file, role).keys.values() if s.default]
    return values


def timed(fn: Callable[[list[str]], list[bool]], values: list[str], repeat: int) -> tuple[list[bool], float]:
    """Flags and the median entries/s over ``repeat`` runs."""
    rates, flags = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        flags = fn(values)
        rates.append(len(values) / (time.perf_counter() - start))
    return flags, statistics.median(rates)


def quality(flags: list[bool], data: list[tuple[str, bool, str]]) -> dict[str, Any]:
    tp = sum(f and label for f, (_, label, _) in zip(flags, data, strict=True))
    fp = sum(f and not label for f, (_, label, _) in zip(flags, data, strict=True))
    fn = sum(label and not f for f, (_, label, _) in zip(flags, data, strict=True))
    missed = Counter(cat for f, (_, label, cat) in zip(flags, data, strict=True) if label and not f)
    false_alarms = Counter(cat for f, (_, label, cat) in zip(flags, data, strict=True) if f and not label)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"true_positives": tp, "false_positives": fp, "false_negatives": fn,
            "precision": round(precision, 4), "recall": round(recall, 4),
            "f1": round(2 * precision * recall / (precision + recall), 4) if precision + recall else 0.0,
            "missed_by_category": dict(sorted(missed.items())),
            "false_alarms_by_category": dict(sorted(false_alarms.items()))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (median reported)")
    parser.add_argument("--seed", type=int, default=5, help="seed of the labelled set")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "secret-scan.json")
    args = parser.parse_args(argv)

    data = labelled_values(args.seed)
    values = [v for v, _, _ in data]
    mix = realistic_mix() * 20
    configwatch_flags(values[:100])  # warm up (regex compilation, imports)
    ours, ours_rate = timed(configwatch_flags, values, args.repeat)
    _, ours_mix_rate = timed(configwatch_flags, mix, args.repeat)
    theirs, theirs_rate = timed(detect_secrets_flags, values, max(1, args.repeat // 2))
    _, theirs_mix_rate = timed(detect_secrets_flags, mix, 1)
    theirs_file, theirs_file_rate = timed(detect_secrets_file_flags, values, max(1, args.repeat // 2))
    _, theirs_file_mix_rate = timed(detect_secrets_file_flags, mix, 1)

    result: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "pyarrow": metadata.version("pyarrow"), "detect_secrets": metadata.version("detect-secrets")},
        "labelled_set": {"seed": args.seed, "values": len(data), "secrets": sum(1 for _, s, _ in data if s),
                         "categories": dict(sorted(Counter(c for _, _, c in data).items()))},
        "realistic_mix_values": len(mix),
        "configwatch": {**quality(ours, data), "entries_per_s": round(ours_rate),
                        "entries_per_s_realistic_mix": round(ours_mix_rate)},
        "detect_secrets": {**quality(theirs, data), "entries_per_s": round(theirs_rate),
                           "entries_per_s_realistic_mix": round(theirs_mix_rate)},
        "detect_secrets_file": {**quality(theirs_file, data), "entries_per_s": round(theirs_file_rate),
                                "entries_per_s_realistic_mix": round(theirs_file_mix_rate)},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print("| scanner | precision | recall | F1 | entries/s (labelled set) | entries/s (realistic mix) |")
    print("|---|---|---|---|---|---|")
    for name in ("configwatch", "detect_secrets", "detect_secrets_file"):
        r = result[name]
        print(f"| {name} | {r['precision']:.4f} | {r['recall']:.4f} | {r['f1']:.4f} | {r['entries_per_s']:,} "
              f"| {r['entries_per_s_realistic_mix']:,} |")
    print(f"\nwritten to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

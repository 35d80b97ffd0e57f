"""``make bench``: every figure in one run, written to ``bench/results/latest.json`` and the docs.

Usage (``make bench`` / ``make bench QUICK=1`` run this)::

    .venv/bin/python -m bench.run [--quick] [--records N] [--rounds R] [--only decode,pipeline,...]

It starts its own local broker (KRaft, in a temporary directory, stopped at the
end), writes the workload (``bench.workload``) to a topic, opens one Spark
session, and runs the figures in ``RUN_ORDER``: ``pipeline`` (2, 5, 6 and the profile),
``peer`` (3), ``quix``, ``decode`` (1), ``latency`` (4), ``state`` (7), ``scaling``. The results go
to ``--out`` as JSON (parameters, machine, every figure's numbers) and into the
generated block of ``docs/benchmarks.md`` (``bench.report``). ``--quick`` is a
smoke run on a small workload (about two minutes), not a measurement.
"""

from __future__ import annotations

import argparse
import json
import logging
import secrets
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness import BenchContext, machine

__all__ = ["FIGURES", "main"]

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ("decode", "pipeline", "peer", "quix", "latency", "state", "scaling")
# The order figures run in, whatever --only lists: the decode figure caches the whole topic in the
# driver, whose JVM keeps the grown heap (a full GC after unpersist did not give it back), so the
# pipeline figure, which samples the job's memory in the same driver, runs before it.
RUN_ORDER = ("pipeline", "peer", "quix", "decode", "latency", "state", "scaling")
FULL = {"records": 500_000, "rounds": 3, "latency_s": 120.0, "latency_rate": 2000, "state_connections": 1_000_000}
QUICK = {"records": 10_000, "rounds": 1, "latency_s": 8.0, "latency_rate": 500, "state_connections": 10_000}


def _bench_key() -> Any:
    """The bench's fingerprint key: random once per machine, kept (0600) in the cache directory, so the
    simulated base fleet, which the key masks, can be cached too (``bench.workload``)."""
    from configwatch.paths import cache_dir
    from configwatch.secrets import SecretStr

    path = cache_dir() / "bench" / "fingerprint-key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = path.with_suffix(".tmp")
        staging.write_text(secrets.token_hex(16))
        staging.chmod(0o600)
        staging.replace(path)
    return SecretStr(path.read_text().strip())


def _figure(name: str) -> Callable[[BenchContext], dict[str, Any]]:
    import importlib

    module = importlib.import_module(f"bench.fig_{name}")
    return module.measure


def _cross_checks(ctx: BenchContext, figures: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Did the peer do the job's work? Its alert ids against the Spark job's, on the same workload."""
    from bench.harness import read_topic

    job_topic = figures.get("pipeline", {}).get("pipeline_alerts_topic")
    peer_topic = figures.get("peer", {}).get("python_peer_alerts_topic")
    if not job_topic or not peer_topic:
        return {}
    job = {r.key for r in read_topic(ctx.bootstrap, job_topic)}
    peer = {r.key for r in read_topic(ctx.bootstrap, peer_topic)}
    # Stateful findings (fleet outliers, group drift) depend on batch boundaries: the available-now
    # job reads the backlog as one batch, the peer in batches of 50k, so a few may differ.
    return {"job_alert_ids": len(job), "peer_alert_ids": len(peer), "alert_ids_in_both": len(job & peer),
            "alert_ids_only_in_job": len(job - peer), "alert_ids_only_in_peer": len(peer - job)}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="a small smoke run (about two minutes)")
    p.add_argument("--records", type=int, help="workload records in Kafka (default 500000; quick 10000)")
    p.add_argument("--rounds", type=int, help="measured rounds per comparison, after one warm-up (default 3)")
    p.add_argument("--partitions", type=int, default=4, help="partitions of the workload topic (default 4)")
    p.add_argument("--latency-s", type=float, help="measured latency window in seconds (default 120)")
    p.add_argument("--latency-rate", type=int, help="records per second during the latency figure (default 2000)")
    p.add_argument("--state-connections", type=int, help="connections for the state-scale figure (default 1M)")
    p.add_argument("--only", help=f"comma-separated figures to run (of {', '.join(FIGURES)})")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "latest.json")
    p.add_argument("--docs", type=Path, default=ROOT / "docs" / "benchmarks.md",
                   help="the markdown file whose generated block is rewritten ('-' for none)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    base = QUICK if args.quick else FULL
    params: dict[str, Any] = {k: getattr(args, k) if getattr(args, k) is not None else v for k, v in base.items()}
    params.update(quick=args.quick, partitions=args.partitions)
    asked = FIGURES if not args.only else tuple(f.strip() for f in args.only.split(",") if f.strip())
    unknown = [f for f in asked if f not in FIGURES]
    figures = tuple(f for f in RUN_ORDER if f in asked)
    if unknown or params["records"] < 1000 or params["rounds"] < 1:
        print(f"bench: expected --only from {', '.join(FIGURES)}, --records >= 1000 and --rounds >= 1",
              file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the finally below stops the broker

    from bench.report import write_docs
    from bench.workload import produce_workload
    from configwatch.localkafka import LocalKafka

    work = Path(tempfile.mkdtemp(prefix="configwatch-bench-"))
    broker = LocalKafka(work / "kafka")
    results: dict[str, Any] = {"parameters": {**params, "figures": list(figures)}, "machine": machine(),
                               "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "figures": {}, "errors": {}}
    started = time.perf_counter()
    ctx: BenchContext | None = None
    try:
        bootstrap = broker.start().bootstrap_servers
        key = _bench_key()
        # Warm-up rounds read the workload itself: a 10,000-record warm-up left the job's first full round
        # 1.24x as long as its second, the peer's 1.06x (measured 2026-11-25; git log docs/benchmarks.md).
        ctx = BenchContext(bootstrap=bootstrap, work=work, topic="bench-workload", warmup_topic="bench-workload",
                           records=params["records"],
                           partitions=params["partitions"], rounds=params["rounds"], quick=params["quick"],
                           latency_s=params["latency_s"], latency_rate=params["latency_rate"],
                           state_connections=params["state_connections"], fingerprint_key=key)
        print(f"bench: writing {ctx.records} workload records to {ctx.topic} ...", flush=True)
        ctx.workload = produce_workload(bootstrap, ctx.topic, ctx.records, key, partitions=ctx.partitions)
        results["workload"] = ctx.workload
        results["machine"]["spark_master"] = ctx.spark().sparkContext.master
        for name in figures:
            print(f"bench: figure {name} ...", flush=True)
            t0 = time.perf_counter()
            try:
                results["figures"][name] = _figure(name)(ctx)
            except Exception as exc:  # one figure failing must not lose the others' numbers
                results["errors"][name] = f"{type(exc).__name__}: {exc}".splitlines()[0]
                traceback.print_exc()
            print(f"bench: figure {name} done in {time.perf_counter() - t0:.0f} s", flush=True)
        if ctx is not None:
            results["cross_checks"] = _cross_checks(ctx, results["figures"])
    finally:
        if ctx is not None and ctx._spark is not None:
            ctx._spark.stop()
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)
    results["seconds"] = round(time.perf_counter() - started)
    flat: dict[str, Any] = {}
    for numbers in results["figures"].values():
        flat.update(numbers)
    results = {**flat, **results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, sort_keys=False, default=str) + "\n")
    print(f"bench: results in {args.out} ({results['seconds']} s)", flush=True)
    if str(args.docs) != "-":
        write_docs(args.docs, results)
        print(f"bench: figures table in {args.docs}", flush=True)
    for name, error in results["errors"].items():
        print(f"bench: figure {name} failed: {error}", file=sys.stderr)
    return 1 if results["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())

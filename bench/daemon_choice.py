"""Which Python worker daemon: Spark's default or ``streaming.worker_daemon`` (libraries and GX preloaded)?

Per daemon, one fresh Spark session (``local[2]``) in its own process runs, on 2,000
workload records in 4 partitions, an identity ``mapInArrow`` and the job's decode
and routing ``mapInArrow`` (``streaming.pipeline.RouteUdf``, GX on) and the floor's trivial keyed
``transformWithStateInPandas`` (``bench.floor``, as a batch query): one warm-up,
then the median of 8 runs each, so the figure is the steady-state cost per batch
(workers reused), not the first batch, plus the workers' peak PSS over the runs.
Run: ``python -m bench.daemon_choice``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

__all__ = ["measure"]

DAEMONS = ("pyspark.daemon", "streaming.worker_daemon")


def _identity(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield from batches


def _one(daemon: str, rows: int, runs: int) -> dict[str, Any]:
    from pyspark.sql.pandas.types import from_arrow_schema

    from bench.floor import KEYS, processor
    from bench.memory import MemorySampler
    from bench.workload import workload_records
    from configwatch.settings import Settings
    from streaming.pipeline import RouteUdf, gauge_config
    from streaming.session import SparkSettings, build_spark_session
    from udfs.pipeline import ROUTED_SCHEMA

    settings = Settings()
    spark = build_spark_session(SparkSettings(app_name=f"bench-daemon-{daemon}", python_daemon=daemon))
    values = [(r.value, "t", i % 4, i // 4) for i, r in enumerate(workload_records(rows, settings.fingerprint_key))]
    raw = (spark.createDataFrame(values, "value binary, topic string, partition int, offset long")
           .selectExpr("value", "topic", "partition", "offset", "current_timestamp() as timestamp")
           .repartition(4).cache())
    raw.count()
    keyed = raw.selectExpr(f"pmod(hash(value), {KEYS}) as k", "offset as ts")
    route = RouteUdf(files=False, validate=True, key=settings.fingerprint_key, gauges=gauge_config(settings),
                     kinds=("alerts", "quarantine", "gauges"))
    queries = {
        "jvm_only_s": lambda: raw.selectExpr("length(value) as n").agg({"n": "sum"}).collect(),
        "identity_s": lambda: raw.mapInArrow(_identity, raw.schema).count(),
        "route_s": lambda: raw.mapInArrow(route, from_arrow_schema(ROUTED_SCHEMA)).count(),
        "keyed_state_s": lambda: keyed.groupBy("k").transformWithStateInPandas(
            processor(), "key string, value string", "Append", "None").count(),
    }
    out: dict[str, Any] = {"daemon": spark.sparkContext.getConf().get("spark.python.daemon.module")}
    sampler = MemorySampler().start()
    for name, run in queries.items():
        run()  # warm-up: workers started (and, for the default daemon, GX imported)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        out[name] = round(statistics.median(times), 3)
    peaks = sampler.stop()
    out.update(workers_pss_mb=peaks["workers_pss"], max_python_workers=peaks["max_python_workers"])
    spark.stop()
    return out


def measure(rows: int = 2000, runs: int = 8) -> dict[str, Any]:
    """Both daemons, one subprocess each (the daemon is fixed when Spark starts)."""
    results = {}
    for daemon in DAEMONS:
        done = subprocess.run([sys.executable, "-m", "bench.daemon_choice", "--one", daemon, "--rows", str(rows),
                               "--runs", str(runs)], capture_output=True, text=True, check=True)
        results[daemon] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", choices=DAEMONS, help="measure one daemon in this process")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=8)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_one(args.one, args.rows, args.runs)))
    else:
        print(json.dumps(measure(args.rows, args.runs), indent=2))


if __name__ == "__main__":
    main()

"""Benchmark: which Spark state API carries the gauges (docs/benchmarks.md, "Gauges: state API").

Usage::

    .venv/bin/python -m bench.gauge_state_apis --variant aipws --connections 100000
    .venv/bin/python -m bench.gauge_state_apis --all          # every variant, one process each

Variants, all on the same pre-decoded input (Parquet files, one file per micro-batch):

- ``aipws``: applyInPandasWithState, one group, the whole state one value (``udfs.gauges``);
- ``tws``: transformWithStateInPandas, one group, the same value in a ValueState (+ one timer);
- ``tws-chain``: two chained transformWithStateInPandas operators, the textbook incremental
  design: stage 1 keyed by connection_id (ValueState per connection) emits +1/-1 deltas,
  stage 2 keyed by name/version (MapState instance -> open connections) turns them into gauges;
- ``native``: Spark's own operators (two chained streaming aggregations); reports what Spark refuses;
- ``native-chain``: the same chain run with Spark's correctness check off, to show what it counts;
- ``roundtrip``: the cost of one Python state call (MapState.updateValue) in a TWS worker.

Phases: ``bulk`` (every connection opens, then closes/duplicates, in files of
``--bulk-batch`` events) and ``steady`` (``--steady-batches`` small files of
``--steady-batch`` events against the full state). Prints one JSON line per phase.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from bench.gauge_workload import connection_events, expected_gauges
from configwatch.records import Event
from udfs.gauges import FLEET_KEY, INPUT_COLUMNS, gauge_key

VARIANTS = ("aipws", "tws", "tws-chain", "native", "native-chain", "roundtrip")


def _frame(events: list[Event], first_offset: int) -> pd.DataFrame:
    rows = []
    for i, ev in enumerate(events):
        d = ev.to_dict()
        rows.append({c: d.get(c) for c in INPUT_COLUMNS[:6]} | {"partition": hash(ev.kafka_key()) % 4,
                                                               "offset": first_offset + i})
    df = pd.DataFrame(rows, columns=list(INPUT_COLUMNS))
    return df.astype({"timestamp_ms": "int64", "partition": "int32", "offset": "int64"})


def write_input(root: Path, n: int, bulk_batch: int, steady_batches: int, steady_batch: int
                ) -> tuple[Path, Path, dict[str, tuple[int, int]]]:
    """Parquet files for both phases; returns their directories and the expected final gauges."""
    bulk = connection_events(n)
    steady = connection_events(steady_batches * steady_batch // 2, seed=99, start_ms=bulk[-1].timestamp_ms + 10,
                               close_share=0.5, dup_share=0.0, unknown_close_share=0.0)
    steady = [Event.from_dict({**e.to_dict(), "connection_id": f"s-{e.connection_id}"}) for e in steady]
    dirs = root / "bulk", root / "steady"
    for d, events, size in ((dirs[0], bulk, bulk_batch), (dirs[1], steady, steady_batch)):
        d.mkdir(parents=True)
        for k, start in enumerate(range(0, len(events), size)):
            _frame(events[start:start + size], start).to_parquet(d / f"part-{k:05d}.parquet", index=False)
    expected = expected_gauges(bulk + steady)
    return dirs[0], dirs[1], expected


def run_variant(variant: str, n: int, bulk_batch: int, steady_batches: int, steady_batch: int,
                partitions: int = 1) -> Iterator[dict[str, Any]]:
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    from bench import gauge_state_variants as variants
    from streaming.session import SparkSettings, build_spark_session

    spark = build_spark_session(SparkSettings(app_name=f"bench-gauges-{variant}", driver_memory="3g",
                                              shuffle_partitions=partitions))
    if variant == "roundtrip":
        yield variants.roundtrip(spark)
        return
    if variant == "native":
        yield variants.native(spark)
        return
    root = Path(tempfile.mkdtemp(prefix="gauge-bench-"))
    try:
        bulk_dir, steady_dir, expected = write_input(root, n, bulk_batch, steady_batches, steady_batch)
        current: dict[str, tuple[int, int]] = {}

        def collect(batch: DataFrame, batch_id: int) -> None:
            for r in batch.collect():
                if r["removed"]:
                    current.pop(r["key"], None)
                else:
                    current[r["key"]] = (r["connections"], r["client_instances"])

        schema = spark.read.parquet(str(bulk_dir)).schema
        for phase, source in (("bulk", bulk_dir), ("steady", steady_dir)):
            staging = root / "in"
            if phase == "bulk":
                staging.mkdir()
            for f in sorted(source.iterdir()):
                shutil.copy(f, staging / f"{phase}-{f.name}")
            stream = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(str(staging))
            gauges = variants.build(variant, stream.select(*[F.col(c) for c in INPUT_COLUMNS]))
            if variant == "native-chain":
                spark.conf.set("spark.sql.streaming.statefulOperator.checkCorrectness.enabled", "false")
            started = time.perf_counter()
            query = (gauges.writeStream.outputMode("update").foreachBatch(collect)
                     .option("checkpointLocation", str(root / "ckpt"))
                     .trigger(availableNow=True).start())
            query.awaitTermination()
            wall_s = time.perf_counter() - started
            if query.exception() is not None:
                raise RuntimeError(str(query.exception()))
            progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
            add_ms = [p["durationMs"].get("addBatch", 0) for p in progress]
            rows = sum(p["numInputRows"] for p in progress)
            state_ops = progress[-1]["stateOperators"] if progress else []
            yield {
                "variant": variant, "phase": phase, "connections": n, "batches": len(progress),
                "input_rows": rows, "wall_s": round(wall_s, 2),
                "events_per_s": round(rows / (sum(p["durationMs"]["triggerExecution"] for p in progress) / 1000), 1),
                "batch_ms_median": statistics.median(add_ms) if add_ms else None,
                "batch_ms_max": max(add_ms) if add_ms else None,
                "partitions": partitions,
                "last_batch": {k: v for k, v in (progress[-1]["durationMs"] if progress else {}).items() if v},
                "state_ms": [{k: op.get(k) for k in ("allUpdatesTimeMs", "commitTimeMs")} for op in state_ops],
                "state_rows": [op.get("numRowsTotal") for op in state_ops],
                "state_bytes": [op.get("memoryUsedBytes") for op in state_ops],
            }
        fleet_conns = sum(c for c, _ in expected.values())
        versions = {k: v for k, v in current.items() if k != FLEET_KEY}
        ok = versions == expected and current.get(FLEET_KEY, (0, 0))[0] == fleet_conns
        yield {"variant": variant, "phase": "check", "gauges_match_expected": ok,
               "keys": len(versions), "fleet": current.get(FLEET_KEY),
               "example": {gauge_key("librdkafka", "2.0.0"): current.get(gauge_key("librdkafka", "2.0.0"))}}
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variant", choices=VARIANTS)
    parser.add_argument("--all", action="store_true", help="run every variant, each in its own process")
    parser.add_argument("--connections", type=int, default=100_000)
    parser.add_argument("--bulk-batch", type=int, default=20_000)
    parser.add_argument("--steady-batches", type=int, default=10)
    parser.add_argument("--steady-batch", type=int, default=1_000)
    parser.add_argument("--partitions", type=int, default=1, help="spark.sql.shuffle.partitions (state partitions)")
    args = parser.parse_args(argv)
    sizing = ["--connections", str(args.connections), "--bulk-batch", str(args.bulk_batch),
              "--steady-batches", str(args.steady_batches), "--steady-batch", str(args.steady_batch),
              "--partitions", str(args.partitions)]
    if args.all:
        for v in VARIANTS:
            subprocess.run([sys.executable, "-m", "bench.gauge_state_apis", "--variant", v, *sizing], check=False)
        return 0
    if not args.variant:
        parser.error("give --variant or --all")
    for line in run_variant(args.variant, args.connections, args.bulk_batch, args.steady_batches, args.steady_batch,
                            args.partitions):
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

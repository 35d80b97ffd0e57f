"""Decode throughput in Spark: native ``from_json`` vs ``pandas_udf`` vs ``mapInArrow`` (exact and fast paths).

Usage (from the repository root)::

    .venv/bin/python -m bench.decode_variants [--records 100000] [--garbage 0.05] [--partitions 2] [--repeat 3]

All variants run in one Spark session on the same cached DataFrame of raw
records (``value`` binary, like the Kafka source): half config pushes with the
KIP's default keys (about 11 entries), half connection events, and a share
(``--garbage``) of invalid records of every kind in ``tests/invalid_records.py``.
Each variant decodes into
the same typed schema (``udfs.schema.EVENT_SCHEMA``) and is forced with Spark's
``noop`` sink; after a warm-up, ``--repeat`` rounds run every variant once each
(interleaved, so load from other work hits all alike); the table shows the best
and the median round.

``from_json`` only parses: no contract checks, no quarantine reasons (what it
would take to add them in SQL is not measured). The UDF variants parse *and*
classify every record exactly as the job does.

Before Spark, the UDF body alone (``udfs.decode.decode_batches``, what one task
runs) is timed on 50,000 records in five Arrow batches, with and without the GX
suite: what GX costs per partition batch.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pandas as pd
import pyarrow as pa

from configwatch.records import ConfigEntry, Event
from tests.invalid_records import EXPECTATION_CASES, INVALID_CASES

PRODUCER = {"acks": ("all", "STRING"), "batch.size": ("16384", "INT"), "buffer.memory": ("33554432", "LONG"),
            "compression.type": ("lz4", "STRING"), "delivery.timeout.ms": ("120000", "INT"),
            "enable.idempotence": ("true", "BOOLEAN"), "linger.ms": ("5", "LONG"),
            "max.in.flight.requests.per.connection": ("5", "INT"), "request.timeout.ms": ("30000", "INT"),
            "retries": ("2147483647", "INT"), "sasl.jaas.config": (None, "PASSWORD")}


def records(n: int, garbage: float = 0.05, seed: int = 5) -> list[bytes | None]:
    rng = random.Random(seed)
    invalid = [c.raw for c in (*INVALID_CASES, *EXPECTATION_CASES)]
    every = round(1 / garbage) if garbage else 0
    out: list[bytes | None] = []
    for i in range(n):
        if every and i % every == every - 1:
            out.append(invalid[(i // every) % len(invalid)])
            continue
        ident: dict[str, Any] = dict(
            broker_id=rng.randrange(3), connection_id=f"10.0.0.5:9092-10.1.{i % 250}.{i % 200}:{40000 + i}-{i}",
            client_instance_id=f"{rng.getrandbits(128):032x}", client_software_name="apache-kafka-java",
            client_software_version=rng.choice(["3.9.1", "4.0.0", "4.1.0"]), client_id=f"svc-{i % 97}",
            principal=f"User:svc{i % 31}", listener="SASL_SSL", security_protocol="SASL_SSL",
            client_address=f"10.1.{i % 250}.{i % 200}")
        ts = 1_790_000_000_000 + i
        if i % 2:
            entries = tuple(
                ConfigEntry(k, v, t, rng.random() < 0.6, redacted=v is None,
                            fingerprint=f"{rng.getrandbits(64):016x}" if v is None else None)
                for k, (v, t) in PRODUCER.items())
            event = Event("config_push", ts, configs=entries, request_size_bytes=900, **ident)
        else:
            event = Event(rng.choice(["connection_opened", "connection_closed"]), ts, **ident)
        out.append(event.to_json().encode())
    return out


def _time(action: Callable[[], object], repeat: int) -> float:
    action()  # warm-up: workers started, caches filled
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--garbage", type=float, default=0.05, help="share of invalid records (default 0.05)")
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf
    from pyspark.sql.pandas.types import from_arrow_schema

    from streaming.decode import decode
    from streaming.session import SparkSettings, build_spark_session
    from udfs.decode import decode_batches, decode_values, output_schema
    from udfs.schema import DECODED_FIELDS, EVENT_SCHEMA

    values = records(args.records, args.garbage)
    body = [pa.RecordBatch.from_pydict({"value": pa.array(values[i:i + 10_000], pa.binary())})
            for i in range(0, 50_000, 10_000)]
    exact = _time(lambda: [decode_values(b.column("value"), exact_only=True) for b in body], args.repeat)
    print(f"UDF body, exact path only, no GX: {exact * 1000:.0f} ms per 50,000 records", flush=True)
    for label, validate in (("UDF body, fast path, no GX", False), ("UDF body, fast path, GX suite", True)):
        seconds = _time(lambda v=validate: list(decode_batches(body, validate=v)), args.repeat)  # type: ignore[misc]
        reports: list[Any] = []
        list(decode_batches(body, validate=validate, report=reports.append))
        gx_ms = sum(r.gx_seconds for r in reports) * 1000
        print(f"{label}: {seconds * 1000:.0f} ms per 50,000 records (5 Arrow batches; GX {gx_ms:.0f} ms in "
              f"{sum(r.gx_batches for r in reports)} call(s), fast path {sum(r.fast_rows for r in reports)} rows)",
              flush=True)

    spark = build_spark_session(SparkSettings(app_name="bench-decode", driver_memory="3g"))
    table = pa.table({"value": pa.array(values, pa.binary()), "offset": pa.array(range(len(values)), pa.int64())})
    raw = spark.createDataFrame(table.to_pandas()).repartition(args.partitions).cache()
    total_bytes = sum(len(v or b"") for v in values)
    print(f"{raw.count()} records, {total_bytes / 1e6:.1f} MB, {args.partitions} partitions", flush=True)

    def run(df: Any) -> Callable[[], None]:
        return lambda: df.write.format("noop").mode("overwrite").save()

    event_struct = from_arrow_schema(EVENT_SCHEMA)
    decoded_struct = from_arrow_schema(pa.schema(DECODED_FIELDS))

    @pandas_udf(decoded_struct)  # type: ignore[call-overload]
    def decode_pandas(series: pd.Series) -> pd.DataFrame:
        decoded, _ = decode_values(pa.array(series, pa.binary()))
        return decoded.to_pandas()

    def exact_only(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            decoded, _ = decode_values(batch.column("value"), exact_only=True)
            for f in batch.schema:
                if f.name != "value":
                    decoded = decoded.append_column(f, batch.column(f.name))
            yield from decoded.to_batches()

    out_struct = from_arrow_schema(output_schema(pa.schema([("value", pa.binary()), ("offset", pa.int64())])))
    variants: list[tuple[str, Any]] = [
        ("native from_json (parse only, no checks)",
         raw.select(F.from_json(F.col("value").cast("string"), event_struct).alias("e"), "offset").select("e.*",
                                                                                                         "offset")),
        ("pandas_udf (fast path, no GX)", raw.select(decode_pandas("value").alias("d"), "offset").select("d.*",
                                                                                                       "offset")),
        ("mapInArrow, exact path only (json.loads + validate_event), no GX", raw.mapInArrow(exact_only, out_struct)),
        ("mapInArrow, Arrow fast path, no GX", decode(raw, validate=False)),
        ("mapInArrow, Arrow fast path + GX suite (the job)", decode(raw, validate=True)),
    ]
    # Interleaved rounds: load from other work on the machine hits every variant alike.
    for _, df in variants:
        run(df)()  # warm-up
    runs: dict[str, list[float]] = {name: [] for name, _ in variants}
    loads = []
    for round_no in range(args.repeat):
        for name, df in variants:
            started = time.perf_counter()
            run(df)()
            runs[name].append(time.perf_counter() - started)
        loads.append(os.getloadavg()[0])
        print(f"round {round_no + 1}: " + ", ".join(f"{runs[n][-1]:.2f}" for n, _ in variants), flush=True)

    print(f"\nmachine: {os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} "
          f"GiB, load average {min(loads):.1f}-{max(loads):.1f} during the rounds; Python "
          f"{platform.python_version()}, Spark {spark.version}, pyarrow {pa.__version__}, pandas {pd.__version__}")
    print("\n| variant | best s | median s | records/s (best) |\n|---|---:|---:|---:|")
    for name, _ in variants:
        best, median = min(runs[name]), statistics.median(runs[name])
        print(f"| {name} | {best:.2f} | {median:.2f} | {args.records / best:,.0f} |")
    spark.stop()


if __name__ == "__main__":
    main()

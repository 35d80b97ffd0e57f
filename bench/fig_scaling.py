"""Scaling: the same job on the same workload with one core and with two (``scaling_2_vs_1``).

Each master runs in its own process (Spark fixes the master when it starts): warm-up runs of the job
on the warm-up topic (the workload itself) until the JIT has seen ``bench.harness.JOB_WARMUP_RECORDS``,
then a hundred small batches (``bench.harness.job_warmup_bounds``), then ``ctx.rounds`` timed
available-now runs on the workload topic, fresh checkpoint and output topics each time. The figure is
the median records/s at ``local[2]`` over that at ``local[1]``. Beside it, ``bench.cpu_use`` says who
used the CPUs during the median run: ``local[1]`` has one task thread, but the JIT, the collector and
the broker run on the second core meanwhile (docs/benchmarks.md, "where local[1] gets its second core").

The reference (``scaling_reference_2_vs_1``) is the same measurement of Spark's own query of the job's
shape (``bench.scaling_reference``), in processes of its own between the job's: what this machine
gives any Spark query like it. ``scaling_vs_reference`` is the job's ratio over the reference's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import cpu_use
from bench.harness import BenchContext, job_warmup_bounds, median_of

if TYPE_CHECKING:
    from configwatch.settings import Settings

__all__ = ["measure"]

MASTERS = ("local[1]", "local[2]")
KEY_ENV = "CONFIGWATCH_FINGERPRINT_KEY"  # the child's key: in its environment, never on its command line


def _settings(master: str, bootstrap: str, topic: str, work: Path, bound: int | None = None) -> Settings:
    """The job's settings for one run: fresh checkpoint and output topics, the job's defaults otherwise.

    ``bound``: the run's records per batch, else the job's default.
    """
    from configwatch.secrets import SecretStr
    from configwatch.settings import Settings

    suffix = uuid.uuid4().hex[:8]
    settings = Settings(bootstrap_servers=bootstrap, checkpoint_dir=work / f"ckpt-{suffix}", input_topic=topic,
                        sink="kafka", alerts_topic=f"bench-scale-alerts-{suffix}",
                        quarantine_topic=f"bench-scale-quarantine-{suffix}",
                        gauges_topic=f"bench-scale-gauges-{suffix}",
                        trigger="available-now", starting_offsets="earliest",
                        fingerprint_key=SecretStr(os.environ[KEY_ENV]),
                        spark_master=master)
    return dataclasses.replace(settings, max_offsets_per_trigger=bound) if bound else settings


def _run_once(master: str, bootstrap: str, topic: str, work: Path, bound: int | None = None
              ) -> tuple[float, dict[str, Any]]:
    from streaming.job import JobOptions, StreamingJob

    settings = _settings(master, bootstrap, topic, work, bound)
    job = StreamingJob(settings, JobOptions.from_settings(settings), bootstrap, out=lambda _: None)
    output = job.prepare()  # the output topics, before the clock
    before = cpu_use.sample()
    started = time.perf_counter()
    job.start(output)
    job.wait()
    seconds = time.perf_counter() - started
    return seconds, cpu_use.use(before, cpu_use.sample(), seconds)


def _reference_once(master: str, bootstrap: str, topic: str, work: Path, bound: int | None = None
                    ) -> tuple[float, dict[str, Any]]:
    from bench.scaling_reference import run_once
    from streaming.session import SparkSettings, build_spark_session

    # The job's settings for the run: its Spark session, its batch bound, and a fresh topic and checkpoint.
    settings = _settings(master, bootstrap, topic, work, bound)
    spark = build_spark_session(SparkSettings(master=settings.spark_master, driver_memory=settings.driver_memory))
    return run_once(spark, bootstrap, topic, settings.alerts_topic, settings.checkpoint_dir,
                    settings.max_offsets_per_trigger)


def _child(master: str, bootstrap: str, topic: str, warmup_topic: str, records: int, rounds: int, *,
           reference: bool = False) -> dict[str, Any]:
    run_once = _reference_once if reference else _run_once
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        for bound in job_warmup_bounds(records):
            run_once(master, bootstrap, warmup_topic, Path(tmp), bound)
        runs = [run_once(master, bootstrap, topic, Path(tmp)) for _ in range(rounds)]
    return {"master": master, "seconds": [round(s, 2) for s, _ in runs], "cpu_use": [c for _, c in runs]}


def _runs(ctx: BenchContext, master: str, *, reference: bool) -> tuple[list[float], list[dict[str, Any]]]:
    """One child process's timed runs at ``master``: seconds and CPU use of each."""
    done = subprocess.run([sys.executable, "-m", "bench.fig_scaling", "--master", master, "--bootstrap",
                           ctx.bootstrap, "--topic", ctx.topic, "--warmup-topic", ctx.warmup_topic,
                           "--records", str(ctx.records), "--rounds", str(ctx.rounds),
                           *(["--reference"] if reference else [])],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, KEY_ENV: ctx.fingerprint_key.get_secret_value()})
    child = json.loads(done.stdout.strip().splitlines()[-1])
    return [float(s) for s in child["seconds"]], child["cpu_use"]


def _median_run(seconds: list[float], cpu: list[dict[str, Any]]) -> tuple[float, dict[str, Any]]:
    """The median of ``seconds``, and the CPU use of the run nearest it."""
    median = median_of(seconds)
    return median, min(zip(seconds, cpu, strict=True), key=lambda run: abs(run[0] - median))[1]


def measure(ctx: BenchContext) -> dict[str, Any]:
    """Both masters, one process each, the job's and the reference's alternating."""
    seconds: dict[str, float] = {}
    runs: dict[str, list[float]] = {}
    cpus: dict[str, Any] = {}
    reference: dict[str, float] = {}
    reference_cpus: dict[str, Any] = {}
    for master in MASTERS:
        runs[master], cpu = _runs(ctx, master, reference=False)
        seconds[master], cpus[master] = _median_run(runs[master], cpu)
        reference_runs, reference_cpu = _runs(ctx, master, reference=True)
        reference[master], reference_cpus[master] = _median_run(reference_runs, reference_cpu)
    rates = {m: ctx.records / s for m, s in seconds.items()}
    job_ratio = rates["local[2]"] / rates["local[1]"]
    reference_ratio = reference["local[1]"] / reference["local[2]"]
    return {
        "scaling_seconds": seconds,
        "scaling_runs_seconds": runs,
        "scaling_records_per_s": {m: round(r) for m, r in rates.items()},
        "scaling_2_vs_1": round(job_ratio, 2),
        "scaling_cpu_use": cpus,
        "scaling_reference_seconds": reference,
        "scaling_reference_cpu_use": reference_cpus,
        "scaling_reference_2_vs_1": round(reference_ratio, 2),
        "scaling_vs_reference": round(job_ratio / reference_ratio, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", choices=MASTERS, required=True)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--warmup-topic", required=True)
    parser.add_argument("--records", type=int, required=True, help="records in the warm-up topic")
    parser.add_argument("--rounds", type=int, default=1, help="timed runs after the warm-up")
    parser.add_argument("--reference", action="store_true", help="Spark's reference query instead of the job")
    args = parser.parse_args()
    print(json.dumps(_child(args.master, args.bootstrap, args.topic, args.warmup_topic, args.records, args.rounds,
                            reference=args.reference)))


if __name__ == "__main__":
    main()

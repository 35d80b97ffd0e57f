"""Scaling: the same job on the same workload with one core and with two (``scaling_2_vs_1``).

Each master runs in its own process (Spark fixes the master when it starts): warm-up runs of the job
on the warm-up topic (the workload itself) until the JIT has seen ``bench.harness.JOB_WARMUP_RECORDS``,
then ``ctx.rounds`` timed available-now runs on the workload topic, fresh checkpoint and output topics
each time. The figure is the median records/s at ``local[2]`` over that at ``local[1]``. Beside it,
``bench.cpu_use`` says who used the CPUs during the median run: ``local[1]`` has one task thread, but
the JIT, the collector and the broker run on the second core meanwhile (docs/benchmarks.md, "where
local[1] gets its second core").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench import cpu_use
from bench.harness import BenchContext, job_warmup_runs, median_of

__all__ = ["measure"]

MASTERS = ("local[1]", "local[2]")
KEY_ENV = "CONFIGWATCH_FINGERPRINT_KEY"  # the child's key: in its environment, never on its command line


def _run_once(master: str, bootstrap: str, topic: str, work: Path) -> tuple[float, dict[str, Any]]:
    from configwatch.secrets import SecretStr
    from configwatch.settings import Settings
    from streaming.job import JobOptions, StreamingJob

    suffix = uuid.uuid4().hex[:8]
    settings = Settings(bootstrap_servers=bootstrap, checkpoint_dir=work / f"ckpt-{suffix}", input_topic=topic,
                        sink="kafka", alerts_topic=f"bench-scale-alerts-{suffix}",
                        quarantine_topic=f"bench-scale-quarantine-{suffix}",
                        gauges_topic=f"bench-scale-gauges-{suffix}",
                        trigger="available-now", starting_offsets="earliest",
                        fingerprint_key=SecretStr(os.environ[KEY_ENV]),
                        spark_master=master)
    job = StreamingJob(settings, JobOptions.from_settings(settings), bootstrap, out=lambda _: None)
    output = job.prepare()  # the output topics, before the clock
    before = cpu_use.sample()
    started = time.perf_counter()
    job.start(output)
    job.wait()
    seconds = time.perf_counter() - started
    return seconds, cpu_use.use(before, cpu_use.sample(), seconds)


def _child(master: str, bootstrap: str, topic: str, warmup_topic: str, records: int, rounds: int
           ) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        for _ in range(job_warmup_runs(records)):
            _run_once(master, bootstrap, warmup_topic, Path(tmp))
        runs = [_run_once(master, bootstrap, topic, Path(tmp)) for _ in range(rounds)]
    return {"master": master, "seconds": [round(s, 2) for s, _ in runs], "cpu_use": [c for _, c in runs]}


def measure(ctx: BenchContext) -> dict[str, Any]:
    """Both masters, one process each, one after the other."""
    seconds: dict[str, float] = {}
    runs: dict[str, list[float]] = {}
    cpus: dict[str, Any] = {}
    for master in MASTERS:
        done = subprocess.run([sys.executable, "-m", "bench.fig_scaling", "--master", master, "--bootstrap",
                               ctx.bootstrap, "--topic", ctx.topic, "--warmup-topic", ctx.warmup_topic,
                               "--records", str(ctx.records), "--rounds", str(ctx.rounds)],
                              capture_output=True, text=True, check=True,
                              env={**os.environ, KEY_ENV: ctx.fingerprint_key.get_secret_value()})
        child = json.loads(done.stdout.strip().splitlines()[-1])
        runs[master] = [float(s) for s in child["seconds"]]
        seconds[master] = median_of(runs[master])
        # the CPU use of the run nearest the median
        cpus[master] = min(zip(runs[master], child["cpu_use"], strict=True),
                           key=lambda run: abs(run[0] - seconds[master]))[1]
    rates = {m: ctx.records / s for m, s in seconds.items()}
    return {
        "scaling_seconds": seconds,
        "scaling_runs_seconds": runs,
        "scaling_records_per_s": {m: round(r) for m, r in rates.items()},
        "scaling_2_vs_1": round(rates["local[2]"] / rates["local[1]"], 2),
        "scaling_cpu_use": cpus,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", choices=MASTERS, required=True)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--warmup-topic", required=True)
    parser.add_argument("--records", type=int, required=True, help="records in the warm-up topic")
    parser.add_argument("--rounds", type=int, default=1, help="timed runs after the warm-up")
    args = parser.parse_args()
    print(json.dumps(_child(args.master, args.bootstrap, args.topic, args.warmup_topic, args.records, args.rounds)))


if __name__ == "__main__":
    main()

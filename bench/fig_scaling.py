"""Scaling: the same job on the same workload with one core and with two (``scaling_2_vs_1``).

Spark fixes the master when it starts, so each master runs in a child process of its own, and the
job's children and those of the reference (below) are all started first: one at a time, each does
warm-up runs on the warm-up topic (the workload itself) until the JIT has seen
``bench.harness.JOB_WARMUP_RECORDS``, then a hundred small batches (``bench.harness.job_warmup_bounds``),
and waits. After one untimed run each (their first run after waiting), the timed runs go round by
round, one child at a time, the order reversed every other round (``run_order``), so the machine's
drift over the figure's minutes reaches every master alike: the job's rate moved by a quarter between
processes started minutes apart (measured 2026-11-29; git log docs/benchmarks.md).
Each timed run is available-now over the workload topic, fresh checkpoint and output topics each time.
The figure is the median records/s at ``local[2]`` over that at ``local[1]``. Beside it,
``bench.cpu_use`` says who used the CPUs during the median run: ``local[1]`` has one task thread, but
the JIT, the collector and the broker run on the second core meanwhile (measured
2026-11-29; git log docs/benchmarks.md); the waiting children's JVMs count as ``other``.

The reference (``scaling_reference_2_vs_1``) is the same measurement of Spark's own query of the job's
shape (``bench.scaling_reference``), in children of its own, interleaved with the job's: what this
machine gives any Spark query like it. ``scaling_vs_reference`` is the job's ratio over the reference's.
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

__all__ = ["measure", "run_order"]

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


_REPLY = "@@bench-scaling "  # begins each answer on the child's reply stream (see _child)


def _child(master: str, bootstrap: str, topic: str, warmup_topic: str, records: int, *,
           reference: bool = False) -> None:
    """Answer the parent's commands on stdin: ``warm`` (every warm-up run), ``run`` (one timed run), ``quit``."""
    run_once = _reference_once if reference else _run_once
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything else on stdout (the JVM started later inherits it) to stderr: a full pipe would stall it
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        for line in sys.stdin:
            command = line.strip()
            if command == "warm":
                for bound in job_warmup_bounds(records):
                    run_once(master, bootstrap, warmup_topic, Path(tmp), bound)
                answer: dict[str, Any] = {"warm": True}
            elif command == "run":
                seconds, cpu = run_once(master, bootstrap, topic, Path(tmp))
                answer = {"seconds": round(seconds, 2), "cpu_use": cpu}
            else:
                return
            print(_REPLY + json.dumps(answer), file=replies, flush=True)


class _Child:
    """One child process at one master (the job's or the reference's), driven by commands."""

    def __init__(self, ctx: BenchContext, master: str, *, reference: bool) -> None:
        self.master, self.reference = master, reference
        self.log = ctx.scratch("scaling-logs") / f"{'reference' if reference else 'job'}-{master}.log"
        self.seconds: list[float] = []
        self.cpu: list[dict[str, Any]] = []
        with self.log.open("w") as err:  # the child's stderr (Spark's own log) to a file: a pipe could fill
            self.process = subprocess.Popen(
                [sys.executable, "-m", "bench.fig_scaling", "--master", master, "--bootstrap", ctx.bootstrap,
                 "--topic", ctx.topic, "--warmup-topic", ctx.warmup_topic, "--records", str(ctx.records),
                 *(["--reference"] if reference else [])],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                env={**os.environ, KEY_ENV: ctx.fingerprint_key.get_secret_value()})

    def ask(self, command: str) -> dict[str, Any]:
        """Send ``command``; the child's answer, or RuntimeError with the end of its log if it ended."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        for line in self.process.stdout:
            if line.startswith(_REPLY):
                return dict(json.loads(line[len(_REPLY):]))
        tail = self.log.read_text(errors="replace").strip().splitlines()[-1:]
        raise RuntimeError(f"scaling child at {self.master} ended (exit {self.process.wait()}): "
                           f"{tail[0] if tail else 'no output'}")

    def run(self) -> None:
        answer = self.ask("run")
        self.seconds.append(float(answer["seconds"]))
        self.cpu.append(answer["cpu_use"])

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.write("quit\n")
                self.process.stdin.close()
                self.process.wait(timeout=120)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()


def run_order(children: int, rounds: int) -> list[int]:
    """The children's timed runs, round by round: in order, then reversed (A B C D, D C B A, ...)."""
    order: list[int] = []
    for r in range(rounds):
        order.extend(range(children) if r % 2 == 0 else reversed(range(children)))
    return order


def _median_run(seconds: list[float], cpu: list[dict[str, Any]]) -> tuple[float, dict[str, Any]]:
    """The median of ``seconds``, and the CPU use of the run nearest it."""
    median = median_of(seconds)
    return median, min(zip(seconds, cpu, strict=True), key=lambda run: abs(run[0] - median))[1]


def measure(ctx: BenchContext) -> dict[str, Any]:
    """Both masters, the job's and the reference's: warm-ups one child at a time, then the timed runs interleaved."""
    children: list[_Child] = []
    try:
        for master in MASTERS:
            for of_reference in (False, True):
                children.append(_Child(ctx, master, reference=of_reference))
                children[-1].ask("warm")  # one warm-up at a time: the others wait, started or not
        for i in run_order(len(children), 1):  # untimed: each child's first run after waiting for the others
            children[i].ask("run")
        for i in run_order(len(children), ctx.rounds):
            children[i].run()
    finally:
        for child in children:
            child.close()
    job = {c.master: c for c in children if not c.reference}
    ref = {c.master: c for c in children if c.reference}
    seconds: dict[str, float] = {}
    cpus: dict[str, Any] = {}
    reference: dict[str, float] = {}
    reference_cpus: dict[str, Any] = {}
    for master in MASTERS:
        seconds[master], cpus[master] = _median_run(job[master].seconds, job[master].cpu)
        reference[master], reference_cpus[master] = _median_run(ref[master].seconds, ref[master].cpu)
    rates = {m: ctx.records / s for m, s in seconds.items()}
    job_ratio = rates["local[2]"] / rates["local[1]"]
    reference_ratio = reference["local[1]"] / reference["local[2]"]
    return {
        "scaling_seconds": seconds,
        "scaling_runs_seconds": {m: c.seconds for m, c in job.items()},
        "scaling_records_per_s": {m: round(r) for m, r in rates.items()},
        "scaling_2_vs_1": round(job_ratio, 2),
        "scaling_cpu_use": cpus,
        "scaling_reference_seconds": reference,
        "scaling_reference_runs_seconds": {m: c.seconds for m, c in ref.items()},
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
    parser.add_argument("--reference", action="store_true", help="Spark's reference query instead of the job")
    args = parser.parse_args()
    _child(args.master, args.bootstrap, args.topic, args.warmup_topic, args.records, reference=args.reference)


if __name__ == "__main__":
    main()

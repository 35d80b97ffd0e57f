"""The job's options, read from ``Settings``: where records come from, where outputs go, how to trigger.

``--source kafka | files:DIR`` and ``--sink kafka | files:DIR`` are parsed and
checked here, before anything starts, so a mistake is one clear line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from configwatch.contract import OUTPUT_KINDS
from configwatch.paths import cache_dir
from configwatch.settings import Settings
from sinks.exceptions import SinkTargetError
from sinks.registry import OutputTarget, parse_output
from streaming.job.exceptions import JobUsageError

__all__ = ["JobOptions", "Target", "parse_target"]

KAFKA = "kafka"
FILES = "files"
_INTERVAL = re.compile(r"^\s*\d+\s*(millisecond|second|minute|hour)s?\s*$")


@dataclass(frozen=True)
class Target:
    """A parsed ``--source`` value: ``kafka``, or ``files`` with its directory."""

    kind: str
    directory: Path | None = None

    def __str__(self) -> str:
        return KAFKA if self.kind == KAFKA else f"{FILES}:{self.directory}"


def parse_target(flag: str, value: str) -> Target:
    """Parse ``kafka`` or ``files:DIR``; raise JobUsageError naming the flag otherwise."""
    text = value.strip()
    if text == KAFKA:
        return Target(KAFKA)
    if text.startswith(FILES + ":") and text[len(FILES) + 1:].strip():
        return Target(FILES, Path(text[len(FILES) + 1:].strip()).expanduser().resolve())
    raise JobUsageError(f"{flag}: expected 'kafka' or 'files:DIR', got {value!r}")


@dataclass(frozen=True)
class JobOptions:
    """Everything ``streaming.job.runner`` needs beyond the Spark session settings."""

    source: Target
    sink: OutputTarget
    available_now: bool
    trigger_interval: str
    checkpoint_root: Path
    input_topic: str
    topics: dict[str, str]  # output kind -> topic
    starting_offsets: str
    max_offsets_per_trigger: int | None
    max_files_per_trigger: int | None
    expectations: bool
    connect_timeout_s: float
    kinds: tuple[str, ...] = OUTPUT_KINDS  # the outputs the job computes and writes (--outputs)
    checkpoint_uri: str | None = None  # a Hadoop URI root (cluster); wins over checkpoint_root

    def checkpoint_for(self, query: str) -> str:
        """Where ``query`` keeps its checkpoint: ``<root>/<query>``."""
        if self.checkpoint_uri:
            return f"{self.checkpoint_uri.rstrip('/')}/{query}"
        return str(self.checkpoint_root / query)

    @property
    def spark_log(self) -> Path:
        """Where Spark's own output goes: ``<checkpoint root>/spark.log``, else the cache's ``logs/``."""
        if self.checkpoint_uri:
            return cache_dir() / "logs" / "spark.log"
        return self.checkpoint_root / "spark.log"

    @property
    def needs_kafka(self) -> bool:
        return self.source.kind == KAFKA or self.sink.needs_kafka

    @classmethod
    def from_settings(cls, settings: Settings) -> JobOptions:
        source = parse_target("--source", settings.source)
        try:
            sink = parse_output(settings.sink)
        except SinkTargetError as exc:
            raise JobUsageError(f"--sink: {exc}") from None
        if source.kind == FILES:
            assert source.directory is not None
            if not source.directory.is_dir():
                what = "not a directory" if source.directory.exists() else "the directory does not exist"
                raise JobUsageError(f"--source files:{source.directory}: {what}")
        if settings.checkpoint_uri is not None:
            if not urlsplit(settings.checkpoint_uri).scheme:
                raise JobUsageError(f"--checkpoint-uri: {settings.checkpoint_uri!r} is no URI (hdfs://..., s3a://..., "
                                    "file:///...); a local directory is --checkpoint-dir")
        elif Path(settings.checkpoint_dir).exists() and not Path(settings.checkpoint_dir).is_dir():
            raise JobUsageError(f"--checkpoint-dir {settings.checkpoint_dir}: not a directory")
        if settings.connection_ttl is not None and settings.trigger == "available-now":
            # Spark 4.0 follows every batch of a processing-time stateful processor with a
            # no-data batch, so an available-now run holding a lease timer would never end.
            raise JobUsageError("--connection-ttl needs --trigger continuous (the lease runs on processing-time "
                                "timers, which never let an available-now run finish)")
        if not _INTERVAL.match(settings.trigger_interval):
            raise JobUsageError(f"--trigger-interval: expected e.g. '500 milliseconds' or '2 seconds', "
                                f"got {settings.trigger_interval!r}")
        kinds: tuple[str, ...] = OUTPUT_KINDS
        if settings.outputs:
            kinds = tuple(dict.fromkeys(n.strip() for n in settings.outputs.split(",") if n.strip()))
            unknown = [k for k in kinds if k not in OUTPUT_KINDS]
            if unknown or not kinds:
                what = f"{', '.join(unknown)} not available" if unknown else "names no output"
                raise JobUsageError(f"--outputs: {what} (available: {', '.join(OUTPUT_KINDS)})")
        return cls(
            source=source,
            sink=sink,
            available_now=settings.trigger == "available-now",
            trigger_interval=settings.trigger_interval,
            checkpoint_root=Path(settings.checkpoint_dir),
            input_topic=settings.input_topic,
            topics={"alerts": settings.alerts_topic, "quarantine": settings.quarantine_topic,
                    "gauges": settings.gauges_topic, "usage": settings.usage_topic},
            starting_offsets=settings.starting_offsets,
            max_offsets_per_trigger=settings.max_offsets_per_trigger,
            max_files_per_trigger=settings.max_files_per_trigger,
            expectations=settings.expectations,
            connect_timeout_s=settings.connect_timeout_s,
            kinds=kinds,
            checkpoint_uri=settings.checkpoint_uri,
        )

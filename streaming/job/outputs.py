"""The job's output streams: what each one computes from the decoded stream, and how rows become records.

This is the plug-in point. Every :class:`OutputStream` becomes its own
streaming query (name = query name = checkpoint subdirectory
``<checkpoint root>/<name>``), fed from the same source and decode stage, and
written through the sink of its ``kind`` (topic or ``DIR/<kind>/``):

- ``quarantine`` (here): invalid rows -> contract quarantine records;
- ``alerts``: ``streaming.detection.findings(valid, settings) -> DataFrame`` of
  contract Findings columns (issue 5); with ``--webhook-url`` its sink also feeds
  the webhook, best effort, after the durable copy (``sinks.fanout``);
- ``gauges``: ``streaming.gauges.gauge_stream(valid, settings) -> DataFrame`` of
  contract Gauge columns, stateful, output mode ``streaming.gauges.OUTPUT_MODE``,
  records from ``streaming.gauges.gauge_sink_record`` (issue 6).

To add or change a stream, edit :func:`default_outputs`; ``--outputs`` picks a subset.
"""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from configwatch.settings import Settings
from sinks.base import Sink, SinkRecord
from streaming.job.exceptions import JobUsageError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "ALERTS",
    "GAUGES",
    "KINDS",
    "QUARANTINE",
    "Decoded",
    "OutputStream",
    "alert_record",
    "default_outputs",
    "gauge_record",
    "quarantine_record",
    "quarantine_rows",
    "source_key",
]

log = logging.getLogger(__name__)

ALERTS = "alerts"
QUARANTINE = "quarantine"
GAUGES = "gauges"
KINDS = (ALERTS, QUARANTINE, GAUGES)


@dataclass(frozen=True)
class Decoded:
    """What a builder gets: the decoded stream split by verdict, and the settings.

    ``valid``: one row per valid record, the contract's event fields and
    ``configs`` (see ``udfs.schema``), ``size_bytes`` and the source coordinates
    (Kafka: ``topic``, ``partition``, ``offset``, ``timestamp``; files: ``file``,
    ``line``). ``invalid``: one row per quarantined record with ``reason``,
    ``detail``, ``size_bytes`` and the coordinates (event fields null).
    """

    valid: DataFrame
    invalid: DataFrame
    settings: Settings


Builder = Callable[[Decoded], "DataFrame"]
ToRecord = Callable[[Mapping[str, Any]], SinkRecord]


@dataclass(frozen=True)
class OutputStream:
    """One output: its query name, the sink stream it writes, how to build its rows and records.

    ``counts_as`` names the output in progress lines (``findings``,
    ``quarantined``, ``gauge updates``). ``sink`` overrides where it goes
    (e.g. a webhook for alerts, as an extra stream next to the Kafka one).
    """

    name: str
    kind: str
    build: Builder
    to_record: ToRecord
    counts_as: str
    output_mode: str = "append"
    spark_conf: Mapping[str, str] = field(default_factory=dict)  # SQL settings for this query only (at start)
    sink: Sink | None = None  # None: the ``--sink`` destination of ``kind``


def source_key(source: Mapping[str, Any]) -> str:
    """A stable text form of source coordinates: ``topic/partition/offset`` or ``file:line``."""
    if source.get("file") is not None:
        return f"{source['file']}:{source['line']}"
    return f"{source.get('topic')}/{source.get('partition')}/{source.get('offset')}"


def quarantine_rows(invalid: DataFrame) -> DataFrame:
    """Contract quarantine columns (section 2) from invalid decoded rows; never the payload."""
    from pyspark.sql import functions as F

    if "file" in invalid.columns:
        source = F.struct(F.col("file"), F.col("line"))
    else:
        source = F.struct(F.col("topic"), F.col("partition"), F.col("offset"))
    return invalid.select(
        F.lit(1).alias("schema_version"),
        F.col("reason"),
        F.col("detail"),
        source.alias("source"),
        F.col("size_bytes"),
        F.unix_millis(F.current_timestamp()).alias("quarantined_at_ms"),
    )


def quarantine_record(row: Mapping[str, Any]) -> SinkRecord:
    return SinkRecord(key=source_key(row["source"]), value=dict(row))


def alert_record(row: Mapping[str, Any]) -> SinkRecord:
    """Key ``alert_id``; an ``evidence`` given as JSON text is embedded as the object it holds."""
    value = dict(row)
    if isinstance(value.get("evidence"), str):
        value["evidence"] = json.loads(value["evidence"])
    return SinkRecord(key=str(value["alert_id"]), value=value)


def gauge_record(row: Mapping[str, Any]) -> SinkRecord:
    """Key ``<name>/<version>``; ``removed`` rows are tombstones (null value on Kafka)."""
    value = dict(row)
    key = f"{value['client_software_name']}/{value['client_software_version']}"
    return SinkRecord(key=key, value=value, tombstone=bool(value.get("removed")))


def _optional(module: str) -> ModuleType | None:
    """The module when it exists (a teammate's stream not merged yet: None)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        return None


def default_outputs(names: Sequence[str] | None = None) -> list[OutputStream]:
    """Quarantine always; alerts and gauges when their modules are installed. ``names`` picks a subset."""
    outputs = [OutputStream(QUARANTINE, QUARANTINE, lambda d: quarantine_rows(d.invalid), quarantine_record,
                            counts_as="quarantined")]
    detection = _optional("streaming.detection")
    if detection is not None:
        findings = detection.findings
        outputs.append(OutputStream(ALERTS, ALERTS, lambda d: findings(d.valid, d.settings), alert_record,
                                    counts_as="findings"))
    gauges = _optional("streaming.gauges")
    if gauges is not None:
        gauge_stream = gauges.gauge_stream
        outputs.append(OutputStream(GAUGES, GAUGES, lambda d: gauge_stream(d.valid, d.settings),
                                    gauges.gauge_sink_record, counts_as="gauge updates",
                                    output_mode=gauges.OUTPUT_MODE, spark_conf=gauges.SPARK_CONF))
    available = [o.name for o in outputs]
    if names is None:
        missing = [k for k in KINDS if k not in available]
        if missing:
            log.warning("no %s query: its module is not installed", " or ".join(missing))
        return outputs
    unknown = [n for n in names if n not in available]
    if unknown:
        raise JobUsageError(f"--outputs: {', '.join(unknown)} not available (available: {', '.join(available)})")
    return [o for o in outputs if o.name in names]

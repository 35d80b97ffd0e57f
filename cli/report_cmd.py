"""Reports from what the streaming job keeps.

  configwatch report upgrade --target 4.0          which clients break on a 4.0 broker (a table)
  configwatch report upgrade --target 4.0 --json   the same as JSON
  configwatch report security [--json]             weak security posture per client version and principal

``upgrade`` reads the compacted usage topic (``--usage-topic``, the job's per-version request
versions, written when the gateway runs in proxy mode) to its end and judges each
client software name and version against the target broker release from the
request versions its connections really sent (docs/upgrade.md). Exit code 0, or
3 with ``--fail-if-not-ready`` when a client is not ready.

``security`` reads the alerts topic (``--alerts-topic``) to its end and lists the
``security_posture`` findings (docs/rules.md) per software name, version and principal,
most severe first. Exit code 0, or 3 with ``--fail-if-not-ready`` when any is critical
or high.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING

from configwatch.errors import ConfigwatchError, UsageError
from configwatch.localkafka import running_bootstrap
from configwatch.records import Finding, VersionUsage
from configwatch.settings import Settings
from udfs.upgrade.readiness import ClientReadiness, UpgradeReadiness, check_readiness
from udfs.upgrade.releases import UnknownReleaseError, broker_release, broker_releases
from udfs.upgrade.usage import usage_from_records

if TYPE_CHECKING:
    from udfs.rules.posture_report import PostureRow

__all__ = ["add_arguments", "read_topic", "read_usage", "render_security", "render_table", "run"]

_READ_TIMEOUT_S = 30.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("report", choices=("upgrade", "security"), help="which report")
    parser.add_argument("--target",
                        help=f"upgrade: the broker release to judge against ({', '.join(broker_releases())})")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--fail-if-not-ready", action="store_true",
                        help="exit 3 when a client is not ready (upgrade) or shows a critical or high posture "
                             "(security)")


def read_usage(bootstrap_servers: str, topic: str, timeout_s: float = _READ_TIMEOUT_S) -> list[VersionUsage]:
    """The latest usage record per key on the compacted ``topic``, read from its start to its end now."""
    latest: dict[bytes, bytes | None] = {}
    for key, value in read_topic(bootstrap_servers, topic, "has the job run with a gateway in proxy mode "
                                 "(docs/upgrade.md)?", timeout_s):
        if key is not None:
            latest[key] = value
    return [VersionUsage.from_json(value) for value in latest.values() if value is not None]


def read_topic(bootstrap_servers: str, topic: str, hint: str, timeout_s: float = _READ_TIMEOUT_S
               ) -> list[tuple[bytes | None, bytes | None]]:
    """Every record (key, value) of ``topic``, read from its start to its end now; ``hint`` says why it may be
    missing."""
    from kafka import KafkaConsumer, TopicPartition  # the client loads only when a report reads
    from kafka.errors import KafkaError

    try:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap_servers, enable_auto_commit=False,
                                 client_id="configwatch-report", bootstrap_timeout_ms=int(timeout_s * 1000))
    except KafkaError as exc:
        raise ConfigwatchError(f"cannot read {topic!r}: no Kafka broker answered at {bootstrap_servers} "
                               f"({type(exc).__name__})") from exc
    try:
        partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            raise ConfigwatchError(f"no topic {topic!r} at {bootstrap_servers}: {hint}")
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        end = consumer.end_offsets(tps)
        out: list[tuple[bytes | None, bytes | None]] = []
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < end[tp] for tp in tps):
            if time.monotonic() > deadline:
                raise ConfigwatchError(f"reading {topic!r} did not reach its end within {timeout_s:.0f} s")
            for records in consumer.poll(timeout_ms=500).values():
                out.extend((record.key, record.value) for record in records)
    finally:
        consumer.close()
    return out


def render_security(rows: list[PostureRow]) -> str:
    """The security report as a terminal table, most severe first."""
    head = (f"Security posture through the gateway: {len(rows)} weak posture(s) across "
            f"{len({(r.client_software_name, r.client_software_version) for r in rows})} client version(s)")
    table = [("SEVERITY", "RULE", "CLIENT", "VERSION", "PRINCIPAL", "CONNECTIONS", "CLIENTS")]
    table += [(r.severity, r.rule, r.client_software_name, r.client_software_version, r.principal,
               str(r.connections), str(r.clients)) for r in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = [head, ""] + ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)) for r in table]
    return "\n".join(line.rstrip() for line in lines)


def _security(settings: Settings, args: argparse.Namespace) -> int:
    from udfs.rules.posture_report import weak_posture  # the rule catalog loads only for this report

    records = read_topic(running_bootstrap(settings), settings.alerts_topic, "has the streaming job run?")
    rows = weak_posture(Finding.from_json(value) for _key, value in records if value is not None)
    print(json.dumps([r.to_dict() for r in rows], indent=2) if args.json else render_security(rows))
    return 3 if args.fail_if_not_ready and any(r.severity in ("critical", "high") for r in rows) else 0


def _offending(client: ClientReadiness) -> str:
    return ", ".join(r.describe() for r in client.offending)


def render_table(report: UpgradeReadiness) -> str:
    """The report as a terminal table, not-ready clients first."""
    head = (f"Upgrade readiness for Apache Kafka {report.target} brokers (request versions from "
            f"kafka-clients {report.kafka_clients}): {len(report.not_ready)} of {len(report.clients)} client "
            "versions not ready")
    rows = [("STATUS", "CLIENT", "VERSION", "CONNECTIONS", "INSTANCES", "OFFENDING REQUESTS")]
    for c in report.clients:
        who = c.client_software_name if c.client_id is None and c.principal is None else \
            f"{c.client_software_name} (client.id {c.client_id or '-'}, {c.principal or '-'})"
        rows.append((c.status.replace("_", " ") + ("" if c.complete else " (partial)"), who,
                     c.client_software_version, str(c.connections), str(len(c.client_instance_ids)), _offending(c)))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = [head, ""] + ["  ".join(cell.ljust(w) for cell, w in zip(r[:5], widths, strict=True)) + "  " + r[5]
                          for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def run(settings: Settings, args: argparse.Namespace) -> int:
    if args.report == "security":
        if args.target is not None:
            raise UsageError("--target applies to the upgrade report")
        return _security(settings, args)
    if args.target is None:
        raise UsageError(f"report upgrade needs --target, the broker release ({', '.join(broker_releases())})")
    try:
        target = broker_release(args.target)  # an unknown release fails before anything is read
    except UnknownReleaseError as exc:
        raise UsageError(f"--target: {exc}") from None
    report = check_readiness(usage_from_records(read_usage(running_bootstrap(settings), settings.usage_topic)),
                             target)
    print(json.dumps(report.to_dict(), indent=2) if args.json else render_table(report))
    return 3 if args.fail_if_not_ready and report.not_ready else 0

"""Alerts per 1,000 client instances on the bench workload (issue 13's "one alert per problem").

Usage (from the repository root)::

    .venv/bin/python -m bench.alert_rate [--clients 3000] [--seed 5] [--write-events F | --events F]

The workload is the bench's simulated fleet as the gateway publishes it
(``policy.simulator.fleet_events``: edge redaction applied). Its ``config_push``
events run through the job's detection (``udfs.rules.detect.detect_with_state``,
stateless and stateful rules) in micro-batches of ``--batch`` pushes, state
threaded through as the job does. An alert is a distinct ``alert_id`` (the sinks
key alerts by it, so a repeated finding is one alert). ``--write-events`` saves
the events as JSON lines and ``--events`` reads them back, so two versions of the
detection code can be compared on the same input (``docs/benchmarks.md``).
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from configwatch.records import Event
from configwatch.secrets import SecretStr
from udfs.rules.batch import CONFIGS_TYPE
from udfs.rules.stateful import detect_with_state

KEY = SecretStr("bench-alert-rate")
NOW_MS = 1_790_000_000_000
_CONTEXT = ("client_instance_id", "client_software_name", "client_software_version", "client_id", "principal",
            "client_address", "connection_id", "timestamp_ms")


def _events(args: argparse.Namespace) -> list[Event]:
    if args.events:
        return [Event.from_json(line) for line in Path(args.events).read_text().splitlines() if line]
    from policy.simulator import FleetSpec, fleet_events, generate_fleet

    events = list(fleet_events(generate_fleet(FleetSpec(clients=args.clients, seed=args.seed)), KEY,
                               start_ms=NOW_MS - 3_600_000))
    if args.write_events:
        Path(args.write_events).write_text("".join(e.to_json() + "\n" for e in events))
    return events


def _table(pushes: list[Event]) -> pa.Table:
    columns: dict[str, Any] = {name: pa.array([getattr(p, name) for p in pushes]) for name in _CONTEXT}
    columns["configs"] = pa.array([[{"key": c.key, "value": c.value, "type": c.type, "is_default": c.is_default,
                                     "redacted": c.redacted, "fingerprint": c.fingerprint}
                                    for c in p.configs or ()] for p in pushes], CONFIGS_TYPE)
    return pa.table(columns)


def measure(events: list[Event], batch: int) -> dict[str, Any]:
    """Alerts, per rule and kind, and alerts per 1,000 pushing client instances."""
    pushes = [e for e in events if e.event == "config_push"]
    alerts: dict[str, tuple[str, str]] = {}
    state = None
    for start in range(0, len(pushes), batch):
        found, state = detect_with_state(_table(pushes[start:start + batch]), KEY, NOW_MS, state)
        for alert_id, kind, rule in zip(*(found.column(c).to_pylist() for c in ("alert_id", "kind", "rule")),
                                        strict=True):
            alerts[alert_id] = (kind, rule)
    instances = len({p.client_instance_id or p.connection_id for p in pushes})
    by_kind = collections.Counter(kind for kind, _ in alerts.values())
    by_rule = collections.Counter(rule for _, rule in alerts.values())
    return {"pushing_instances": instances, "alerts": len(alerts),
            "alerts_per_1000_instances": round(1000 * len(alerts) / max(1, instances), 1),
            "by_kind": dict(by_kind.most_common()), "by_rule": dict(by_rule.most_common())}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.alert_rate", description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--batch", type=int, default=1000, help="pushes per micro-batch")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--events", help="read the events from this JSON-lines file")
    source.add_argument("--write-events", help="also write the generated events to this file")
    args = parser.parse_args()
    print(json.dumps(measure(_events(args), args.batch), indent=1))


if __name__ == "__main__":
    main()

"""Judging config pushes for the dashboard's drill-down: one record at a time, or one poll batch at once.

``sinks.dashboard.redact.safe_views`` runs the shared rules (KIP rules, custom
keys, secret scan) vectorized over a list of records. The consumer can call it
per record or once per poll batch; this measures both on the simulator's fleet
(unredacted pushes, so the secret scan has work to do).

    .venv/bin/python -m bench.dashboard_judge [--clients 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from configwatch.contract import CONFIG_PUSH
from configwatch.secrets import SecretStr
from policy.simulator.fleet import FleetSpec, fleet_events, generate_fleet
from sinks.dashboard.redact import safe_views

KEY = SecretStr("bench-key")


def _pushes(clients: int) -> list[bytes]:
    fleet = generate_fleet(FleetSpec(clients=clients, seed=11))
    return [e.to_json().encode() for e in fleet_events(fleet, KEY, redact_sensitive=False) if e.event == CONFIG_PUSH]


def _time(raws: list[bytes], batch: int, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for i in range(0, len(raws), batch):
            safe_views(raws[i:i + batch], KEY)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    raws = _pushes(args.clients)
    entries = sum(r.count(b'"key"') for r in raws)
    safe_views(raws[:50], KEY)  # warm up imports and regex compilation
    print(f"{len(raws)} pushes, {entries} entries, {sum(map(len, raws)) / 1e6:.1f} MB")
    print(f"{'batch':>8} {'seconds':>9} {'pushes/s':>10} {'us/push':>8}")
    for batch in (1, 50, 500, 5000):
        t = _time(raws, batch, args.repeat)
        print(f"{batch:>8} {t:>9.3f} {len(raws) / t:>10.0f} {1e6 * t / len(raws):>8.0f}")


if __name__ == "__main__":
    main()

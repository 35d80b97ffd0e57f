"""Decoded ``config_push`` rows for the JVM twins' tests: realistic fleets, raw and behind the edge.

Each row is a dict with the columns ``udfs.decode`` gives a push (``CONTEXT_COLUMNS`` and
``configs``, a list of entry dicts), so it serves both sides: Python builds an Arrow table of it
(:func:`table`), the Java probes read it as one JSON line.

- :func:`simulator_pushes`: the fleet simulator's pushes as the gateway publishes them (the bench's
  workload, decoded);
- :func:`eval_pushes`: the evaluation fleet (``tests.eval``), ``raw`` (what clients send) or
  ``edge`` (after the policy's redaction and identity masking), shuffled as the evaluation runs it.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pyarrow as pa

from configwatch.contract import CONFIG_PUSH
from configwatch.secrets import SecretStr
from udfs.rules.batch import CONFIGS_TYPE, CONTEXT_COLUMNS

__all__ = ["KEY", "eval_pushes", "simulator_pushes", "table"]

KEY = SecretStr("jvm-probe-key")  # tests.jvmprobe.PROBE_KEY: both sides hash under the same key


def table(rows: list[dict[str, Any]]) -> pa.Table:
    """The rows as the decoded Arrow table the Python rules read."""
    columns: dict[str, pa.Array] = {
        name: pa.array([r.get(name) for r in rows], pa.int64() if name == "timestamp_ms" else pa.string())
        for name in CONTEXT_COLUMNS}
    columns["configs"] = pa.array([r["configs"] for r in rows], CONFIGS_TYPE)
    return pa.table(columns)


def simulator_pushes(n: int, seed: int = 5) -> list[dict[str, Any]]:
    """About ``n`` pushes of the simulated fleet, decoded from the records the gateway publishes."""
    from bench.workload import workload_records
    from udfs.decode import decode_values

    values = [r.value for r in workload_records(n * 4, KEY, seed=seed, base_clients=max(50, n))
              if r.event == CONFIG_PUSH][:n]
    decoded, _ = decode_values(pa.array(values, pa.binary()))
    rows = []
    for row in decoded.to_pylist():
        if row["reason"] is None:
            rows.append({**{c: row.get(c) for c in CONTEXT_COLUMNS}, "configs": row["configs"]})
    return rows


def eval_pushes(size: int, seed: int, mode: str = "raw") -> list[dict[str, Any]]:
    """The evaluation fleet's pushes (``mode``: raw or edge), in the evaluation's shuffled order."""
    from tests.eval.fleet import build_fleet
    from tests.eval.score import START_MS, _row

    fleet = build_fleet(seed, size)
    order = list(range(len(fleet.clients)))
    random.Random(seed).shuffle(order)
    return [json.loads(json.dumps(_row(fleet.clients[i], mode, START_MS + i))) for i in order]

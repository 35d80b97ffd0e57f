"""The scaling figure's reference query (``bench.scaling_reference``) on the real broker and Spark.

Its totals per config key and type are checked against the workload's pushes counted in Python, over
several micro-batches (a small batch bound), so the stateful aggregation carries its totals across them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.report import render
from bench.scaling_reference import DIGEST_MARK, SECRET_LIKE, run_once
from bench.workload import workload_records
from configwatch.secrets import SecretStr
from sinks.kafka import ensure_topic
from tests.kafka_helpers import produce, read_all


def _expected(values: list[bytes]) -> dict[tuple[str, str], dict[str, int]]:
    totals: dict[tuple[str, str], Counter[str]] = {}
    for value in values:
        try:
            event = json.loads(value)
        except ValueError:
            continue
        configs = event.get("configs") if isinstance(event, dict) else None
        for entry in configs if isinstance(configs, list) else []:
            text = entry.get("value") or ""
            counts = totals.setdefault((entry["key"], entry["type"]), Counter())
            counts["entries"] += 1
            counts["secret_like"] += bool(re.search(SECRET_LIKE, text))
            counts["chars"] += len(text)
            counts["defaults"] += bool(entry["is_default"])
            digest = hashlib.sha256(f"{entry['key']}={text}".encode()).hexdigest()
            counts["digests_marked"] += digest.startswith(DIGEST_MARK)
    return {k: dict(v) for k, v in totals.items()}


@pytest.mark.kafka
@pytest.mark.spark
def test_the_reference_totals_every_push_entry_across_batches(spark: Any, kafka_bootstrap: str,
                                                              topic_name: Callable[[str], str], tmp_path: Path) -> None:
    source, out = topic_name("reference-in"), topic_name("reference-out")
    records = list(workload_records(300, SecretStr("reference-test"), base_clients=100))
    ensure_topic(kafka_bootstrap, source, partitions=2)
    ensure_topic(kafka_bootstrap, out, partitions=1)  # one partition: the last update of a key is its total
    produce(kafka_bootstrap, source, ((r.key, r.value) for r in records))

    seconds, cpu = run_once(spark, kafka_bootstrap, source, out, tmp_path / "ckpt", max_offsets_per_trigger=100)

    last: dict[tuple[str, str], dict[str, Any]] = {}
    for key, value, _, _ in read_all(kafka_bootstrap, out):
        row = json.loads(value or b"{}")
        assert key == row["config_key"].encode()
        last[(row["config_key"], row["config_type"])] = row
    got = {k: {n: row[n] for n in ("entries", "secret_like", "chars", "defaults", "digests_marked")}
           for k, row in last.items()}
    expected = _expected([r.value for r in records])
    assert expected and got == expected
    assert all(set(row) == {"config_key", "config_type", "entries", "secret_like", "chars", "defaults",
                            "digests_marked"} for row in last.values())  # counts only: no value, no digest
    assert seconds > 0 and cpu["task_cpu_s"] > 0


def test_the_report_shows_the_reference_beside_the_job() -> None:
    text = render({"parameters": {"records": 1000, "partitions": 4, "rounds": 1, "quick": True},
                   "machine": {"cores": 2, "memory_gib": 23.5, "cpu": "x", "spark": "4.0.0", "kafka_broker": "4",
                               "python": "3.11", "pyarrow": "26", "pandas": "2.3", "load_average_at_start": [0.5]},
                   "started_at": "now", "seconds": 10, "workload": {"bytes": 1}, "errors": {},
                   "scaling_2_vs_1": 1.59, "scaling_records_per_s": {"local[1]": 15_000, "local[2]": 23_850},
                   "scaling_reference_2_vs_1": 1.70, "scaling_vs_reference": 0.94})
    assert "| 8. scaling: the job at local[2] vs local[1] | 1.59x the rate" in text
    assert "1.70x the rate" in text and "the job's ratio 0.94x the reference's" in text

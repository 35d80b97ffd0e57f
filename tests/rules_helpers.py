"""Builders of decoded ``config_push`` batches for the rule tests (the columns ``udfs.decode`` produces)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pyarrow as pa

from configwatch.secrets import SecretStr
from udfs.rules.batch import CONFIGS_TYPE
from udfs.rules.detect import detect
from udfs.rules.stateful import DetectionState, detect_with_state

KEY = SecretStr("test-deployment-key")
NOW_MS = 1_790_000_000_000
_ids = itertools.count(1)

JAVA = ("apache-kafka-java", "4.3.1")
JAVA_3 = ("apache-kafka-java", "3.9.0")
RDKAFKA = ("librdkafka", "2.12.0")
PY_RDKAFKA = ("confluent-kafka-python", "2.12.0-rdkafka-2.12.0")
KAFKA_PYTHON = ("kafka-python", "2.0.2")
JAVA_2 = ("apache-kafka-java", "2.8.2")
SARAMA = ("sarama", "1.45.1")
FRANZ_GO = ("kgo", "v1.18.1")


def entry(key: str, value: str | None, type_: str = "STRING", *, default: bool = False, redacted: bool = False,
          fingerprint: str | None = None) -> dict[str, Any]:
    return {"key": key, "value": value, "type": type_, "is_default": default, "redacted": redacted or None,
            "fingerprint": fingerprint}


def push(configs: dict[str, str] | list[dict[str, Any]], software: tuple[str | None, str | None] = JAVA,
         **fields: Any) -> dict[str, Any]:
    """One decoded push; ``configs`` as {key: value} (explicit STRING entries) or a list of entries."""
    entries = [entry(k, v) for k, v in configs.items()] if isinstance(configs, dict) else configs
    n = next(_ids)
    row = {
        "client_instance_id": f"00000000-0000-4000-8000-{n:012d}", "client_software_name": software[0],
        "client_software_version": software[1], "client_id": f"client-{n}", "principal": "User:app",
        "client_address": "10.0.0.7", "connection_id": f"10.0.0.1:9092-10.0.0.7:5{n:04d}-0",
        "timestamp_ms": NOW_MS - 1000 + n,
    }
    row.update(fields)
    row["configs"] = entries
    return row


def consumer(group: str, **configs: str) -> dict[str, Any]:
    """A consumer's push in ``group``, other configs as given."""
    return push({"group.id": group, "auto.offset.reset": "earliest", **configs})


def table(*pushes: dict[str, Any]) -> pa.Table:
    names = [k for k in pushes[0] if k != "configs"]
    columns = {name: pa.array([p.get(name) for p in pushes]) for name in names}
    columns["configs"] = pa.array([p["configs"] for p in pushes], CONFIGS_TYPE)
    return pa.table(columns)


def findings(*pushes: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of ``detect`` for these pushes, evidence parsed."""
    rows = detect(table(*pushes), KEY, NOW_MS).to_pylist()
    for r in rows:
        r["evidence"] = json.loads(r["evidence"])
    return rows


def stateful_findings(*pushes: dict[str, Any], state: DetectionState | None = None
                      ) -> tuple[list[dict[str, Any]], DetectionState]:
    out, new_state = detect_with_state(table(*pushes), KEY, NOW_MS, state)
    rows = out.to_pylist()
    for r in rows:
        r["evidence"] = json.loads(r["evidence"])
    return rows, new_state


def rules_of(rows: list[dict[str, Any]]) -> set[str]:
    return {r["rule"] for r in rows}


def by_rule(rows: list[dict[str, Any]], rule: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["rule"] == rule]

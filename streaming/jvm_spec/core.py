"""The spec's sections of the contract, the catalog, the data files and the routing (``Detector``, ``RouteStep``)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from configwatch.contract import ALERTS, SCHEMA_VERSION
from configwatch.secrets import FINGERPRINT_HEX_CHARS
from udfs.rules.batch import CONTEXT_COLUMNS, IDENTITY_FIELDS
from udfs.rules.catalog import CATALOG
from udfs.rules.findings import ALERT_ID_HEX_CHARS

__all__ = ["catalog", "contract", "data", "prepare", "route"]


def contract() -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "alerts_kind": ALERTS,
        "identity_fields": list(IDENTITY_FIELDS),
        "context_columns": list(CONTEXT_COLUMNS),
        "fingerprint_hex_chars": FINGERPRINT_HEX_CHARS,
        "alert_id_hex_chars": ALERT_ID_HEX_CHARS,
    }


def catalog() -> list[dict[str, Any]]:
    return [{"id": r.id, "kind": r.kind, "severity": r.severity, "keys": list(r.keys), "rationale": r.rationale}
            for r in CATALOG]


def data() -> dict[str, Any]:
    """Every data file of ``udfs/rules/data`` as parsed JSON, by file name."""
    folder = resources.files("udfs.rules").joinpath("data")
    return {item.name: json.loads(item.read_text(encoding="utf-8"))
            for item in sorted(folder.iterdir(), key=lambda i: i.name) if item.name.endswith(".json")}


def prepare() -> dict[str, Any]:
    """``udfs.rules.batch``, ``udfs.rules.leaks`` and ``udfs.rules.fleet``'s rows (``Detector``, ``Leaks``)."""
    from udfs.rules import batch, fleet, leaks

    return {
        "subject_fallbacks": list(batch.SUBJECT_FALLBACKS),
        "marker_prefix": batch.MARKER_PREFIX,
        "marker_pattern": batch.MARKER_PATTERN,
        "masked_at_edge": batch.MASKED_AT_EDGE,
        "keys_shown": leaks.KEYS_SHOWN,
        "more_keys": leaks.MORE_KEYS,
        "identity_message": leaks.IDENTITY_MESSAGE,
        "identity_keys": dict(leaks.IDENTITY_KEYS),
        "redacted_rule": leaks.REDACTED_RULE,
        "identity_rule": leaks.IDENTITY_RULE,
        "fleet_numeric_types": list(fleet.NUMERIC_TYPES),
        "fleet_excluded": sorted(fleet.EXCLUDED),
        "peer_group": fleet.peer_group("{family}", "{role}", "{major}"),
    }


def route() -> dict[str, Any]:
    """``udfs.pipeline.route``'s names and row shapes (``RouteStep``, ``DetectionStep``)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    from configwatch.contract import (
        CONFIG_PUSH,
        CONNECTION_CLOSED,
        CONNECTION_OPENED,
        GAUGES,
        QUARANTINE,
        UNKNOWN_SOFTWARE,
        USAGE,
    )
    from udfs.gauges import MASK_PREFIX
    from udfs.pipeline import CONN_PREFIX, FINAL_SCHEMA, ROUTED_SCHEMA
    from udfs.rules.groups import group_subject
    from udfs.rules.stateful import FLEET, GROUP, KEY_SEP, PASS, PASS_BUCKETS

    return {
        "routed_schema": from_arrow_schema(ROUTED_SCHEMA).json(),
        "final_schema": from_arrow_schema(FINAL_SCHEMA).json(),
        "pass": PASS + KEY_SEP, "pass_buckets": PASS_BUCKETS, "fleet": FLEET + KEY_SEP, "group": GROUP + KEY_SEP,
        "conn": CONN_PREFIX, "alerts": ALERTS, "quarantine": QUARANTINE, "gauges": GAUGES, "usage": USAGE,
        "config_push": CONFIG_PUSH, "opened": CONNECTION_OPENED, "closed": CONNECTION_CLOSED,
        "unknown_software": UNKNOWN_SOFTWARE, "mask_prefix": MASK_PREFIX, "schema_version": SCHEMA_VERSION,
        "group_subject": group_subject("{fp}"),
    }

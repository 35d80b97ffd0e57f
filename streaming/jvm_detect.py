"""What the JVM detection engine (``streaming/jvm``, ``io.configwatch.detect``) is told: one JSON spec.

The Java classes hold the rules' logic, twins of ``udfs.rules`` and ``udfs.sensitivity``
(the same findings, byte for byte: ``tests/test_detect_jvm.py``). Every fact they act on
comes from its Python home through :func:`spec`: the rule catalog, the contract's names,
the key-set and defaults data files as they are, and each module's words, patterns and
thresholds, one section per module. Nothing in it is secret: no key, no config value.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from typing import Any, Final

from configwatch.contract import ALERTS, SCHEMA_VERSION
from configwatch.secrets import FINGERPRINT_HEX_CHARS
from udfs.rules.batch import CONTEXT_COLUMNS, IDENTITY_FIELDS
from udfs.rules.catalog import CATALOG
from udfs.rules.findings import ALERT_ID_HEX_CHARS

__all__ = ["spec", "spec_json"]


def _contract() -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "alerts_kind": ALERTS,
        "identity_fields": list(IDENTITY_FIELDS),
        "context_columns": list(CONTEXT_COLUMNS),
        "fingerprint_hex_chars": FINGERPRINT_HEX_CHARS,
        "alert_id_hex_chars": ALERT_ID_HEX_CHARS,
    }


def _catalog() -> list[dict[str, Any]]:
    return [{"id": r.id, "kind": r.kind, "severity": r.severity, "keys": list(r.keys), "rationale": r.rationale}
            for r in CATALOG]


def _data() -> dict[str, Any]:
    """Every data file of ``udfs/rules/data`` as parsed JSON, by file name."""
    folder = resources.files("udfs.rules").joinpath("data")
    return {item.name: json.loads(item.read_text(encoding="utf-8"))
            for item in sorted(folder.iterdir(), key=lambda i: i.name) if item.name.endswith(".json")}


# --- one section per rule module (each filled by the module's twin) ---


def _sensitivity() -> dict[str, Any]:
    return {}


def _secretscan() -> dict[str, Any]:
    return {}


def _identity() -> dict[str, Any]:
    return {}


def _keysets() -> dict[str, Any]:
    return {}


def _effective() -> dict[str, Any]:
    return {}


def _durations() -> dict[str, Any]:
    return {}


def _anomalies() -> dict[str, Any]:
    return {}


def _typos() -> dict[str, Any]:
    return {}


def _fleet() -> dict[str, Any]:
    return {}


def _groups() -> dict[str, Any]:
    return {}


_SECTIONS: Final[dict[str, Callable[[], Any]]] = {
    "contract": _contract,
    "catalog": _catalog,
    "data": _data,
    "sensitivity": _sensitivity,
    "secretscan": _secretscan,
    "identity": _identity,
    "keysets": _keysets,
    "effective": _effective,
    "durations": _durations,
    "anomalies": _anomalies,
    "typos": _typos,
    "fleet": _fleet,
    "groups": _groups,
}


def spec() -> dict[str, Any]:
    """The detection engine's spec: one section per module."""
    return {name: build() for name, build in _SECTIONS.items()}


def spec_json() -> str:
    return json.dumps(spec(), separators=(",", ":"), ensure_ascii=False)

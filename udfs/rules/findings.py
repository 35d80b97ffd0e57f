"""Finding rows: deterministic alert ids and the Arrow table of contract findings.

Rules produce raw findings (push row, rule, keys, message, evidence); ``to_table``
joins them with the push's (already redacted) identity, fills kind and severity
from the catalog, and computes ``alert_id``: an HMAC-SHA256 under the deployment
key of kind, rule, subject (the fingerprint of client_instance_id, else
client_id, else connection_id) and the sorted keys. The same finding on the same client gets the
same id across restarts and replays, and the id reveals nothing about a subject
that happens to be a secret.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Sequence
from typing import Final

import numpy as np
import pandas as pd
import pyarrow as pa

from configwatch.contract import SCHEMA_VERSION
from configwatch.records import Finding
from configwatch.secrets import SecretStr
from udfs.rules.batch import IDENTITY_FIELDS, SUBJECT
from udfs.rules.catalog import rule
from udfs.schema import record_fields

__all__ = [
    "ALERT_ID_HEX_CHARS",
    "FINDING_SCHEMA",
    "RAW_COLUMNS",
    "alert_id",
    "concat_raw",
    "contract_json",
    "empty_findings",
    "event_times",
    "from_contract_json",
    "raw_frame",
    "to_findings",
    "to_table",
]

ALERT_ID_HEX_CHARS: Final = 32
RAW_COLUMNS: Final = ("row", "rule", "keys", "message", "evidence")


def raw_frame(rows: Sequence[dict[str, object]] = ()) -> pd.DataFrame:
    """A rule's raw findings (``RAW_COLUMNS``: the push's row, rule id, keys, message, evidence), maybe none."""
    return pd.DataFrame(list(rows), columns=list(RAW_COLUMNS))

FINDING_SCHEMA: Final = pa.schema(record_fields(Finding))  # the contract's Findings record, evidence as JSON


def alert_id(kind: str, rule_id: str, subject: str, keys: Iterable[str], key: SecretStr) -> str:
    """The deterministic id of a finding: HMAC-SHA256 of kind, rule, subject and sorted keys."""
    message = "\x1f".join([kind, rule_id, subject, "\x1e".join(sorted(keys))]).encode("utf-8", "surrogatepass")
    raw_key = key.get_secret_value().encode()
    return hmac.new(raw_key, message, hashlib.sha256).hexdigest()[:ALERT_ID_HEX_CHARS]


def _plain(obj: object) -> object:
    """numpy scalars in evidence become plain JSON numbers and booleans."""
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"evidence holds a {type(obj).__name__}")


def _evidence_json(evidence: object) -> str:
    return json.dumps(evidence, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_plain)


_NO_FINDINGS: Final = FINDING_SCHEMA.empty_table()  # Arrow tables are immutable: one can be shared


def empty_findings() -> pa.Table:
    return _NO_FINDINGS


def event_times(column: pd.Series) -> pd.Series:
    """A context's event times as nullable Int64 milliseconds, whatever the column holds (ints, floats, text)."""
    return pd.to_numeric(column, errors="coerce").astype("Int64")


def to_table(raw: pd.DataFrame, context: pd.DataFrame, key: SecretStr, now_ms: int) -> pa.Table:
    """Contract finding rows for ``raw`` findings; ``raw.row`` indexes the rows of ``context``.

    ``context`` holds the (already redacted) identity fields, ``timestamp_ms`` and
    ``subject_fp`` of each push: a ``PushBatch.context`` or a stateful rule's observations.
    """
    if raw.empty:
        return empty_findings()
    raw = raw.reset_index(drop=True)
    rows = raw["row"].to_numpy(dtype=np.int64)
    rules = [rule(r) for r in raw["rule"]]
    kinds = [r.kind for r in rules]
    keys = [list(k) for k in raw["keys"]]
    subjects = context[SUBJECT].to_numpy(dtype=object)[rows]
    ids = [alert_id(kind, r.id, str(s), k, key) for kind, r, s, k in zip(kinds, rules, subjects, keys, strict=True)]
    ctx = context.iloc[rows].reset_index(drop=True)
    timestamps = event_times(ctx["timestamp_ms"])
    columns = {
        "schema_version": pa.array(np.full(len(raw), SCHEMA_VERSION, dtype=np.int64)),
        "alert_id": pa.array(ids, pa.string()),
        "kind": pa.array(kinds, pa.string()),
        "rule": pa.array([r.id for r in rules], pa.string()),
        "severity": pa.array([r.severity for r in rules], pa.string()),
        "keys": pa.array(keys, pa.list_(pa.string())),
        **{name: pa.array(ctx[name].tolist(), pa.string()) for name in IDENTITY_FIELDS},
        "message": pa.array(raw["message"].tolist(), pa.string()),
        "evidence": pa.array([_evidence_json(e) for e in raw["evidence"]], pa.string()),
        "event_timestamp_ms": pa.array(timestamps, pa.int64()),  # nullable: <NA> becomes null
        "detected_at_ms": pa.array(np.full(len(raw), now_ms, dtype=np.int64)),
    }
    table = pa.table(columns, schema=FINDING_SCHEMA)
    return table.sort_by([("alert_id", "ascending")])


def to_findings(table: pa.Table) -> list[Finding]:
    """The rows of a findings table as :class:`configwatch.records.Finding` objects (evidence parsed)."""
    out = []
    for rec in table.to_pylist():
        rec["evidence"] = json.loads(rec["evidence"])
        rec["keys"] = tuple(rec["keys"])
        out.append(Finding.from_dict(rec))
    return out


_HEAD: Final = FINDING_SCHEMA.names[:FINDING_SCHEMA.names.index("evidence")]  # the fields before it ...
_TAIL: Final = FINDING_SCHEMA.names[FINDING_SCHEMA.names.index("evidence") + 1:]  # ... and after it, both non-empty


def _compact(fields: dict[str, object]) -> str:
    return json.dumps(fields, separators=(",", ":"), ensure_ascii=False)


def contract_json(table: pa.Table) -> list[str]:
    """Each finding row as the contract's JSON record (section 2): evidence embedded as an object.

    The evidence column already holds compact JSON: it is spliced in as it is, not parsed and written again.
    """
    return [f'{_compact({k: rec[k] for k in _HEAD})[:-1]},"evidence":{rec["evidence"]},'
            f'{_compact({k: rec[k] for k in _TAIL})[1:]}' for rec in table.select(FINDING_SCHEMA.names).to_pylist()]


def from_contract_json(values: Sequence[str]) -> pa.Table:
    """The inverse of :func:`contract_json`: a ``FINDING_SCHEMA`` table (evidence as JSON text)."""
    rows = []
    for text in values:
        rec = json.loads(text)
        rec["evidence"] = _evidence_json(rec["evidence"])
        rows.append(rec)
    return pa.Table.from_pylist(rows, schema=FINDING_SCHEMA)


def concat_raw(parts: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate raw finding frames, keeping the raw columns even when all are empty."""
    parts = [p for p in parts if not p.empty]
    if not parts:
        return raw_frame()
    return pd.concat(parts, ignore_index=True)[list(RAW_COLUMNS)]

"""Sensitive-leak findings of a batch: the KIP's criteria, policy redactions, secrets in values,
keys and identity fields.

Masks are computed over all entries at once (``udfs.sensitivity`` for which keys
are sensitive, custom keys included, ``secretscan.scan`` for secrets in values);
Python only runs per finding, to fingerprint and group. One finding per (push,
rule) names every key that rule flagged in that push. Values never leave this
module: evidence holds the HMAC fingerprint of each flagged value.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from configwatch.secrets import SecretStr, fingerprint
from udfs.rules.batch import PushBatch
from udfs.rules.catalog import rule
from udfs.rules.findings import raw_frame
from udfs.rules.secretscan import scan
from udfs.sensitivity import custom_mask, sensitive_key_first

__all__ = ["IDENTITY_KEYS", "IDENTITY_MESSAGE", "IDENTITY_RULE", "KEYS_SHOWN", "MORE_KEYS", "REDACTED_RULE",
           "leak_findings"]

REDACTED_RULE = "policy-redacted"  # an entry the ingest policy had to redact
IDENTITY_RULE = "secret-in-identity"  # a secret in the event's identity fields
KEYS_SHOWN = 5  # a leak's message names at most this many keys, then MORE_KEYS
MORE_KEYS = " and {more} more"
IDENTITY_MESSAGE = "a secret was found in the event's {fields}; it is shown only as a fingerprint."
IDENTITY_KEYS = {"client_id": "client.id"}  # identity fields a finding names by their config key


def _group(frame: pd.DataFrame) -> pd.DataFrame:
    """One finding per (row, rule): sorted distinct keys, and every flagged entry in the evidence.

    One pass over the flagged entries (sorted by push and rule), in plain Python lists.
    """
    if frame.empty:
        return raw_frame()
    frame = frame.sort_values(["row", "rule"], kind="stable")
    columns = [frame[c].tolist() for c in ("row", "rule", "key", "type", "location", "fingerprint")]
    out: list[dict[str, Any]] = []
    current: tuple[int, str] | None = None
    entries: list[dict[str, Any]] = []
    for row, rule_id, key, type_, location, print_ in zip(*columns, strict=True):
        if (row, rule_id) != current:
            if current is not None:
                out.append(_finding(current, entries))
            current, entries = (int(row), str(rule_id)), []
        entry = {"key": key, "type": type_, "location": location, "fingerprint": print_}
        entries.append({k: v for k, v in entry.items() if v is not None})
    if current is not None:
        out.append(_finding(current, entries))
    return raw_frame(out)


def _finding(where: tuple[int, str], entries: list[dict[str, Any]]) -> dict[str, Any]:
    row, rule_id = where
    keys = tuple(sorted({e["key"] for e in entries}))
    more = len(keys) - KEYS_SHOWN
    shown = ", ".join(keys[:KEYS_SHOWN]) + (MORE_KEYS.format(more=more) if more > 0 else "")
    message = f"{rule(rule_id).rationale.rstrip('.')}: {shown}."
    return {"row": row, "rule": rule_id, "keys": keys, "message": message, "evidence": {"entries": entries}}


def _fingerprints(values: pa.Array, key: SecretStr) -> list[str | None]:
    return [None if v is None else fingerprint(v, key) for v in values.to_pylist()]


def leak_findings(batch: PushBatch, key: SecretStr, custom: np.ndarray | None = None) -> pd.DataFrame:
    """Every sensitive-leak finding of the batch (columns row, rule, keys, message, evidence).

    The masks are Arrow kernels over every entry; only the flagged entries become Python objects.
    """
    custom = custom_mask(batch) if custom is None else custom
    values = batch.values
    published = pc.and_(pc.is_valid(values), pa.array(~batch.redacted)).to_numpy(zero_copy_only=False)
    kip = sensitive_key_first(batch.keys, batch.types, custom)
    value_secret = scan(values)
    parts = []

    def add(mask: np.ndarray, rules: pa.Array | str, location: str, prints: list[str | None]) -> None:
        idx = np.flatnonzero(mask)
        if len(idx) == 0:
            return
        take = pa.array(idx)
        parts.append(pd.DataFrame({
            "row": batch.entry_row[idx], "rule": rules if isinstance(rules, str) else rules.take(take).to_pylist(),
            "key": batch.safe_keys[idx], "type": batch.types.take(take).to_pylist(), "location": location,
            "fingerprint": prints,
        }))

    def hits(found: pa.Array, among: np.ndarray | None = None) -> np.ndarray:
        valid = pc.is_valid(found).to_numpy(zero_copy_only=False)
        return valid if among is None else among & valid

    kip_hit = hits(kip, published)
    add(kip_hit, kip, "value", _fingerprints(values.filter(pa.array(kip_hit)), key))
    redacted_prints = batch.entry_fingerprints.filter(pa.array(batch.redacted)).to_pylist()
    add(batch.redacted, REDACTED_RULE, "value", redacted_prints)
    value_hit = hits(value_secret, published)
    add(value_hit, value_secret, "value", _fingerprints(values.filter(pa.array(value_hit)), key))
    key_hit = hits(batch.key_secret)
    add(key_hit, batch.key_secret, "key", _fingerprints(batch.keys.filter(pa.array(key_hit)), key))
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    grouped = _group(frame)
    identity = _identity_findings(batch)
    return pd.concat([grouped, identity], ignore_index=True) if not identity.empty else grouped


def _identity_findings(batch: PushBatch) -> pd.DataFrame:
    """One finding per push with a secret in its identity fields: one pass over the hits, sorted by push."""
    hits = batch.identity_hits
    if hits.empty:
        return raw_frame()
    hits = hits.sort_values("row", kind="stable")
    out: list[dict[str, Any]] = []
    fields: list[tuple[str, str, str]] = []
    rows = hits["row"].tolist()
    for i, (row, field, rule_id, print_) in enumerate(zip(rows, hits["field"].tolist(), hits["rule"].tolist(),
                                                          hits["fingerprint"].tolist(), strict=True)):
        fields.append((field, rule_id, print_))
        if i + 1 == len(rows) or rows[i + 1] != row:
            names = sorted(f for f, _, _ in fields)
            out.append({"row": int(row), "rule": IDENTITY_RULE,
                        "keys": tuple(sorted(IDENTITY_KEYS.get(f, f) for f in names)),
                        "message": IDENTITY_MESSAGE.format(fields=", ".join(names)),
                        "evidence": {"fields": [{"field": f, "kind": r, "fingerprint": fp} for f, r, fp in fields]}})
            fields = []
    return raw_frame(out)

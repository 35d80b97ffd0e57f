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


def _fingerprints(values: np.ndarray, key: SecretStr) -> list[str | None]:
    return [None if v is None else fingerprint(v, key) for v in values]


def leak_findings(batch: PushBatch, key: SecretStr, custom: np.ndarray | None = None) -> pd.DataFrame:
    """Every sensitive-leak finding of the batch (columns row, rule, keys, message, evidence)."""
    custom = custom_mask(batch) if custom is None else custom
    values = batch.values
    published = pc.and_(pc.is_valid(values), pa.array(~batch.redacted)).to_numpy(zero_copy_only=False)
    kip = sensitive_key_first(batch.keys, batch.types, custom).to_numpy(zero_copy_only=False)
    value_secret = scan(values).to_numpy(zero_copy_only=False)
    key_secret = batch.key_secret.to_numpy(zero_copy_only=False)
    types = batch.types.to_numpy(zero_copy_only=False)
    parts = []

    def add(mask: np.ndarray, rules: Any, location: str, prints: list[str | None]) -> None:
        idx = np.flatnonzero(mask)
        if len(idx) == 0:
            return
        parts.append(pd.DataFrame({
            "row": batch.entry_row[idx], "rule": rules[idx] if isinstance(rules, np.ndarray) else rules,
            "key": batch.safe_keys[idx], "type": types[idx], "location": location, "fingerprint": prints,
        }))

    raw_values = values.to_numpy(zero_copy_only=False)
    kip_hit = published & pd.notna(kip)
    add(kip_hit, kip, "value", _fingerprints(raw_values[kip_hit], key))
    add(batch.redacted, REDACTED_RULE, "value",
        list(batch.entry_fingerprints.to_numpy(zero_copy_only=False)[batch.redacted]))
    value_hit = published & pd.notna(value_secret)
    add(value_hit, value_secret, "value", _fingerprints(raw_values[value_hit], key))
    key_hit = pd.notna(key_secret)
    raw_keys = batch.keys.to_numpy(zero_copy_only=False)
    add(key_hit, key_secret, "key", _fingerprints(raw_keys[key_hit], key))
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    grouped = _group(frame)
    identity = _identity_findings(batch)
    return pd.concat([grouped, identity], ignore_index=True) if not identity.empty else grouped


def _identity_findings(batch: PushBatch) -> pd.DataFrame:
    hits = batch.identity_hits
    if hits.empty:
        return raw_frame()
    out = []
    for _, fields in hits.groupby("row", sort=True):
        row = int(fields["row"].iloc[0])
        names = sorted(fields["field"])
        keys = tuple(sorted(IDENTITY_KEYS.get(f, f) for f in names))
        evidence = {"fields": [{"field": f, "kind": r, "fingerprint": fp}
                               for f, r, fp in fields[["field", "rule", "fingerprint"]].itertuples(index=False)]}
        out.append({"row": row, "rule": IDENTITY_RULE, "keys": keys,
                    "message": IDENTITY_MESSAGE.format(fields=", ".join(names)), "evidence": evidence})
    return raw_frame(out)

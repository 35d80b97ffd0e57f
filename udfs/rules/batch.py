"""One batch of decoded ``config_push`` rows, flattened once for every rule.

``PushBatch.from_pushes`` takes the decoded valid pushes (the columns of
``udfs.decode``: contract event fields plus ``configs``, a list of entry structs)
as an Arrow table or a pandas frame, and gives the rules what they share: the
per-push context, the flattened entries with their push row, each push's key-set
profile, and identity fields with any secret replaced by its fingerprint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from configwatch.records import Event
from configwatch.secrets import SecretStr, fingerprint
from udfs.rules.exceptions import RulesError
from udfs.rules.keysets import Profile, resolve_profiles
from udfs.rules.secretscan import scan, scan_identity
from udfs.schema import ENTRY_TYPE

__all__ = ["CONFIGS_TYPE", "CONTEXT_COLUMNS", "IDENTITY_FIELDS", "MARKER_PATTERN", "MARKER_PREFIX", "MASKED_AT_EDGE",
           "SUBJECT", "SUBJECT_FALLBACKS", "PushBatch", "redacted_marker", "safe_key_names"]

CONFIGS_TYPE = pa.list_(ENTRY_TYPE)
# Event fields a finding copies (contract section 2), then what the rules also need.
IDENTITY_FIELDS = ("client_instance_id", "client_software_name", "client_software_version", "client_id",
                   "principal", "client_address")
CONTEXT_COLUMNS = (*IDENTITY_FIELDS, "connection_id", "timestamp_ms")
SUBJECT = "subject_fp"


MASKED_AT_EDGE = "masked-at-edge"  # an identity field the gateway already replaced by its marker
MARKER_PREFIX = "redacted:"
MARKER_PATTERN = r"^redacted:[0-9a-f]{16}$"  # what redacted_marker makes (an RE2 pattern)
SUBJECT_FALLBACKS = ("client_instance_id", "client_id", "connection_id")  # an alert's subject: the first present


def redacted_marker(value: str, key: SecretStr) -> str:
    """What replaces a secret wherever a finding would otherwise show it."""
    return f"{MARKER_PREFIX}{fingerprint(value, key)}"


def _to_table(pushes: pa.Table | pd.DataFrame) -> pa.Table:
    if isinstance(pushes, pd.DataFrame):
        columns = {}
        for name in pushes.columns:
            if name == "configs":
                columns[name] = pa.array(pushes[name].tolist(), CONFIGS_TYPE)
            else:
                columns[name] = pa.array(pushes[name].tolist())
        return pa.table(columns)
    return pushes


@dataclass(frozen=True)
class PushBatch:
    """The shared, flattened view of one batch of pushes."""

    context: pd.DataFrame          # one row per push: CONTEXT_COLUMNS (identity already safe), subject_fp, profile
    identity_hits: pd.DataFrame    # push row, field, rule, fingerprint: secrets found in identity fields
    entry_row: np.ndarray          # push row of each entry
    keys: pa.Array
    values: pa.Array
    types: pa.Array
    is_default: np.ndarray
    redacted: np.ndarray
    entry_fingerprints: pa.Array
    safe_keys: np.ndarray          # key, or its redacted marker when the key itself holds a secret
    key_secret: pa.Array           # secret rule id found in the key name, or null
    profile_ids: np.ndarray        # per push: profile id or None
    profiles: dict[str, Profile]

    @property
    def n(self) -> int:
        return len(self.context)

    @classmethod
    def from_pushes(cls, pushes: pa.Table | pd.DataFrame, key: SecretStr) -> PushBatch:
        table = _to_table(pushes)
        if "configs" not in table.column_names:
            raise RulesError("pushes need a configs column (decoded config_push rows)")
        n = table.num_rows
        context = pd.DataFrame({
            name: pd.Series(table.column(name).to_pylist() if name in table.column_names else [None] * n,
                            dtype=object)
            for name in CONTEXT_COLUMNS
        })
        configs = table.column("configs").cast(CONFIGS_TYPE).combine_chunks()
        flat = pc.list_flatten(configs)
        entry_row = pc.list_parent_indices(configs).to_numpy().astype(np.int64)
        keys = flat.field("key")
        safe_keys, key_secret = safe_key_names(keys, key)
        subject_fp = _subject_fingerprints(context, key)
        context, identity_hits = _safe_identity(context, key)
        context[SUBJECT] = subject_fp
        profile_ids, profiles = resolve_profiles(
            context["client_software_name"].tolist(), context["client_software_version"].tolist(),
            entry_row, keys)
        context["profile"] = profile_ids
        return cls(
            context=context, identity_hits=identity_hits, entry_row=entry_row,
            keys=keys, values=flat.field("value"), types=flat.field("type"),
            is_default=pc.fill_null(flat.field("is_default"), False).to_numpy(zero_copy_only=False),
            redacted=pc.fill_null(flat.field("redacted"), False).to_numpy(zero_copy_only=False),
            entry_fingerprints=flat.field("fingerprint"), safe_keys=safe_keys, key_secret=key_secret,
            profile_ids=profile_ids, profiles=profiles,
        )

    @classmethod
    def from_events(cls, events: Sequence[Event], key: SecretStr) -> PushBatch:
        """The batch of ``config_push`` events as the ingest edge and the dashboard hold them."""
        columns: dict[str, pa.Array] = {
            name: pa.array([getattr(e, name) for e in events], pa.int64() if name == "timestamp_ms" else pa.string())
            for name in CONTEXT_COLUMNS}
        columns["configs"] = pa.array([[entry.to_dict() | {"redacted": entry.redacted} for entry in e.configs or ()]
                                       for e in events], CONFIGS_TYPE)
        return cls.from_pushes(pa.table(columns), key)

    def entry_profile_ids(self) -> np.ndarray:
        return self.profile_ids[self.entry_row] if len(self.entry_row) else np.zeros(0, dtype=object)

    @cached_property
    def profile_codes(self) -> dict[str, np.ndarray]:
        """Per profile id, the indices of its entries (entry order): to select a profile's entries in one step."""
        codes, ids = pd.factorize(pd.Series(self.profile_ids, dtype=object), use_na_sentinel=True)
        entry_codes = codes[self.entry_row] if len(self.entry_row) else np.zeros(0, dtype=np.int64)
        order = np.argsort(entry_codes, kind="stable")
        starts = np.searchsorted(entry_codes[order], np.arange(len(ids) + 1))
        return {str(pid): order[starts[c]:starts[c + 1]] for c, pid in enumerate(ids)}


def safe_key_names(keys: pa.Array, key: SecretStr) -> tuple[np.ndarray, pa.Array]:
    """Key names as findings may show them (a key that holds a secret becomes its marker), and the rule per key."""
    distinct = pc.unique(keys)
    found = scan(distinct)
    hits = pc.fill_null(pc.is_valid(found), False)
    safe = np.asarray(keys.to_numpy(zero_copy_only=False), dtype=object)
    per_entry = pa.nulls(len(keys), pa.string())
    if pc.any(hits).as_py():
        bad = distinct.filter(hits)
        lookup = pc.index_in(keys, value_set=bad).to_numpy(zero_copy_only=False)
        markers = np.array([redacted_marker(k, key) for k in bad.to_pylist()], dtype=object)
        rules = np.array(found.filter(hits).to_pylist(), dtype=object)
        is_bad = ~np.isnan(lookup.astype(float))
        where = lookup[is_bad].astype(np.int64)
        safe[is_bad] = markers[where]
        per = np.full(len(keys), None, dtype=object)
        per[is_bad] = rules[where]
        per_entry = pa.array(per, pa.string())
    return safe, per_entry


def _subject_fingerprints(context: pd.DataFrame, key: SecretStr) -> np.ndarray:
    """Fingerprint of each push's alert subject: client_instance_id, else client_id, else connection_id.

    Only the fingerprint travels (into alert ids and Spark state), so a subject that
    is a secret never does. One HMAC per distinct subject.
    """
    subject = pc.coalesce(*(pa.array(context[name].tolist(), pa.string()) for name in SUBJECT_FALLBACKS),
                          pa.scalar("", pa.string()))
    distinct = pc.unique(subject)
    prints = np.array([fingerprint(s, key) for s in distinct.to_pylist()], dtype=object)
    return prints[pc.index_in(subject, value_set=distinct).to_numpy(zero_copy_only=False)]


def _safe_identity(context: pd.DataFrame, key: SecretStr) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Scan every copied identity field (all in one scan); replace a secret with its marker and record the hit."""
    n = len(context)
    values = pa.array([v for name in IDENTITY_FIELDS for v in context[name].tolist()], pa.string())  # field-major
    masked = pc.fill_null(pc.match_substring_regex(values, MARKER_PATTERN), False)  # the edge masked it already
    found = pc.if_else(masked, pa.scalar(MASKED_AT_EDGE), scan_identity(values)).to_numpy(zero_copy_only=False)
    hit = np.flatnonzero(pd.notna(found))
    safe = context.copy()
    if len(hit) == 0:
        return safe, pd.DataFrame({"row": pd.Series(dtype=np.int64), "field": [], "rule": [], "fingerprint": []})
    rows, fields = hit % n, np.array(IDENTITY_FIELDS, dtype=object)[hit // n]
    originals = values.take(pa.array(hit)).to_pylist()
    at_edge = masked.to_numpy(zero_copy_only=False)[hit]
    prints = [v[len(MARKER_PREFIX):] if m else fingerprint(v, key) for v, m in zip(originals, at_edge, strict=True)]
    shown = np.array([v if m else redacted_marker(v, key) for v, m in zip(originals, at_edge, strict=True)],
                     dtype=object)
    for name in dict.fromkeys(fields):
        of = fields == name
        safe.loc[safe.index[rows[of]], name] = shown[of]
    return safe, pd.DataFrame({"row": rows, "field": fields, "rule": found[hit], "fingerprint": prints})

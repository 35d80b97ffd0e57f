"""Fleet outliers: a numeric value far outside what peers of the same family and role use.

State per (peer group, key) is a :class:`NumericSummary`: a histogram of
``sign(x) * log10(1 + |x|)`` in fixed-width buckets (0.001 = about 0.23% relative
precision; past 512 buckets the width doubles until it fits), so it is small,
mergeable (add the counts) and JSON-serializable for Spark state. Median and MAD
come from the histogram.

A value is an outlier when at least ``MIN_PEERS`` values were seen for its key and
peer group (this batch included), its modified z-score 0.6745 * |y - median| / MAD
exceeds 3.5 (Iglewicz and Hoaglin), and it is at least an order of magnitude away
from the median (|y - median| >= 1). When MAD is 0 (most peers agree exactly) the
order-of-magnitude test alone decides. Only documented numeric keys of the push's
profile count (types INT, LONG, SHORT, DOUBLE; not acks; not KIP-sensitive); values
<= 0 are sentinels (-1 disabled, 0 off) and are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from udfs.rules.batch import CONTEXT_COLUMNS, SUBJECT, PushBatch
from udfs.sensitivity import sensitive_key_first

__all__ = ["MIN_PEERS", "NumericSummary", "fleet_observations", "score_group", "score_observations"]

MIN_PEERS = 10
Z_THRESHOLD = 3.5
MIN_LOG_DISTANCE = 1.0
BUCKET_WIDTH = 0.001
MAX_BUCKETS = 512
_NUMERIC_TYPES = ("INT", "LONG", "SHORT", "DOUBLE")
_EXCLUDED = frozenset({"acks"})


def _log(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.log10(1.0 + np.abs(x))


def _unlog(y: float) -> float:
    return float(np.sign(y) * (10.0 ** abs(y) - 1.0))


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    order = np.argsort(values)
    values, weights = values[order], weights[order]
    cum = np.cumsum(weights)
    return float(values[np.searchsorted(cum, cum[-1] / 2.0)])


@dataclass(frozen=True)
class NumericSummary:
    """A mergeable log-space histogram of the values seen for one key in one peer group."""

    width: float = BUCKET_WIDTH
    buckets: Mapping[int, int] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return int(sum(self.buckets.values()))

    def add(self, values: np.ndarray) -> NumericSummary:
        """A new summary with ``values`` (raw config values, > 0) added."""
        idx, counts = np.unique(np.floor(_log(np.asarray(values, float)) / self.width).astype(np.int64),
                                return_counts=True)
        merged = dict(self.buckets)
        for i, c in zip(idx.tolist(), counts.tolist(), strict=True):
            merged[i] = merged.get(i, 0) + c
        return NumericSummary(self.width, merged)._bounded()

    def merge(self, other: NumericSummary) -> NumericSummary:
        """The summary of both inputs (associative and commutative)."""
        a, b = self, other
        while a.width < b.width:
            a = a._coarsen()
        while b.width < a.width:
            b = b._coarsen()
        merged = dict(a.buckets)
        for i, c in b.buckets.items():
            merged[i] = merged.get(i, 0) + c
        return NumericSummary(a.width, merged)._bounded()

    def _coarsen(self) -> NumericSummary:
        out: dict[int, int] = {}
        for i, c in self.buckets.items():
            out[i // 2] = out.get(i // 2, 0) + c
        return NumericSummary(self.width * 2, out)

    def _bounded(self) -> NumericSummary:
        s = self
        while len(s.buckets) > MAX_BUCKETS:
            s = s._coarsen()
        return s

    def _centers(self) -> tuple[np.ndarray, np.ndarray]:
        idx = np.fromiter(self.buckets.keys(), dtype=np.int64)
        return (idx + 0.5) * self.width, np.fromiter(self.buckets.values(), dtype=np.int64)

    def median_log(self) -> float:
        centers, counts = self._centers()
        return _weighted_median(centers, counts)

    def mad_log(self) -> float:
        centers, counts = self._centers()
        med = _weighted_median(centers, counts)
        mad = _weighted_median(np.abs(centers - med), counts)
        return 0.0 if mad < self.width else mad  # within one bucket: no spread at this precision

    def to_json(self) -> str:
        return json.dumps({"width": self.width, "buckets": {str(k): v for k, v in sorted(self.buckets.items())}},
                          separators=(",", ":"))

    @classmethod
    def from_json(cls, data: str | None) -> NumericSummary:
        if not data:
            return cls()
        obj = json.loads(data)
        return cls(float(obj["width"]), {int(k): int(v) for k, v in obj["buckets"].items()})


def fleet_observations(batch: PushBatch) -> pd.DataFrame:
    """One row per (push, documented numeric key) value: peer_group, key, value, plus the push context."""
    entry_profiles = batch.entry_profile_ids()
    kip = pd.notna(sensitive_key_first(batch.keys, batch.types).to_numpy(zero_copy_only=False))
    frame = pd.DataFrame({
        "row": batch.entry_row, "key": batch.keys.to_numpy(zero_copy_only=False),
        "raw": batch.values.to_numpy(zero_copy_only=False), "profile": entry_profiles,
    })[~batch.redacted & ~kip & pd.notna(entry_profiles)]
    parts = []
    for pid, prof in batch.profiles.items():
        numeric = sorted(k for k, spec in prof.keys.items() if spec.type in _NUMERIC_TYPES and k not in _EXCLUDED)
        mine = frame[(frame["profile"] == pid) & frame["key"].isin(numeric)]
        if mine.empty:
            continue
        value = pd.to_numeric(mine["raw"], errors="coerce")
        canonical = mine["key"].map({k: prof.canonical(k) for k in numeric})
        parts.append(pd.DataFrame({"row": mine["row"].to_numpy(), "peer_group": f"{prof.family}/{prof.role}",
                                   "key": canonical.to_numpy(), "value": value.to_numpy(dtype=float)}))
    if not parts:
        return pd.DataFrame(columns=["peer_group", "key", "value", *CONTEXT_COLUMNS, SUBJECT])
    obs = pd.concat(parts, ignore_index=True)
    obs = obs[np.isfinite(obs["value"]) & (obs["value"] > 0)]
    ctx = batch.context[[*CONTEXT_COLUMNS, SUBJECT]].iloc[obs["row"].to_numpy()].reset_index(drop=True)
    return pd.concat([obs.drop(columns="row").reset_index(drop=True), ctx], axis=1)


def _shown(x: float) -> Any:
    return int(x) if float(x).is_integer() else round(float(x), 6)


def score_group(peer_group: str, key: str, observations: pd.DataFrame, prior: NumericSummary,
                min_peers: int = MIN_PEERS) -> tuple[pd.DataFrame, NumericSummary]:
    """Score one (peer group, key): raw findings (``row`` indexes ``observations``) and the new summary."""
    values = observations["value"].to_numpy(dtype=float)
    summary = prior.add(values) if len(values) else prior
    empty = pd.DataFrame(columns=["row", "rule", "keys", "message", "evidence"])
    if summary.count < min_peers or len(values) == 0:
        return empty, summary
    med, mad = summary.median_log(), summary.mad_log()
    dist = np.abs(_log(values) - med)
    far = dist >= MIN_LOG_DISTANCE
    if mad > 0:
        far &= 0.6745 * dist / mad > Z_THRESHOLD
    hits = np.flatnonzero(far)
    median_value = _shown(float(f"{_unlog(med):.3g}"))
    out = [{
        "row": int(observations.index[int(i)]), "rule": "fleet-outlier", "keys": (key,),
        "message": f"{key}={_shown(values[i])} is far from the {summary.count} values its {peer_group} peers "
                   f"report (median about {median_value}).",
        "evidence": {"peer_group": peer_group, "value": _shown(values[i]), "peer_median": median_value,
                     "peer_mad_log10": round(mad, 4), "peers": summary.count},
    } for i in hits]
    return (pd.DataFrame(out, columns=empty.columns) if out else empty), summary


def score_observations(observations: pd.DataFrame, state: Mapping[tuple[str, str], NumericSummary],
                       min_peers: int = MIN_PEERS) -> tuple[pd.DataFrame, dict[tuple[str, str], NumericSummary]]:
    """Score a whole batch against ``state`` (no Spark): raw findings and the updated summaries."""
    new_state = dict(state)
    found = []
    observations = observations.reset_index(drop=True)
    for (group, key), part in observations.groupby(["peer_group", "key"], sort=True):
        raw, summary = score_group(str(group), str(key), part, state.get((str(group), str(key)), NumericSummary()),
                                   min_peers)
        new_state[(str(group), str(key))] = summary
        found.append(raw)
    found = [f for f in found if not f.empty]
    raw = pd.concat(found, ignore_index=True) if found else pd.DataFrame(
        columns=["row", "rule", "keys", "message", "evidence"])
    return raw, new_state


"""Fleet outliers: a numeric value that few peers use and that lies far outside what the rest use.

State per (peer group, key) is a :class:`PeerState`: a :class:`NumericSummary`, a
histogram of ``sign(x) * log10(1 + |x|)`` in fixed-width buckets (0.001 = about 0.23%
relative precision; past 512 buckets the width doubles until it fits), so it is
small, mergeable (add the counts) and JSON-serializable for Spark state; and, while
the group is young, the values waiting to be scored.

Peers are pushes of the same software family, role and key-set major version
(``apache-kafka-java/producer/v4``): clients that share documented defaults. A value
is an outlier only when all of these hold (every count includes this batch):

* enough peers: at least ``MIN_PEERS`` values seen for the key in the peer group,
  ``1 / RARE_SHARE``, so that one value is a share small enough to call rare (the
  first instance of a tuning a tenth of the fleet uses is often alone among a dozen
  values). A value that arrives earlier is not dropped: it waits in the state, if no
  other value lies near it so far, and is scored with the batch that brings the group
  to ``MIN_PEERS``;
* rare: at most ``max(1, RARE_SHARE * peers)`` of them lie within ``RARE_RADIUS``
  decades of it (a setting a sizeable share of the fleet uses, such as a 1 MiB
  ``receive.buffer.bytes``, is a tuning, not an anomaly);
* far: it lies outside Tukey's fences on the log scale, ``q1 - k`` .. ``q3 + k`` with
  ``k = max(IQR_K * (q3 - q1), MIN_LOG_DISTANCE)``: at least 1.5 orders of magnitude
  (about 32x) beyond the middle half of the peers, more when they are spread (a zero
  spread, all peers on one default, no longer makes every other value infinitely
  far). Deliberate tunings move a setting by powers of two up to about 32x from its
  default (``linger.ms`` 5 -> 100, ``batch.size`` 16 KiB -> 512 KiB); the slips this
  rule is for (milliseconds for seconds, bytes for kilobytes, a digit too many) are
  1,000x and more.

Only documented numeric keys of the push's profile count (types INT, LONG, SHORT,
DOUBLE; not acks; not KIP-sensitive). Sentinels are modes, not magnitudes, so they
are neither counted nor flagged: values <= 0 (``-1`` = OS default of
``send.buffer.bytes``/``receive.buffer.bytes``, ``-1`` = never for
``connections.max.idle.ms``, ``0`` = send at once for ``linger.ms``, librdkafka's
``0`` = OS default socket buffers) and ``Integer.MAX_VALUE``/``Long.MAX_VALUE``
(unbounded, e.g. the ``retries`` default).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from udfs.rules.batch import IDENTITY_FIELDS, SUBJECT, PushBatch
from udfs.rules.effective import JAVA_INT_MAX, JAVA_LONG_MAX
from udfs.rules.findings import event_times, raw_frame
from udfs.sensitivity import sensitive_key_first

__all__ = ["BUCKET_WIDTH", "DECADES_PLACES", "EXCLUDED", "IQR_K", "MAX_BUCKETS", "MESSAGE", "MIN_LOG_DISTANCE",
           "MIN_PEERS", "NUMERIC_TYPES", "PENDING_COLUMNS", "RARE_RADIUS", "RARE_SHARE", "RULE", "SHOWN_DIGITS",
           "SHOWN_PLACES", "UNBOUNDED", "NumericSummary", "PeerState", "fleet_values", "is_sentinel", "peer_group",
           "peer_states_from_json", "peer_states_to_json", "rare_limit", "score_group", "score_observations"]

RARE_SHARE = 0.02
MIN_PEERS = 50  # 1 / RARE_SHARE: the fewest values among which one value is at most RARE_SHARE of them
PENDING_COLUMNS = (*IDENTITY_FIELDS, "timestamp_ms", SUBJECT)  # what a pending value's finding needs
RARE_RADIUS = 0.05  # decades: values within about 12% count as the same setting
IQR_K = 1.5
MIN_LOG_DISTANCE = 1.5  # decades: see "far" above
UNBOUNDED = (float(JAVA_INT_MAX), float(JAVA_LONG_MAX))
BUCKET_WIDTH = 0.001
MAX_BUCKETS = 512
NUMERIC_TYPES = ("INT", "LONG", "SHORT", "DOUBLE")
EXCLUDED = frozenset({"acks"})
RULE = "fleet-outlier"
MESSAGE = ("{key}={value} is used by {near} of the {peers} values its {peer_group} peers report and lies "
           "{decades:.1f} orders of magnitude from their usual {low}..{high}.")
SHOWN_DIGITS = 3  # significant digits of the peers' median and quartiles as a finding shows them
SHOWN_PLACES = 6  # decimal places of a value that is not a whole number as a finding shows it
DECADES_PLACES = 3  # decimal places of decades_outside in the evidence


def _log(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.log10(1.0 + np.abs(x))


def _unlog(y: float) -> float:
    return float(np.sign(y) * (10.0 ** abs(y) - 1.0))


def _weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    order = np.argsort(values)
    values, weights = values[order], weights[order]
    cum = np.cumsum(weights)
    return float(values[np.searchsorted(cum, cum[-1] * q)])


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    return _weighted_quantile(values, weights, 0.5)


def is_sentinel(values: np.ndarray) -> np.ndarray:
    """Where a value is a documented mode rather than a magnitude: <= 0, or Integer/Long.MAX_VALUE."""
    values = np.asarray(values, float)
    return (values <= 0) | np.isin(values, UNBOUNDED)


def peer_group(family: str, role: str, keyset_version: str) -> str:
    """``family/role/v<major>``: clients that share documented defaults."""
    return f"{family}/{role}/v{keyset_version.split('.')[0]}"


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

    def quantile_log(self, q: float) -> float:
        centers, counts = self._centers()
        return _weighted_quantile(centers, counts, q)

    def near_counts(self, ys: np.ndarray, radius: float) -> np.ndarray:
        """For each log value in ``ys``: how many summarized values lie within ``radius`` of it."""
        centers, counts = self._centers()
        order = np.argsort(centers)
        centers, cum = centers[order], np.concatenate([[0], np.cumsum(counts[order])])
        reach = radius + self.width / 2.0
        lo = np.searchsorted(centers, ys - reach, side="left")
        hi = np.searchsorted(centers, ys + reach, side="right")
        return (cum[hi] - cum[lo]).astype(np.int64)

    def to_obj(self) -> dict[str, Any]:
        return {"width": self.width, "buckets": {str(k): v for k, v in sorted(self.buckets.items())}}

    def to_json(self) -> str:
        return json.dumps(self.to_obj(), separators=(",", ":"))

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> NumericSummary:
        return cls(float(obj["width"]), {int(k): int(v) for k, v in obj["buckets"].items()})

    @classmethod
    def from_json(cls, data: str | None) -> NumericSummary:
        return cls.from_obj(json.loads(data)) if data else cls()


def fleet_values(batch: PushBatch) -> pd.DataFrame:
    """One row per (push, documented numeric key) value: the push's ``row``, peer_group, key, value.

    In push order: the values of one push and peer group are adjacent. Entries are grouped by
    their push's profile once (integer codes), and each profile's numeric keys are picked in Arrow,
    so only the candidate values ever become Python objects.
    """
    empty = pd.DataFrame({"row": pd.Series(dtype="int64"), "peer_group": pd.Series(dtype=object),
                          "key": pd.Series(dtype=object), "value": pd.Series(dtype=float)})
    entries = batch.profile_codes
    if not entries:
        return empty
    kip = pc.is_valid(sensitive_key_first(batch.keys, batch.types)).to_numpy(zero_copy_only=False)
    candidate = ~batch.redacted & ~kip
    parts = []
    for pid, prof in batch.profiles.items():
        excluded = EXCLUDED.union(*(prof.sources(k) for k in EXCLUDED))  # acks under the family's own name too
        numeric = sorted(k for k, spec in prof.keys.items() if spec.type in NUMERIC_TYPES and k not in excluded)
        mine = entries.get(pid, np.zeros(0, dtype=np.int64))
        mine = mine[candidate[mine]]
        if not len(mine) or not numeric:
            continue
        keys = batch.keys.take(pa.array(mine))
        picked = pc.is_in(keys, value_set=pa.array(numeric, pa.string())).to_numpy(zero_copy_only=False)
        mine = mine[picked]
        if not len(mine):
            continue
        raw = batch.values.take(pa.array(mine)).to_numpy(zero_copy_only=False)
        canonical = {k: prof.canonical(k) for k in numeric}
        parts.append(pd.DataFrame({
            "row": batch.entry_row[mine], "peer_group": peer_group(prof.family, prof.role, prof.version),
            "key": [canonical[k] for k in keys.filter(pa.array(picked)).to_pylist()],
            "value": pd.to_numeric(pd.Series(raw, dtype=object), errors="coerce").to_numpy(dtype=float)}))
    if not parts:
        return empty
    obs = pd.concat(parts, ignore_index=True)
    return obs[np.isfinite(obs["value"]) & ~is_sentinel(obs["value"].to_numpy(dtype=float))].reset_index(drop=True)


def _shown(x: float) -> Any:
    return int(x) if float(x).is_integer() else round(float(x), SHOWN_PLACES)


def rare_limit(peers: int) -> float:
    """How many of ``peers`` values may lie near a value that is rare: ``max(1, RARE_SHARE * peers)``."""
    return max(1.0, RARE_SHARE * peers)


@dataclass(frozen=True)
class PeerState:
    """One (peer group, key): the summary of its values and the values that wait to be scored.

    Until the group has ``MIN_PEERS`` values none is scored; ``pending`` keeps each value
    that no other lies near so far (the only ones that can turn out rare), latest per
    subject, with the fields its finding needs (``PENDING_COLUMNS``: the push's already
    redacted identity fields, time and subject fingerprint). They are scored with the
    batch that brings the group to ``MIN_PEERS`` and then dropped, so the state holds at
    most ``MIN_PEERS`` of them, and none once the group is that large.
    """

    summary: NumericSummary = field(default_factory=NumericSummary)
    pending: tuple[tuple[Any, ...], ...] = ()  # (value, *PENDING_COLUMNS)

    @property
    def count(self) -> int:
        return self.summary.count

    def to_obj(self) -> dict[str, Any]:
        body = self.summary.to_obj()
        if self.pending:
            body["pending"] = [list(p) for p in self.pending]
        return body

    def to_json(self) -> str:
        return json.dumps(self.to_obj(), separators=(",", ":"))

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> PeerState:
        """The state from its JSON object; a bare summary (what earlier releases stored) has nothing pending."""
        return cls(NumericSummary.from_obj(obj), tuple(tuple(p) for p in obj.get("pending", [])))

    @classmethod
    def from_json(cls, data: str | None) -> PeerState:
        return cls.from_obj(json.loads(data)) if data else cls()

    def pending_frame(self) -> pd.DataFrame:
        return _timed(pd.DataFrame([list(p) for p in self.pending], columns=["value", *PENDING_COLUMNS]))


def peer_states_to_json(states: Mapping[str, PeerState]) -> str:
    """One peer group's states (config key -> PeerState) as one JSON object: a ``fleet|<group>`` key's state."""
    return json.dumps({k: s.to_obj() for k, s in sorted(states.items())}, separators=(",", ":"))


def peer_states_from_json(data: str | None) -> dict[str, PeerState]:
    """The inverse of :func:`peer_states_to_json` (``None``: a group not seen yet)."""
    return {str(k): PeerState.from_obj(v) for k, v in json.loads(data).items()} if data else {}


def _plain(value: Any) -> Any:
    """A context value as JSON keeps it: None for missing, ints as they are, anything else as text."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    return int(value) if isinstance(value, (int, np.integer)) else str(value)


def _timed(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its ``timestamp_ms`` as ``event_times`` reads it (all null if it has none).

    One dtype for the times whatever pandas gave them, so observations joined to waiting values (only
    then: a group without waiting values pays nothing) concatenate without pandas guessing a dtype
    from an all-null column.
    """
    times = frame["timestamp_ms"] if "timestamp_ms" in frame else pd.Series(None, index=frame.index, dtype=object)
    return frame.assign(timestamp_ms=event_times(times))


def _still_pending(candidates: pd.DataFrame, summary: NumericSummary, min_peers: int) -> tuple[tuple[Any, ...], ...]:
    """The candidates that can still turn out rare once the group has ``min_peers`` values, latest per subject."""
    near = summary.near_counts(_log(candidates["value"].to_numpy(dtype=float)), RARE_RADIUS)
    alone = candidates[near <= rare_limit(min_peers)]
    alone = alone[alone[SUBJECT].isna() | ~alone.duplicated(SUBJECT, keep="last")].tail(min_peers)
    # times as to_table reads them: int milliseconds or NA, whatever dtype pandas gave the column
    pending = _timed(alone)
    columns = [pending[c].tolist() for c in ("value", *PENDING_COLUMNS)]
    return tuple((float(v), *(_plain(x) for x in rest)) for v, *rest in zip(*columns, strict=True))


_NONE: Final = raw_frame()  # no findings: one frame shared by every caller, who must not change it


def score_group(peer_group: str, key: str, observations: pd.DataFrame, prior: PeerState,
                min_peers: int = MIN_PEERS) -> tuple[pd.DataFrame, PeerState, pd.DataFrame]:
    """Score one (peer group, key): raw findings, the new state, and the context the findings' ``row`` indexes.

    The context is ``observations`` (positionally) followed by the pending values scored now.
    """
    observations = observations.reset_index(drop=True)
    values = observations["value"].to_numpy(dtype=float)
    summary = prior.summary.add(values) if len(values) else prior.summary
    if summary.count < min_peers:
        fresh = observations.reindex(columns=["value", *PENDING_COLUMNS])
        candidates = pd.concat([prior.pending_frame(), _timed(fresh)], ignore_index=True) if prior.pending else fresh
        return _NONE, PeerState(summary, _still_pending(candidates, summary, min_peers)), observations
    context = observations
    if prior.pending:
        waiting = prior.pending_frame()
        if SUBJECT in observations:  # a client that pushed again: its new value stands
            waiting = waiting[~waiting[SUBJECT].isin(observations[SUBJECT].dropna())]
        context = pd.concat([_timed(observations), waiting], ignore_index=True) if len(waiting) else observations
    state = PeerState(summary)
    if context.empty:
        return _NONE, state, context
    values = context["value"].to_numpy(dtype=float)
    peers = summary.count
    q1, q3 = summary.quantile_log(0.25), summary.quantile_log(0.75)
    reach = max(IQR_K * (q3 - q1), MIN_LOG_DISTANCE)
    ys = _log(values)
    out_by = np.maximum(q1 - reach - ys, ys - q3 - reach)
    near = summary.near_counts(ys, RARE_RADIUS)
    hits = np.flatnonzero((out_by > 0) & (near <= rare_limit(peers)))
    median_value = _shown(float(f"{_unlog(summary.median_log()):.{SHOWN_DIGITS}g}"))
    usual = [_shown(float(f"{_unlog(q):.{SHOWN_DIGITS}g}")) for q in (q1, q3)]
    out = [{
        "row": int(i), "rule": RULE, "keys": (key,),
        "message": MESSAGE.format(key=key, value=_shown(values[i]), near=int(near[i]), peers=peers,
                                  peer_group=peer_group, decades=out_by[i] + reach, low=usual[0], high=usual[1]),
        "evidence": {"peer_group": peer_group, "value": _shown(values[i]), "peer_median": median_value,
                     "peer_iqr": usual, "peers": peers, "peers_near_value": int(near[i]),
                     "decades_outside": round(float(out_by[i]), DECADES_PLACES)},
    } for i in hits]
    return (raw_frame(out) if out else _NONE), state, context


def score_observations(observations: pd.DataFrame, state: Mapping[tuple[str, str], PeerState],
                       min_peers: int = MIN_PEERS
                       ) -> tuple[pd.DataFrame, dict[tuple[str, str], PeerState], pd.DataFrame]:
    """Score a whole batch against ``state`` (no Spark): raw findings, the new states, and the findings' context."""
    new_state = dict(state)
    found, contexts, offset = [], [], 0
    for (group, key), part in observations.groupby(["peer_group", "key"], sort=True):
        raw, peer, context = score_group(str(group), str(key), part,
                                         state.get((str(group), str(key)), PeerState()), min_peers)
        new_state[(str(group), str(key))] = peer
        if not raw.empty:
            found.append(raw.assign(row=raw["row"] + offset))
            contexts.append(context)
            offset += len(context)
    if not found:
        return raw_frame(), new_state, observations.iloc[:0]
    return pd.concat(found, ignore_index=True), new_state, pd.concat(contexts, ignore_index=True)

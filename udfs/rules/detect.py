"""``detect``: every stateless rule over one batch of decoded pushes, as contract finding rows.

The batch function Spark runs (``mapInArrow``/``applyInPandas``) and tests call
directly. Input: decoded, valid ``config_push`` rows (contract event fields and
``configs``) as an Arrow table or pandas frame. Output: an Arrow table with the
schema ``udfs.rules.findings.FINDING_SCHEMA`` (evidence as a JSON string). The
stateful rules (fleet outliers, group drift) have their own pure functions in
``udfs.rules.fleet`` and ``udfs.rules.groups``; ``detect_with_state`` runs them
too, threading their state through in memory (Spark keeps it in state stores).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd
import pyarrow as pa

from configwatch.secrets import SecretStr
from udfs.rules.anomalies import evaluate
from udfs.rules.batch import PushBatch
from udfs.rules.effective import Effective, effective
from udfs.rules.findings import concat_raw, empty_findings, to_table
from udfs.rules.fleet import PeerState, fleet_observations, score_observations
from udfs.rules.groups import GroupState, drift_batch, group_observations
from udfs.rules.leaks import leak_findings
from udfs.rules.typos import typo_findings
from udfs.sensitivity import custom_mask

__all__ = ["DetectionState", "detect", "detect_batch", "detect_with_state"]


def detect_batch(batch: PushBatch, key: SecretStr, now_ms: int, eff: Effective | None = None) -> pa.Table:
    """The stateless findings of an already flattened batch (``eff``: its effective values, if computed)."""
    if batch.n == 0:
        return empty_findings()
    custom = custom_mask(batch)
    leaks = leak_findings(batch, key, custom)
    typos = typo_findings(batch.entry_row, batch.keys.to_numpy(zero_copy_only=False), batch.safe_keys, custom,
                          batch.entry_profile_ids())
    anomalies = evaluate(effective(batch) if eff is None else eff)
    raw = concat_raw([leaks, typos, anomalies])
    return to_table(raw, batch.context, key, now_ms)


def detect(pushes: pa.Table | pd.DataFrame, key: SecretStr, now_ms: int) -> pa.Table:
    """Findings of every stateless rule for a batch of decoded ``config_push`` rows."""
    return detect_batch(PushBatch.from_pushes(pushes, key), key, now_ms)


@dataclass(frozen=True)
class DetectionState:
    """The stateful rules' state outside Spark: fleet summaries (and values waiting to be scored), group members."""

    fleet: Mapping[tuple[str, str], PeerState] = field(default_factory=dict)
    groups: Mapping[str, GroupState] = field(default_factory=dict)


def detect_with_state(pushes: pa.Table | pd.DataFrame, key: SecretStr, now_ms: int,
                      state: DetectionState | None = None) -> tuple[pa.Table, DetectionState]:
    """Stateless and stateful findings of one batch, threading the state through (tests, replays)."""
    state = state or DetectionState()
    batch = PushBatch.from_pushes(pushes, key)
    if batch.n == 0:
        return empty_findings(), state
    eff = effective(batch)
    stateless = detect_batch(batch, key, now_ms, eff)
    obs = fleet_observations(batch)
    fleet_raw, fleet, fleet_context = score_observations(obs, state.fleet)
    groups_obs = group_observations(batch, eff, key)
    drift_raw, groups = drift_batch(groups_obs, state.groups)
    tables = [stateless, to_table(fleet_raw, fleet_context, key, now_ms), to_table(drift_raw, groups_obs, key, now_ms)]
    return pa.concat_tables(tables).sort_by([("alert_id", "ascending")]), DetectionState(fleet, groups)

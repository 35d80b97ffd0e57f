"""Detection as two plain functions Spark can run: ``prepare`` per batch, ``step`` per state key.

``prepare`` turns a batch of decoded pushes into rows, each with a ``state_key``:
``fleet|<peer group>`` for a push's numeric values (fleet outliers; one row per push
with its config keys and values as lists, so the push's context travels once, not once
per value; the key's state holds every config key's summary of the group, so a batch
makes one call per peer group, not one per group and key),
``group|<group id fingerprint>`` for a consumer's group membership (group drift),
and ``pass|<n>`` for a finding of the stateless rules, carried as its contract
JSON record in ``finding`` with its ``alert_id`` in ``out_key`` (so the job decodes
and detects in one pass, and everything leaves through one operator). ``step``
takes every row of one state key plus that key's state (JSON text, ``None`` at
first) and returns contract finding rows and the new state (``None``: nothing to
keep). A group row's ``subject_fp`` is the group's (``group:<fingerprint>``) and
``member_fp`` the pushing client's, so group findings get one ``alert_id`` per
rule and group. Spark groups by ``state_key`` and keeps the JSON in its state store;
:func:`detect_with_state` does the same in memory (tests, the evaluation set, the
bench), so there is one orchestration. Neither the state keys nor the state ever hold a raw
group id or a sensitive value: fingerprints, documented key names and numbers, and,
for a peer group that has not reached ``MIN_PEERS`` values yet, the few values that
wait to be scored with the already redacted identity fields their finding will
carry (``udfs.rules.fleet.PeerState``; a secret in an identity field is its marker).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from configwatch.secrets import SecretStr
from udfs.rules.batch import CONTEXT_COLUMNS, SUBJECT, PushBatch
from udfs.rules.detect import detect_batch
from udfs.rules.effective import Effective, effective
from udfs.rules.exceptions import RulesError
from udfs.rules.findings import contract_json, empty_findings, from_contract_json, to_table
from udfs.rules.fleet import (
    PeerState,
    fleet_values,
    peer_states_from_json,
    peer_states_to_json,
    score_observations,
)
from udfs.rules.groups import MEMBER, GroupState, drift, group_observations

__all__ = ["FLEET", "GROUP", "KEY_SEP", "OBSERVATION_SCHEMA", "PASS", "PASS_BUCKETS", "DetectionState",
           "detect_with_state", "pass_key", "prepare", "step"]

FLEET = "fleet"
GROUP = "group"
PASS = "pass"
PASS_BUCKETS = 8  # stateless rows spread over a few keys (one Python call per key and batch)
KEY_SEP = "|"  # between a state key's kind and the rest: ``<kind>|...`` (udfs.pipeline.key_kind)
CONFIG_KEYS = "config_keys"
CONFIG_VALUES = "config_values"

OBSERVATION_SCHEMA = pa.schema([
    pa.field("state_key", pa.string()),
    pa.field("peer_group", pa.string()),
    pa.field(CONFIG_KEYS, pa.list_(pa.string())),  # a fleet row's config keys and their values
    pa.field(CONFIG_VALUES, pa.list_(pa.float64())),
    pa.field("group_fp", pa.string()),
    pa.field("group", pa.string()),
    pa.field("protocol", pa.string()),
    pa.field("strategy", pa.string()),
    pa.field(MEMBER, pa.string()),
    *[pa.field(name, pa.int64() if name == "timestamp_ms" else pa.string()) for name in CONTEXT_COLUMNS],
    pa.field(SUBJECT, pa.string()),
    pa.field("finding", pa.string()),
    pa.field("out_key", pa.string()),
])


def pass_key(out_key: str) -> str:
    """The ``pass|<n>`` state key of a stateless row, spread by its output key."""
    return f"{PASS}{KEY_SEP}{zlib.crc32(out_key.encode('utf-8', 'surrogatepass')) % PASS_BUCKETS}"


def _frame(df: pd.DataFrame, lists: Mapping[str, pa.Array] | None = None) -> pa.Table:
    """``df``'s columns and ``lists`` in ``OBSERVATION_SCHEMA`` (absent ones null)."""
    arrays = []
    for f in OBSERVATION_SCHEMA:
        if lists and f.name in lists:
            arrays.append(lists[f.name])
        elif f.name not in df.columns:
            arrays.append(pa.nulls(len(df), f.type))
        elif f.type == pa.int64():
            arrays.append(pa.array(pd.to_numeric(df[f.name], errors="coerce").astype("Int64"), f.type))
        elif f.type == pa.float64():
            arrays.append(pa.array(pd.to_numeric(df[f.name], errors="coerce").astype(float), f.type))
        else:
            col = df[f.name].astype(object)
            arrays.append(pa.array(col.where(col.notna(), None).tolist(), f.type))
    return pa.Table.from_arrays(arrays, schema=OBSERVATION_SCHEMA)


def _fleet_rows(batch: PushBatch) -> pa.Table:
    """Fleet rows: per push and peer group its values as lists, with the push's context once."""
    values = fleet_values(batch)
    n = len(values)
    if n == 0:
        starts = np.arange(n)
    else:  # a run of one push's values in one peer group (fleet_values keeps them adjacent)
        rows, groups = values["row"].to_numpy(), values["peer_group"].to_numpy(dtype=object)
        starts = np.flatnonzero(np.r_[True, (rows[1:] != rows[:-1]) | (groups[1:] != groups[:-1])])
    offsets = pa.array(np.r_[starts, n], pa.int32())
    first = values.iloc[starts].reset_index(drop=True)
    state_key = FLEET + KEY_SEP + first["peer_group"].astype(str)
    context = batch.context[[*CONTEXT_COLUMNS, SUBJECT]].iloc[first["row"].to_numpy()].reset_index(drop=True)
    frame = pd.concat([first[["peer_group"]], context], axis=1).assign(state_key=state_key)
    return _frame(frame, {
        CONFIG_KEYS: pa.ListArray.from_arrays(offsets, pa.array(values["key"].to_numpy(dtype=object), pa.string())),
        CONFIG_VALUES: pa.ListArray.from_arrays(offsets, pa.array(values["value"].to_numpy(dtype=float))),
    })


def _fleet_values(rows: pd.DataFrame) -> pd.DataFrame:
    """A fleet key's rows, one per value again: ``key`` and ``value`` beside each push's context."""
    keys, values = rows[CONFIG_KEYS].tolist(), rows[CONFIG_VALUES].tolist()
    lengths = np.fromiter((len(k) for k in keys), dtype=np.int64, count=len(keys))
    out = rows.drop(columns=[CONFIG_KEYS, CONFIG_VALUES]).iloc[np.repeat(np.arange(len(rows)), lengths)]
    out = out.reset_index(drop=True)
    out["key"] = np.concatenate(keys).astype(object) if len(keys) else np.array([], dtype=object)
    out["value"] = np.concatenate(values).astype(float) if len(values) else np.array([], dtype=float)
    return out


def _observations(batch: PushBatch, eff: Effective, key: SecretStr) -> pa.Table:
    groups = group_observations(batch, eff, key)
    groups = groups.assign(state_key=GROUP + KEY_SEP + groups["group_fp"].astype(str))
    return pa.concat_tables([_fleet_rows(batch), _frame(groups)])


def prepare(pushes: pa.Table | pd.DataFrame, key: SecretStr, now_ms: int) -> pa.Table:
    """Stateless findings (as ``pass`` rows) and stateful observations of a batch, one table."""
    batch = PushBatch.from_pushes(pushes, key)
    if batch.n == 0:
        return OBSERVATION_SCHEMA.empty_table()
    eff = effective(batch)
    found = detect_batch(batch, key, now_ms, eff)
    ids = found.column("alert_id").to_pylist()
    passed = pd.DataFrame({"state_key": [pass_key(i) for i in ids], "finding": contract_json(found),
                           "out_key": ids})
    return pa.concat_tables([_frame(passed), _observations(batch, eff, key)])


def step(state_key: str, observations: pd.DataFrame, state: str | None, key: SecretStr,
         now_ms: int) -> tuple[pa.Table, str | None]:
    """Findings of one state key's rows against its state, and the new state (JSON; None: keep nothing)."""
    observations = observations.reset_index(drop=True)
    kind, _, rest = state_key.partition(KEY_SEP)
    if kind == PASS:
        return from_contract_json([t for t in observations["finding"] if isinstance(t, str)]), None
    if kind == FLEET:
        observations = _fleet_values(observations)
        peer_group = rest
        prior = {(peer_group, k): s for k, s in peer_states_from_json(state).items()}
        raw, states, context = score_observations(observations, prior)
        return to_table(raw, context, key, now_ms), peer_states_to_json({k: s for (_, k), s in states.items()})
    if kind == GROUP:
        raw, members = drift(observations, GroupState.from_json(state))
        return to_table(raw, observations, key, now_ms), members.to_json()
    raise RulesError(f"unknown state key kind in {state_key!r}")


@dataclass(frozen=True)
class DetectionState:
    """Detection state outside Spark: per state key, the JSON the job's state store would hold."""

    states: Mapping[str, str] = field(default_factory=dict)

    @property
    def fleet(self) -> dict[tuple[str, str], PeerState]:
        """Per (peer group, config key), its peer summary."""
        out = {}
        for state_key, text in self.states.items():
            kind, _, rest = state_key.partition(KEY_SEP)
            if kind == FLEET:
                out.update({(rest, k): s for k, s in peer_states_from_json(text).items()})
        return out

    @property
    def groups(self) -> dict[str, GroupState]:
        """Per group fingerprint, its members."""
        return {state_key.partition(KEY_SEP)[2]: GroupState.from_json(text) for state_key, text in self.states.items()
                if state_key.startswith(GROUP + KEY_SEP)}


def detect_with_state(pushes: pa.Table | pd.DataFrame, key: SecretStr, now_ms: int,
                      state: DetectionState | None = None) -> tuple[pa.Table, DetectionState]:
    """The job's detection in memory: :func:`prepare`, then :func:`step` per state key, threading the state."""
    state = state or DetectionState()
    rows = prepare(pushes, key, now_ms).to_pandas()
    if rows.empty:
        return empty_findings(), state
    states = dict(state.states)
    found = [empty_findings()]
    for state_key, group in rows.groupby("state_key", sort=True):
        table, new_state = step(str(state_key), group, states.get(str(state_key)), key, now_ms)
        if new_state is not None:
            states[str(state_key)] = new_state
        found.append(table)
    return pa.concat_tables(found).sort_by([("alert_id", "ascending")]), DetectionState(states)

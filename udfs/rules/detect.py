"""``detect``: every stateless rule over one batch of decoded pushes, as contract finding rows.

The batch function Spark runs (``mapInArrow``/``applyInPandas``) and tests call
directly. Input: decoded, valid ``config_push`` rows (contract event fields and
``configs``) as an Arrow table or pandas frame. Output: an Arrow table with the
schema ``udfs.rules.findings.FINDING_SCHEMA`` (evidence as a JSON string). The
stateful rules (fleet outliers, group drift) run per state key in
``udfs.rules.stateful``, which also has ``detect_with_state``: the job's detection,
stateless and stateful, in memory.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from configwatch.secrets import SecretStr
from udfs.rules.anomalies import evaluate
from udfs.rules.batch import PushBatch
from udfs.rules.effective import Effective, effective
from udfs.rules.findings import concat_raw, empty_findings, to_table
from udfs.rules.leaks import leak_findings
from udfs.rules.role_keys import other_role_findings
from udfs.rules.typos import typo_findings
from udfs.sensitivity import custom_mask

__all__ = ["detect", "detect_batch"]


def detect_batch(batch: PushBatch, key: SecretStr, now_ms: int, eff: Effective | None = None) -> pa.Table:
    """The stateless findings of an already flattened batch (``eff``: its effective values, if computed)."""
    if batch.n == 0:
        return empty_findings()
    custom = custom_mask(batch)
    leaks = leak_findings(batch, key, custom)
    typos = typo_findings(batch.entry_row, batch.keys.to_numpy(zero_copy_only=False), batch.safe_keys, custom,
                          batch.entry_profile_ids())
    anomalies = evaluate(effective(batch) if eff is None else eff)
    raw = concat_raw([leaks, typos, other_role_findings(batch), anomalies])
    return to_table(raw, batch.context, key, now_ms)


def detect(pushes: pa.Table | pd.DataFrame, key: SecretStr, now_ms: int) -> pa.Table:
    """Findings of every stateless rule for a batch of decoded ``config_push`` rows."""
    return detect_batch(PushBatch.from_pushes(pushes, key), key, now_ms)

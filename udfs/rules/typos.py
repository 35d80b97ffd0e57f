"""Likely typos: unknown keys within edit distance 2 of a key the client family knows.

The Java client only logs an unknown key as unused and carries on, so a typo
silently leaves the intended setting at its default. Work is per distinct
(profile, unknown key) pair and cached across batches, never per entry; the
distance is the optimal-string-alignment (Damerau) distance, bounded at 2, and at
1 for keys of five characters or fewer (short keys are too close to everything).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from udfs.rules.findings import raw_frame
from udfs.rules.keysets import IGNORES_UNKNOWN_KEYS, parse_profile_id, profile

__all__ = ["MAX_DISTANCE", "MESSAGE", "RULE", "SHORT_KEY", "edit_distance", "nearest_known", "typo_findings"]

MAX_DISTANCE = 2
SHORT_KEY = 5
RULE = "unknown-key-typo"
MESSAGE = ("unknown key {key} is {distance} edit(s) from the known key {name}; the client ignores it and {name} "
           "keeps its value.")


def edit_distance(a: str, b: str, bound: int = MAX_DISTANCE) -> int:
    """Optimal string alignment distance of ``a`` and ``b``; any value above ``bound`` is ``bound + 1``."""
    if abs(len(a) - len(b)) > bound:
        return bound + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > bound:
            return bound + 1
        prev2, prev = prev, cur
    return min(prev[len(b)], bound + 1)


@functools.lru_cache(maxsize=65_536)
def nearest_known(profile_id: str, key: str) -> tuple[str, int] | None:
    """The closest known key of the profile within the bound, or None (ties: alphabetical)."""
    prof = profile(*parse_profile_id(profile_id))
    bound = 1 if len(key) <= SHORT_KEY else MAX_DISTANCE
    candidates: list[tuple[int, str, str]] = []
    names = [(name, "") for name in prof.known_names]
    for prefix, under in prof.prefixes.items():
        if key.startswith(prefix) and under:
            names += [(prefix + name, prefix) for name in under]
    for name, _ in names:
        if name == key:
            return None
        d = edit_distance(key, name, bound)
        if d <= bound:
            candidates.append((d, name, key))
    if not candidates:
        return None
    d, name, _ = min(candidates)
    return name, d


def typo_findings(entry_row: np.ndarray, keys: np.ndarray, safe_keys: np.ndarray, unknown: np.ndarray,
                  entry_profiles: np.ndarray) -> pd.DataFrame:
    """Findings (row, rule, keys, message, evidence) for unknown keys that look like typos of known ones."""
    usable = unknown & (keys == safe_keys) & pd.notna(entry_profiles)
    # A client that rejects unknown keys never runs (so never pushes) with a typo; Go code cannot make one.
    candidates = pd.Series(entry_profiles[usable], dtype=object)
    ignored = {p: profile(*parse_profile_id(p)).unknown_keys == IGNORES_UNKNOWN_KEYS for p in candidates.unique()}
    usable[usable] = candidates.map(ignored).to_numpy(dtype=bool)
    frame = pd.DataFrame({"row": entry_row[usable], "key": keys[usable], "profile": entry_profiles[usable]})
    distinct = frame[["profile", "key"]].drop_duplicates()
    matches = [nearest_known(p, k) for p, k in distinct.itertuples(index=False, name=None)]
    distinct = distinct.assign(name=pd.Series([m[0] if m else None for m in matches], index=distinct.index,
                                              dtype=object),
                               distance=pd.Series([m[1] if m else None for m in matches], index=distinct.index,
                                                  dtype=object))
    hits = frame.merge(distinct[distinct["name"].notna()], on=["profile", "key"])
    out = [{
        "row": int(row), "rule": RULE, "keys": (key,),
        "message": MESSAGE.format(key=key, distance=int(distance), name=name),
        "evidence": {"suggestion": name, "distance": int(distance)},
    } for row, key, name, distance in hits[["row", "key", "name", "distance"]].itertuples(index=False, name=None)]
    return raw_frame(out)

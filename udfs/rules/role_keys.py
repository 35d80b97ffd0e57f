"""Keys of the other role: a producer that set a consumer's key, or a consumer a producer's.

Both Java and librdkafka accept such a key and ignore it (librdkafka logs "is a
consumer property and will be ignored by this producer instance", Java that it
"isn't a known config"), so the setting the application relies on does not exist.
A key is of the other role when the push's key set (family and release) knows it
but not for the push's own role; only keys the user set count. Work is per profile
with Arrow set lookups, never per entry.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd
import pyarrow as pa

from udfs.rules.batch import PushBatch
from udfs.rules.findings import raw_frame

__all__ = ["JUDGED", "MESSAGE", "RULE", "other_role_findings"]

RULE: Final = "key-of-other-role"
JUDGED: Final = {"producer": "consumer", "consumer": "producer"}  # a role and the role whose keys it ignores
FAMILIES: Final = ("java", "librdkafka")  # kafka-python refuses such a keyword; Go has one config for every role
MESSAGE: Final = "{key} is a {other} setting: this {role} ignores it."


def other_role_findings(batch: PushBatch) -> pd.DataFrame:
    """Findings (row, rule, keys, message, evidence) for keys of the other role that the user set."""
    out = []
    for pid, prof in batch.profiles.items():
        if prof.role not in JUDGED or prof.judge not in FAMILIES:
            continue
        mine = batch.profile_codes.get(pid, np.zeros(0, dtype=np.int64))
        mine = mine[~batch.is_default[mine]]
        if not len(mine):
            continue
        hits = mine[prof.other_role_mask(batch.keys.take(pa.array(mine)))]
        for i in hits.tolist():
            key = str(batch.safe_keys[i])
            out.append({"row": int(batch.entry_row[i]), "rule": RULE, "keys": (key,),
                        "message": MESSAGE.format(key=key, other=JUDGED[prof.role], role=prof.role),
                        "evidence": {"role": prof.role}})
    return raw_frame(out)

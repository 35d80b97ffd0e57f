"""The draft KIP's sensitivity rules for config entries, in one place.

Used on the ingest edge (the policy redacts what these flag) and in the
streaming job (leak detection), so the two can never disagree. The KIP counts
an entry as sensitive when its ConfigDef type is PASSWORD or CLASS, or its key
starts with ``sasl.``/``security.``/``ssl.``, contains ``.sasl.``/``.security.``/
``.ssl.``, or ends with ``.class``/``.classes``. (Custom keys, also sensitive
under the KIP, need a client family's known key set: callers judge which keys are
custom with ``udfs.rules.keysets`` and pass that mask in; the rule id lives here.)
"""

from __future__ import annotations

from typing import Final

import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "KIP_SENSITIVE_INFIXES",
    "KIP_SENSITIVE_PREFIXES",
    "KIP_SENSITIVE_SUFFIXES",
    "KIP_SENSITIVE_TYPES",
    "RULE_CUSTOM",
    "RULE_INFIX",
    "RULE_PREFIX",
    "RULE_SUFFIX",
    "RULE_TYPE",
    "kip_sensitive_first",
    "kip_sensitive_reason",
    "kip_sensitive_rules",
]

KIP_SENSITIVE_TYPES: Final = ("PASSWORD", "CLASS")
KIP_SENSITIVE_PREFIXES: Final = ("sasl.", "security.", "ssl.")
KIP_SENSITIVE_INFIXES: Final = (".sasl.", ".security.", ".ssl.")
KIP_SENSITIVE_SUFFIXES: Final = (".class", ".classes")

# Stable rule ids (the rule catalog documents them; findings carry them).
RULE_TYPE: Final = "kip-sensitive-type"
RULE_PREFIX: Final = "kip-sensitive-prefix"
RULE_INFIX: Final = "kip-sensitive-infix"
RULE_SUFFIX: Final = "kip-sensitive-suffix"
RULE_CUSTOM: Final = "kip-sensitive-custom"


def kip_sensitive_reason(key: str, type_name: str, custom: bool = False) -> str | None:
    """The first KIP rule id that makes this entry sensitive, or None.

    ``custom`` says the key is outside the client family's known key set; it is
    judged last, so a custom ``ssl.`` key still reports the prefix rule.
    """
    if type_name in KIP_SENSITIVE_TYPES:
        return RULE_TYPE
    if key.startswith(KIP_SENSITIVE_PREFIXES):
        return RULE_PREFIX
    if any(infix in key for infix in KIP_SENSITIVE_INFIXES):
        return RULE_INFIX
    if key.endswith(KIP_SENSITIVE_SUFFIXES):
        return RULE_SUFFIX
    if custom:
        return RULE_CUSTOM
    return None


def _any(masks: list[pa.ChunkedArray | pa.Array]) -> pa.Array:
    out = masks[0]
    for m in masks[1:]:
        out = pc.or_(out, m)
    return pc.fill_null(out, False)


def kip_sensitive_rules(keys: pa.Array, types: pa.Array) -> dict[str, pa.Array]:
    """Vectorized: for each KIP rule id, a boolean mask over the (key, type) pairs."""
    return {
        RULE_TYPE: pc.fill_null(pc.is_in(types, value_set=pa.array(KIP_SENSITIVE_TYPES)), False),
        RULE_PREFIX: _any([pc.starts_with(keys, p) for p in KIP_SENSITIVE_PREFIXES]),
        RULE_INFIX: _any([pc.match_substring(keys, s) for s in KIP_SENSITIVE_INFIXES]),
        RULE_SUFFIX: _any([pc.ends_with(keys, s) for s in KIP_SENSITIVE_SUFFIXES]),
    }


def kip_sensitive_first(keys: pa.Array, types: pa.Array, custom: pa.Array | None = None) -> pa.Array:
    """Vectorized :func:`kip_sensitive_reason`: the first rule id per entry, null when none applies."""
    masks = kip_sensitive_rules(keys, types)
    ids = [RULE_TYPE, RULE_PREFIX, RULE_INFIX, RULE_SUFFIX]
    conds = [masks[i] for i in ids]
    if custom is not None:
        ids.append(RULE_CUSTOM)
        conds.append(pc.fill_null(custom, False))
    cond = pa.StructArray.from_arrays(
        [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in conds],
        names=[f"c{i}" for i in range(len(conds))],
    )
    return pc.case_when(cond, *[pa.scalar(i, pa.string()) for i in ids])

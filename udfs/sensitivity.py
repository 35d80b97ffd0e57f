"""Which config entries are sensitive: decided here, once, for the edge, the job and the dashboard.

An entry is sensitive, checked in this order (the first reason is reported):

1. the draft KIP's rules: ConfigDef type PASSWORD or CLASS; a key starting with
   ``sasl.``/``security.``/``ssl.``, containing ``.sasl.``/``.security.``/``.ssl.``
   or ending with ``.class``/``.classes`` (judged on the normalised key:
   :func:`normalize_key` folds case, Unicode forms, whitespace and invisible
   characters, so ``SASL.JAAS.CONFIG`` or a zero-width variant is no way around them);
2. a key whose words say it holds a secret, in any naming style (dotted, snake,
   camel: ``sasl_plain_password``, ``Net.SASL.Password``, ``SASLPlainPassword``,
   ``basic.auth.user.info``, ``datadog.api.key``), whatever the client;
3. a custom key: outside the client family's known key set, or, for a client of
   no known family, outside every known key set (the KIP: custom configuration
   used by the application or SerDes may hold anything);
4. a value with a secret in it (``udfs.rules.secretscan``), whatever the key.

An identity field (client id, principal, software name, ...) with a secret in it is
replaced by its ``redacted:<fingerprint>`` marker wherever it travels
(:func:`mask_identity` for one event at the edge, :func:`masked_identities` for one
field of many events; the job's findings mask whole batches).

:func:`sensitive_first` is the vectorized decision; :func:`sensitive_reason` the
same for one entry. Callers that know the client judge custom keys with
``udfs.rules.keysets`` and pass that mask in.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
import unicodedata
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from configwatch.records import Event
from configwatch.secrets import SecretStr
from udfs.rules.batch import IDENTITY_FIELDS, PushBatch, redacted_marker
from udfs.rules.keysets import known_anywhere
from udfs.rules.secretscan import mask_secrets, scan, scan_identity

__all__ = [
    "CAMEL_BOUNDARY",
    "DROPPED_CATEGORIES",
    "KIP_SENSITIVE_INFIXES",
    "KIP_SENSITIVE_PREFIXES",
    "KIP_SENSITIVE_SUFFIXES",
    "KIP_SENSITIVE_TYPES",
    "RULE_CUSTOM",
    "RULE_INFIX",
    "RULE_NAME",
    "RULE_PREFIX",
    "RULE_SUFFIX",
    "RULE_TYPE",
    "SECRET_PAIRS",
    "SECRET_WORDS",
    "WORD",
    "custom_mask",
    "holding_secrets",
    "identity_values",
    "key_words",
    "kip_client_reason",
    "mask_identity",
    "masked_identities",
    "normalize_key",
    "sensitive_entries",
    "sensitive_first",
    "sensitive_key_first",
    "sensitive_reason",
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
RULE_NAME: Final = "sensitive-key-name"

# Words (after splitting a key into words) and word pairs that say the value is a secret.
SECRET_WORDS: Final = frozenset({
    "password", "passwd", "pwd", "passphrase", "secret", "secrets", "token", "tokens", "credential",
    "credentials", "creds", "apikey", "userinfo", "jaas", "keystore", "truststore", "privatekey",
})
SECRET_PAIRS: Final = frozenset({
    ("api", "key"), ("user", "info"), ("private", "key"), ("access", "key"), ("secret", "key"),
    ("key", "store"), ("trust", "store"), ("pass", "phrase"), ("pass", "word"),
})

CAMEL_BOUNDARY: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
WORD: Final = re.compile(r"[a-z0-9]+")
# Unicode categories a key loses before the rules read it: format (invisible), control, private use, surrogates.
DROPPED_CATEGORIES: Final = ("Cf", "Cc", "Co", "Cs")


def normalize_key(key: str) -> str:
    """``key`` as the rules read it: NFKC, invisible and control characters dropped, trimmed, lower case."""
    folded = unicodedata.normalize("NFKC", key)
    kept = "".join(ch for ch in folded if unicodedata.category(ch) not in DROPPED_CATEGORIES)
    return kept.strip().lower()


def key_words(key: str) -> tuple[str, ...]:
    """The words of a key in any naming style: ``Net.SASL.Password`` and ``sasl_plain_password`` alike."""
    folded = unicodedata.normalize("NFKC", key)
    kept = "".join(ch for ch in folded if unicodedata.category(ch) not in DROPPED_CATEGORIES)
    return tuple(WORD.findall(CAMEL_BOUNDARY.sub(" ", kept).lower()))


def kip_client_reason(key: str, type_name: str) -> str | None:
    """What a KIP-compliant client withholds by itself: the KIP's type/prefix/infix/suffix rules, literally.

    The client library and the fleet simulator model clients with it; everything
    downstream of a client judges with :func:`sensitive_first` instead.
    """
    if type_name in KIP_SENSITIVE_TYPES:
        return RULE_TYPE
    if key.startswith(KIP_SENSITIVE_PREFIXES):
        return RULE_PREFIX
    if any(infix in key for infix in KIP_SENSITIVE_INFIXES):
        return RULE_INFIX
    if key.endswith(KIP_SENSITIVE_SUFFIXES):
        return RULE_SUFFIX
    return None


@functools.lru_cache(maxsize=65_536)
def _key_reason(key: str) -> str | None:
    """The key-name rules (KIP prefix/infix/suffix on the normalised key, then secret words)."""
    norm = normalize_key(key)
    if norm.startswith(KIP_SENSITIVE_PREFIXES):
        return RULE_PREFIX
    if any(infix in norm for infix in KIP_SENSITIVE_INFIXES):
        return RULE_INFIX
    if norm.endswith(KIP_SENSITIVE_SUFFIXES):
        return RULE_SUFFIX
    words = key_words(key)
    if SECRET_WORDS.intersection(words) or SECRET_PAIRS.intersection(itertools.pairwise(words)):
        return RULE_NAME
    return None


def sensitive_key_first(keys: pa.Array | pa.ChunkedArray, types: pa.Array | pa.ChunkedArray,
                        custom: pa.Array | np.ndarray | None = None) -> pa.Array:
    """Per entry, the first rule its type and key name (and ``custom`` mask) make it sensitive by, else null."""
    keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    distinct = pc.unique(keys)
    reasons = pa.array([None if k is None else _key_reason(k) for k in distinct.to_pylist()], pa.string())
    out = pc.take(reasons, pc.index_in(keys, value_set=distinct))
    typed = pc.fill_null(pc.is_in(types, value_set=pa.array(KIP_SENSITIVE_TYPES)), False)
    out = pc.if_else(typed, pa.scalar(RULE_TYPE), out)
    if custom is not None:
        mask = pc.fill_null(pa.array(custom, pa.bool_()), False)
        out = pc.if_else(pc.and_(pc.is_null(out), mask), pa.scalar(RULE_CUSTOM), out)
    return out


def sensitive_first(keys: pa.Array | pa.ChunkedArray, types: pa.Array | pa.ChunkedArray,
                    values: pa.Array | pa.ChunkedArray, custom: pa.Array | np.ndarray | None = None) -> pa.Array:
    """Per entry, why it is sensitive (key rules first, then a secret in its value), else null."""
    by_key = sensitive_key_first(keys, types, custom)
    return pc.coalesce(by_key, scan(values))


def sensitive_reason(key: str, type_name: str, value: str | None = None, custom: bool = False) -> str | None:
    """:func:`sensitive_first` for one entry."""
    out = sensitive_first(pa.array([key], pa.string()), pa.array([type_name], pa.string()),
                          pa.array([value], pa.string()), np.array([custom]))
    return out[0].as_py()


def custom_mask(batch: PushBatch) -> np.ndarray:
    """True for entries whose key is outside the known key set of the push's profile.

    A push with no profile (a client of no known family, or of a family without a
    documented key set) has no way to tell its own keys from custom ones: every key
    not known to any family counts as custom.
    """
    out = np.zeros(len(batch.keys), dtype=bool)
    entry_profiles = batch.entry_profile_ids()
    for pid, prof in batch.profiles.items():
        mine = entry_profiles == pid
        if mine.any():
            known = prof.known_mask(batch.keys.filter(pa.array(mine))).to_numpy(zero_copy_only=False)
            out[np.flatnonzero(mine)] = ~known
    unprofiled = np.array([p is None for p in entry_profiles], dtype=bool)
    if unprofiled.any():
        known = known_anywhere(batch.keys.filter(pa.array(unprofiled))).to_numpy(zero_copy_only=False)
        out[np.flatnonzero(unprofiled)] = ~known
    return out


def sensitive_entries(batch: PushBatch) -> pa.Array:
    """Per entry of ``batch``, why it is sensitive (null: not): what the edge, the job and the dashboard hide."""
    return sensitive_first(batch.keys, batch.types, batch.values, custom_mask(batch))


_SCANNED: dict[str, bool] = {}  # identity value -> holds a secret; a fleet repeats its names, ids and addresses
_SCANNED_MAX: Final = 16_384


def holding_secrets(values: Sequence[str]) -> set[str]:
    """Which of ``values`` (identity field values) hold a secret by the identity scan: one scan for the values not
    seen lately."""
    known = {v: _SCANNED.get(v) for v in values}
    fresh = [v for v, hit in known.items() if hit is None]
    if fresh:
        found = scan_identity(pa.array(fresh, pa.string())).to_pylist()
        known.update(zip(fresh, (kind is not None for kind in found), strict=True))
        if len(_SCANNED) + len(fresh) > _SCANNED_MAX:
            _SCANNED.clear()
        _SCANNED.update((v, bool(known[v])) for v in fresh)
    return {v for v, hit in known.items() if hit}


def identity_values(event: Event) -> dict[str, str]:
    """The event's identity fields that hold text: what ``mask_identity`` scans."""
    return {name: v for name in IDENTITY_FIELDS if isinstance(v := getattr(event, name), str) and v}


def mask_identity(event: Event, key: SecretStr) -> Event:
    """``event`` with every identity field that holds a secret replaced by its marker."""
    values = identity_values(event)
    secret = holding_secrets(list(values.values()))
    if not secret:
        return event
    masked: dict[str, Any] = {name: redacted_marker(v, key) for name, v in values.items() if v in secret}
    return dataclasses.replace(event, **masked)


def masked_identities(values: Sequence[Any], key: SecretStr | None) -> list[Any]:
    """One identity field's values with :func:`mask_identity`'s rule (one scan per distinct value); no key: as is."""
    present = [v for v in values if isinstance(v, str) and v]
    if key is None or not present:
        return list(values)
    shown = dict(zip(present, mask_secrets(present, lambda v: redacted_marker(v, key), identity=True), strict=True))
    return [shown.get(v, v) if isinstance(v, str) else v for v in values]

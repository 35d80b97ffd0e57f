"""Turn ``config_push`` records into :class:`ClientView` objects that hold no sensitive value.

Sensitivity is judged exactly as the ingest edge and the streaming job judge it:
``udfs.sensitivity.sensitive_entries`` (the draft KIP's rules on normalised keys,
secret words in any naming style, custom keys, secrets inside values), plus
secrets inside key names and copied identity fields such as ``client.id``
(``udfs.rules.batch``). A sensitive value is replaced by its
fingerprint (``configwatch.secrets.fingerprint``) inside :func:`safe_views`: the raw
records are parsed, judged in one vectorized pass over the whole poll batch, and
only the safe views leave this module. Entries the ingest policy already redacted
carry their fingerprint with them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from configwatch.contract import CONFIG_PUSH
from configwatch.errors import ContractError
from configwatch.records import Event
from configwatch.secrets import SecretStr, fingerprint
from sinks.dashboard.clients import ClientView, SafeEntry
from udfs.rules.batch import PushBatch
from udfs.sensitivity import sensitive_entries

__all__ = ["REDACTED_BY_POLICY", "safe_views"]

REDACTED_BY_POLICY = "redacted"
_NOT_JSON = object()

# One result per input record: a safe view, None (not a config_push), or the contract error.
Result = ClientView | ContractError | None


def _parse(raw: bytes) -> Event:
    try:
        obj = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        obj = _NOT_JSON
    if obj is _NOT_JSON:
        # Raised outside the handler: a JSONDecodeError holds the whole document, secrets included,
        # and must not ride along as this error's context.
        raise ContractError("not_json", "the record is not UTF-8 JSON")
    return Event.from_dict(obj)


def safe_views(raws: Sequence[bytes], key: SecretStr) -> list[Result]:
    """Judge a batch of input records at once; the raw values live only in this call."""
    results: list[Result] = [None] * len(raws)
    pushes: list[Event] = []
    slots: list[int] = []
    for i, raw in enumerate(raws):
        try:
            event = _parse(raw)
        except ContractError as exc:
            results[i] = exc
            continue
        if event.event == CONFIG_PUSH:
            pushes.append(event)
            slots.append(i)
    if not pushes:
        return results
    batch = PushBatch.from_events(pushes, key)
    sensitive = sensitive_entries(batch).to_pylist()
    in_key = batch.key_secret.to_pylist()
    values = batch.values.to_pylist()
    types = batch.types.to_pylist()
    prints = batch.entry_fingerprints.to_pylist()
    entries: list[list[SafeEntry]] = [[] for _ in pushes]
    for j, row in enumerate(batch.entry_row.tolist()):
        shown_key = str(batch.safe_keys[j])
        is_default = bool(batch.is_default[j])
        if batch.redacted[j]:
            entries[row].append(SafeEntry(shown_key, types[j], is_default, None, True, prints[j], REDACTED_BY_POLICY))
            continue
        reason = in_key[j] or sensitive[j]
        value = values[j]
        if reason is None:
            entries[row].append(SafeEntry(shown_key, types[j], is_default, value, False))
        else:
            digest = fingerprint(value, key) if value is not None else None
            entries[row].append(SafeEntry(shown_key, types[j], is_default, None, True, digest, reason))
    # Identity fields with any secret already replaced by its marker.
    context: list[dict[Any, Any]] = batch.context.to_dict("records")
    for row, (slot, event) in enumerate(zip(slots, pushes, strict=True)):
        safe = context[row]
        ident = safe["client_instance_id"] or event.connection_id
        if not ident:
            results[slot] = ContractError("no_client_identity",
                                          "a config_push without client_instance_id or connection_id")
            continue
        results[slot] = ClientView(
            client_instance_id=str(ident),
            timestamp_ms=event.timestamp_ms,
            entries=tuple(entries[row]),
            client_software_name=safe["client_software_name"],
            client_software_version=safe["client_software_version"],
            client_id=safe["client_id"],
            principal=safe["principal"],
            client_address=safe["client_address"],
            listener=event.listener,
            security_protocol=event.security_protocol,
            connection_id=event.connection_id,
            broker_id=event.broker_id,
        )
    return results

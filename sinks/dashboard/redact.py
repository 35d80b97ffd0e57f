"""Turn a ``config_push`` record into a :class:`ClientView` that holds no sensitive value.

Sensitivity is judged with the shared rules (``udfs.sensitivity``: the draft
KIP's type/prefix/infix/suffix rules). A sensitive value is replaced by its
fingerprint (``configwatch.secrets.fingerprint``) here, inside one call: the raw
record is parsed, each entry judged, and only the safe view leaves this module.
Entries the ingest policy already redacted carry their fingerprint with them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from configwatch.contract import CONFIG_PUSH
from configwatch.errors import ContractError
from configwatch.records import ConfigEntry, Event
from configwatch.secrets import SecretStr, fingerprint
from sinks.dashboard.clients import ClientView, SafeEntry
from udfs.sensitivity import kip_sensitive_reason

__all__ = ["REDACTED_BY_POLICY", "Judge", "kip_judge", "safe_view"]

REDACTED_BY_POLICY = "redacted"

# A judge looks at one entry (key, ConfigDef type, value) and returns the id of the
# rule that makes it sensitive, or None.
Judge = Callable[[str, str, str | None], str | None]


def kip_judge(key: str, type_name: str, value: str | None) -> str | None:
    """The draft KIP's rules: PASSWORD/CLASS types and sasl./security./ssl. keys, .class(es) suffixes."""
    return kip_sensitive_reason(key, type_name)


def _safe_entry(entry: ConfigEntry, judges: Sequence[Judge], key: SecretStr) -> SafeEntry:
    if entry.redacted:
        return SafeEntry(entry.key, entry.type, entry.is_default, None, True, entry.fingerprint,
                         REDACTED_BY_POLICY)
    reason = None
    for judge in judges:
        reason = judge(entry.key, entry.type, entry.value)
        if reason is not None:
            break
    if reason is None:
        return SafeEntry(entry.key, entry.type, entry.is_default, entry.value, False)
    digest = fingerprint(entry.value, key) if entry.value is not None else None
    return SafeEntry(entry.key, entry.type, entry.is_default, None, True, digest, reason)


def safe_view(raw: bytes, key: SecretStr, judges: Sequence[Judge] = (kip_judge,)) -> ClientView | None:
    """The safe view of one input record, or None when it is not a ``config_push``.

    Raises :class:`ContractError` when the record breaks the contract. The raw
    values live only in this call's locals.
    """
    try:
        obj = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        # ``from None``: a JSONDecodeError carries the whole document, secrets included.
        raise ContractError("not_json", "the record is not UTF-8 JSON") from None
    event = Event.from_dict(obj)
    if event.event != CONFIG_PUSH:
        return None
    ident = event.client_instance_id or event.connection_id
    if not ident:
        raise ContractError("no_client_identity", "a config_push without client_instance_id or connection_id")
    entries = tuple(_safe_entry(e, judges, key) for e in event.configs or ())
    return ClientView(
        client_instance_id=ident,
        timestamp_ms=event.timestamp_ms,
        entries=entries,
        client_software_name=event.client_software_name,
        client_software_version=event.client_software_version,
        client_id=event.client_id,
        principal=event.principal,
        client_address=event.client_address,
        listener=event.listener,
        security_protocol=event.security_protocol,
        connection_id=event.connection_id,
        broker_id=event.broker_id,
    )

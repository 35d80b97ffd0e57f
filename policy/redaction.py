"""Redaction at the edge: a sensitive entry loses its value before the push is published.

What is sensitive is ``udfs.sensitivity.sensitive_entries``, the one decision the
streaming job and the dashboard use too: the KIP's rules on normalised keys,
secret words in any naming style, custom keys (by the client's family, or every
unknown key for a client of no known family) and secrets inside values, plus a
key name that itself holds a secret (``udfs.rules.batch``), published as its
marker. A redacted entry is published as ``value: null, redacted: true,
fingerprint: <HMAC>`` (contract section 4).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from configwatch.contract import CONFIG_PUSH
from configwatch.records import ConfigEntry, Event
from configwatch.secrets import SecretStr, fingerprint
from policy.api import ClientConfigData, RequestContext
from udfs.rules.batch import PushBatch
from udfs.sensitivity import sensitive_entries

__all__ = ["Redaction", "redact", "redact_all", "violation_message"]


@dataclass(frozen=True, slots=True)
class Redaction:
    """The push to publish, and which keys (as shown) were sensitive under which rule."""

    event: Event
    sensitive: tuple[tuple[str, str], ...]


def redact(context: RequestContext, data: ClientConfigData, key: SecretStr, *, enabled: bool = True) -> Redaction:
    """The ``config_push`` event of one request, its sensitive values replaced by fingerprints when ``enabled``."""
    return redact_all([(context, data)], key, enabled=enabled)[0]


def redact_all(requests: Sequence[tuple[RequestContext, ClientConfigData]], key: SecretStr, *,
               enabled: bool = True) -> list[Redaction]:
    """``redact`` for many requests in one vectorized pass (the rules' fixed cost paid once), in order."""
    pushes = [Event(event=CONFIG_PUSH, timestamp_ms=data.timestamp, request_size_bytes=data.size_bytes,
                    configs=tuple(ConfigEntry(c.key, c.value, c.type, c.is_default) for c in data.configs),
                    **context.event_fields()) for context, data in requests]
    if not any(push.configs for push in pushes):
        return [Redaction(push, ()) for push in pushes]
    batch = PushBatch.from_events(pushes, key)
    reasons = sensitive_entries(batch).to_pylist()
    in_key = batch.key_secret.to_pylist()
    out: list[Redaction] = []
    j = 0  # the batch flattens the pushes' entries in order
    for push in pushes:
        entries: list[ConfigEntry] = []
        sensitive: list[tuple[str, str]] = []
        for entry in push.configs or ():
            reason, shown = in_key[j] or reasons[j], batch.safe_keys[j]
            j += 1
            if entry.redacted or reason is None:
                entries.append(entry)
                continue
            shown = str(shown)
            sensitive.append((shown, reason))
            if enabled:
                entries.append(ConfigEntry(shown, None, entry.type, entry.is_default, redacted=True,
                                           fingerprint=fingerprint(entry.value or "", key)))
            else:
                entries.append(entry)
        out.append(Redaction(replace(push, configs=tuple(entries)), tuple(sensitive)))
    return out


def violation_message(sensitive: Iterable[tuple[str, str]], *, redacted: bool) -> str:
    """The violation text for the PushConfig response: keys and rules, never values."""
    listed = ", ".join(f"{k} ({rule})" for k, rule in sensitive)
    tail = "their values were redacted" if redacted else "they were recorded as sent"
    return f"sensitive configuration must not be pushed: {listed}; {tail}"

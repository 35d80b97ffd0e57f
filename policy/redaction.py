"""Redaction at the edge: entries sensitive under the KIP's rules lose their value.

The rules are ``udfs.sensitivity.kip_sensitive_reason``, the same code the
streaming job runs. A redacted entry is published as ``value: null,
redacted: true, fingerprint: <HMAC>`` (contract section 4).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from configwatch.records import ConfigEntry
from configwatch.secrets import SecretStr, fingerprint
from policy.api import ClientConfig
from udfs.sensitivity import kip_sensitive_reason

__all__ = ["Redaction", "redact", "violation_message"]


@dataclass(frozen=True, slots=True)
class Redaction:
    """The entries to publish, and which keys were sensitive under which rule."""

    entries: tuple[ConfigEntry, ...]
    sensitive: tuple[tuple[str, str], ...]


def redact(configs: Iterable[ClientConfig], key: SecretStr | bytes, *, enabled: bool = True) -> Redaction:
    """Contract entries for ``configs``; sensitive values replaced by fingerprints when ``enabled``."""
    entries: list[ConfigEntry] = []
    sensitive: list[tuple[str, str]] = []
    for c in configs:
        rule = kip_sensitive_reason(c.key, c.type)
        if rule is None:
            entries.append(ConfigEntry(c.key, c.value, c.type, c.is_default))
            continue
        sensitive.append((c.key, rule))
        if enabled:
            entries.append(ConfigEntry(c.key, None, c.type, c.is_default, redacted=True,
                                       fingerprint=fingerprint(c.value or "", key)))
        else:
            entries.append(ConfigEntry(c.key, c.value, c.type, c.is_default))
    return Redaction(tuple(entries), tuple(sensitive))


def violation_message(sensitive: Iterable[tuple[str, str]], *, redacted: bool) -> str:
    """The violation text for the PushConfig response: keys and rules, never values."""
    listed = ", ".join(f"{k} ({rule})" for k, rule in sensitive)
    tail = "their values were redacted" if redacted else "they were recorded as sent"
    return f"sensitive configuration must not be pushed: {listed}; {tail}"

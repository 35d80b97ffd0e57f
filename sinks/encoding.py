"""How sinks turn a record's value into bytes: compact JSON, UTF-8, one object per record."""

from __future__ import annotations

import datetime as _dt
import decimal
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["to_json", "to_json_bytes"]


def _default(value: Any) -> Any:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.UTC)
        return int(value.timestamp() * 1000)  # the contract's times are epoch milliseconds
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"a sink cannot encode a {type(value).__name__}")  # bytes included: never raw payloads


def to_json(value: Mapping[str, Any]) -> str:
    """Compact JSON text of ``value`` (datetimes as epoch milliseconds)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_default)


def to_json_bytes(value: Mapping[str, Any]) -> bytes:
    return to_json(value).encode("utf-8")

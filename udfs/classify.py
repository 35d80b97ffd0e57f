"""Per-row classification of one raw record: the parsed contract event, or its quarantine reason.

This is the slow, exact path: ``json.loads`` plus ``configwatch.records.validate_event``
(the one statement of the contract's section 3). Every quarantine reason the
decode UDF emits comes from here; the Arrow fast path (``udfs.fastjson``) only
ever *accepts* rows, and sends everything it is unsure about here.
"""

from __future__ import annotations

import json
from typing import Any

from configwatch.errors import ContractError
from configwatch.records import validate_event

__all__ = ["parse_record"]


def _has_lone_surrogate(obj: Any) -> bool:
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def parse_record(raw: bytes | None) -> dict[str, Any]:
    """Return the parsed event of a valid record; raise ContractError with the reason otherwise.

    The record must be UTF-8 (no byte order mark, no other encoding) JSON text
    holding one object that satisfies the contract.
    """
    if raw is None:
        raise ContractError("not_json", "the record has no value")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ContractError("not_json", "the record is not UTF-8 text") from None
    try:
        obj = json.loads(text)
    except ValueError:  # json.JSONDecodeError, and RecursionError-free ValueErrors
        raise ContractError("not_json", "the record is not valid JSON") from None
    except RecursionError:
        raise ContractError("not_json", "the record nests too deeply to be read") from None
    if "\\u" in text and _has_lone_surrogate(obj):
        raise ContractError("not_json", "the record escapes an unpaired UTF-16 surrogate (not Unicode text)")
    validate_event(obj)
    return obj

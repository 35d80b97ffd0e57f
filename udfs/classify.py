"""Per-row classification of one raw record: the parsed contract event, or its quarantine reason.

This is the slow, exact path: ``json.loads`` plus ``configwatch.records.validate_event``
(the one statement of the contract's section 3). Every quarantine reason the
decode UDF emits comes from here; the Arrow fast path (``udfs.fastjson``) only
ever *accepts* rows, and sends everything it is unsure about here.
"""

from __future__ import annotations

import json
import re
from typing import Any

from configwatch import verdicts
from configwatch.records import validate_event

__all__ = ["parse_record"]


_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_lone_surrogate(obj: Any) -> bool:
    """True if a string of the parsed record holds a surrogate ``json.loads`` could not pair.

    Walked with a stack, not by recursion: a record at the deepest nesting ``json.loads``
    reads must not fail here.
    """
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def parse_record(raw: bytes | None) -> dict[str, Any]:
    """Return the parsed event of a valid record; raise ContractError with the reason otherwise.

    The record must be UTF-8 (no byte order mark, no other encoding) JSON text
    holding one object that satisfies the contract.
    """
    if raw is None:
        raise verdicts.NO_VALUE.error()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise verdicts.NOT_UTF8.error() from None
    try:
        obj = json.loads(text)
    except ValueError:  # json.JSONDecodeError, and RecursionError-free ValueErrors
        raise verdicts.NOT_JSON.error() from None
    except RecursionError:
        raise verdicts.TOO_DEEP.error() from None
    if "\\u" in text and _has_lone_surrogate(obj):
        raise verdicts.LONE_SURROGATE.error()
    validate_event(obj)
    return obj

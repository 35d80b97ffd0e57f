"""The spec's sections of the decoder and the GX suite (``Decoder``, ``Expectations``)."""

from __future__ import annotations

import functools
import os
import sys
import threading
from typing import Any

from configwatch.verdicts import VERDICTS

__all__ = ["decode", "expectations", "nesting_verdicts"]


def _field_specs(specs: Any) -> list[dict[str, Any]]:
    return [{"name": s.name, "type": s.json_type.__name__, "required": s.required,
             "items": None if s.items is None else _field_specs(s.items)} for s in specs]


def _parse_verdict(raw: bytes | None) -> tuple[str, str] | None:
    from configwatch.errors import ContractError
    from udfs.classify import parse_record

    try:
        parse_record(raw)
    except ContractError as err:
        return err.reason, err.detail
    return None


def nesting_verdicts(raws: list[bytes | None]) -> list[tuple[str, str] | None]:
    """``parse_record``'s verdicts ((reason, detail), None when valid) on ``raws``, read in a fresh thread.

    ``json.loads`` refuses nesting deeper than the recursion limit less its caller's stack depth, so the
    deepest nesting it reads depends on where it is called from; a fresh thread fixes that depth (the
    JVM's ``max_nesting`` is measured this way, and the tests compare deep records this way).
    """
    out: list[list[tuple[str, str] | None]] = []
    thread = threading.Thread(target=lambda: out.append([_parse_verdict(raw) for raw in raws]))
    thread.start()
    thread.join()
    return out[0]


@functools.cache
def _deepest_nesting() -> int:
    """The deepest nesting of arrays ``parse_record`` reads (see :func:`nesting_verdicts`)."""
    low, high = 1, sys.getrecursionlimit() + 1  # reads low, refuses high
    while high - low > 1:
        mid = (low + high) // 2
        verdict = nesting_verdicts([b"[" * mid + b"]" * mid])[0]
        low, high = (mid, high) if verdict is not None and verdict[0] == "not_object" else (low, mid)
    return low


def decode() -> dict[str, Any]:
    """``udfs.classify.parse_record``, ``configwatch.records.validate_event`` and the rows of
    ``udfs.decode._slow_rows`` (``Decoder``)."""
    from configwatch import contract
    from udfs.schema import ENTRY_NAMES, EVENT_SCHEMA, LIST_FIELDS

    return {
        "verdicts": {name: {"reason": v.reason, "detail": v.detail} for name, v in VERDICTS.items()},
        "schema_version": contract.SCHEMA_VERSION,
        "event_types": list(contract.EVENT_TYPES),
        "config_push": contract.CONFIG_PUSH,
        "config_types": list(contract.CONFIG_TYPES),
        "software_pattern": contract.SOFTWARE_PATTERN.pattern,
        "software_pattern_flags": contract.SOFTWARE_PATTERN.flags,
        "software_max_chars": contract.SOFTWARE_MAX_CHARS,
        "event_fields": _field_specs(contract.EVENT_FIELDS),
        "entry_fields": _field_specs(contract.ENTRY_FIELDS),
        "event_schema": EVENT_SCHEMA.names,
        "list_fields": LIST_FIELDS,
        "entry_names": ENTRY_NAMES,
        "int_max_str_digits": sys.get_int_max_str_digits(),
        "max_nesting": _deepest_nesting(),
    }


@functools.cache
def _gx_suite() -> tuple[dict[str, Any], ...]:
    """Each catalog expectation as GX serializes it (importing GX takes seconds: once per process)."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    import great_expectations.expectations as gxe

    from udfs.expectations import CATALOG as GX_CATALOG

    return tuple({"name": s.name, "frame": s.frame, "detail": s.detail,
                  "expectation": s.make(gxe).configuration.to_json_dict()} for s in GX_CATALOG)


def expectations() -> dict[str, Any]:
    """``udfs.expectations``: the GX suite, its frames and the timestamp window (``Expectations``)."""
    from udfs.expectations import ENTRIES, EVENT_COLUMNS, EVENTS, MAX_FUTURE_MS, MIN_TIMESTAMP_MS

    return {
        "frames": [EVENTS, ENTRIES],
        "event_columns": list(EVENT_COLUMNS),
        "suite": list(_gx_suite()),
        # BatchValidator.validate's expectation parameters at processing time now: a value, or now plus a span.
        "parameters": {"min_timestamp_ms": {"value": MIN_TIMESTAMP_MS},
                       "max_timestamp_ms": {"now_plus_ms": MAX_FUTURE_MS}},
    }

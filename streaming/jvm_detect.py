"""What the JVM detection engine (``streaming/jvm``, ``io.configwatch.detect``) is told: one JSON spec.

The Java classes hold the rules' logic, twins of ``udfs.rules`` and ``udfs.sensitivity``
(the same findings, byte for byte: ``tests/test_detect_jvm.py``). Every fact they act on
comes from its Python home through :func:`spec`: the rule catalog, the contract's names,
the key-set and defaults data files as they are, and each module's words, patterns and
thresholds, one section per module. Nothing in it is secret: no key, no config value.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
from collections.abc import Callable
from importlib import resources
from typing import Any, Final

from configwatch.contract import ALERTS, SCHEMA_VERSION
from configwatch.secrets import FINGERPRINT_HEX_CHARS
from udfs.rules.batch import CONTEXT_COLUMNS, IDENTITY_FIELDS
from udfs.rules.catalog import CATALOG
from udfs.rules.findings import ALERT_ID_HEX_CHARS

__all__ = ["nesting_verdicts", "spec", "spec_json"]


def _contract() -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "alerts_kind": ALERTS,
        "identity_fields": list(IDENTITY_FIELDS),
        "context_columns": list(CONTEXT_COLUMNS),
        "fingerprint_hex_chars": FINGERPRINT_HEX_CHARS,
        "alert_id_hex_chars": ALERT_ID_HEX_CHARS,
    }


def _catalog() -> list[dict[str, Any]]:
    return [{"id": r.id, "kind": r.kind, "severity": r.severity, "keys": list(r.keys), "rationale": r.rationale}
            for r in CATALOG]


def _data() -> dict[str, Any]:
    """Every data file of ``udfs/rules/data`` as parsed JSON, by file name."""
    folder = resources.files("udfs.rules").joinpath("data")
    return {item.name: json.loads(item.read_text(encoding="utf-8"))
            for item in sorted(folder.iterdir(), key=lambda i: i.name) if item.name.endswith(".json")}


def _prepare() -> dict[str, Any]:
    """``udfs.rules.batch``, ``udfs.rules.leaks`` and ``udfs.rules.fleet``'s rows (``Detector``, ``Leaks``)."""
    from udfs.rules import batch, fleet, leaks

    return {
        "subject_fallbacks": list(batch.SUBJECT_FALLBACKS),
        "marker_prefix": batch.MARKER_PREFIX,
        "marker_pattern": batch.MARKER_PATTERN,
        "masked_at_edge": batch.MASKED_AT_EDGE,
        "keys_shown": leaks.KEYS_SHOWN,
        "more_keys": leaks.MORE_KEYS,
        "identity_message": leaks.IDENTITY_MESSAGE,
        "identity_keys": dict(leaks.IDENTITY_KEYS),
        "redacted_rule": leaks.REDACTED_RULE,
        "identity_rule": leaks.IDENTITY_RULE,
        "fleet_numeric_types": list(fleet.NUMERIC_TYPES),
        "fleet_excluded": sorted(fleet.EXCLUDED),
        "fleet_unbounded": list(fleet.UNBOUNDED),
        "peer_group": fleet.peer_group("{family}", "{role}", "{major}"),
    }


def _route() -> dict[str, Any]:
    """``udfs.pipeline.route``'s names and row shapes (``RouteStep``, ``DetectionStep``)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    from configwatch.contract import (
        CONFIG_PUSH,
        CONNECTION_CLOSED,
        CONNECTION_OPENED,
        GAUGES,
        QUARANTINE,
        UNKNOWN_SOFTWARE,
        USAGE,
    )
    from udfs.gauges import MASK_PREFIX
    from udfs.pipeline import CONN_PREFIX, FINAL_SCHEMA, ROUTED_SCHEMA
    from udfs.rules.groups import group_subject
    from udfs.rules.stateful import FLEET, GROUP, KEY_SEP, PASS, PASS_BUCKETS

    return {
        "routed_schema": from_arrow_schema(ROUTED_SCHEMA).json(),
        "final_schema": from_arrow_schema(FINAL_SCHEMA).json(),
        "pass": PASS + KEY_SEP, "pass_buckets": PASS_BUCKETS, "fleet": FLEET + KEY_SEP, "group": GROUP + KEY_SEP,
        "conn": CONN_PREFIX, "alerts": ALERTS, "quarantine": QUARANTINE, "gauges": GAUGES, "usage": USAGE,
        "config_push": CONFIG_PUSH, "opened": CONNECTION_OPENED, "closed": CONNECTION_CLOSED,
        "unknown_software": UNKNOWN_SOFTWARE, "mask_prefix": MASK_PREFIX, "schema_version": SCHEMA_VERSION,
        "group_subject": group_subject("{fp}"),
    }


# --- one section per rule module (each filled by the module's twin) ---


def _sensitivity() -> dict[str, Any]:
    """``udfs.sensitivity``'s key rules (``Sensitivity``); the patterns are Python ``re`` ones Java reads alike."""
    from udfs import sensitivity as s

    return {
        "kip_types": list(s.KIP_SENSITIVE_TYPES),
        "kip_prefixes": list(s.KIP_SENSITIVE_PREFIXES),
        "kip_infixes": list(s.KIP_SENSITIVE_INFIXES),
        "kip_suffixes": list(s.KIP_SENSITIVE_SUFFIXES),
        "rule_type": s.RULE_TYPE, "rule_prefix": s.RULE_PREFIX, "rule_infix": s.RULE_INFIX,
        "rule_suffix": s.RULE_SUFFIX, "rule_custom": s.RULE_CUSTOM, "rule_name": s.RULE_NAME,
        "secret_words": sorted(s.SECRET_WORDS),
        "secret_pairs": sorted(list(pair) for pair in s.SECRET_PAIRS),
        "camel_boundary": s.CAMEL_BOUNDARY.pattern,
        "word": s.WORD.pattern,
        "dropped_categories": list(s.DROPPED_CATEGORIES),
    }


def _secretscan() -> dict[str, Any]:
    """``udfs.rules.secretscan`` and ``udfs.rules.entropy``'s token statistics (``SecretScan``); RE2 patterns."""
    from udfs.rules import entropy
    from udfs.rules import secretscan as s

    return {
        "kinds": [{"rule": k.rule, "pattern": k.pattern, "secret_group": k.secret_group} for k in s.KINDS],
        "secret_groups": list(s.SECRET_GROUPS),
        "high_entropy": s.HIGH_ENTROPY,
        "placeholder": s.PLACEHOLDER,
        "prefilter": s.PREFILTER,
        "min_value_chars": s.MIN_VALUE_CHARS,
        "token_run": s.TOKEN_RUN,
        "token_split": s.TOKEN_SPLIT,
        "entropy_min_len": s.ENTROPY_MIN_LEN,
        "entropy_bits": s.ENTROPY_BITS,
        "entropy_long_len": s.ENTROPY_LONG_LEN,
        "entropy_bits_long": s.ENTROPY_BITS_LONG,
        "switch_rate": s.SWITCH_RATE,
        "mixed": [s.LOWER, s.UPPER, s.DIGIT],
        "certificate": s.CERTIFICATE,
        "byte_class": [int(c) for c in entropy.CLASS],
        "class_bits": [list(pair) for pair in entropy.CLASS_BITS],
    }


def _identity() -> dict[str, Any]:
    """``udfs.rules.identity``'s patterns (RE2) and rewrites (``SecretScanIdentity``)."""
    from udfs.rules import identity as i

    return {
        "uuid": i.UUID,
        "compound_id": i.COMPOUND_ID,
        "segment_separators": i.SEGMENT_SEPARATORS,
        "segment_join": i.SEGMENT_JOIN,
        "structured_segment": i.STRUCTURED_SEGMENT,
        "dn_attribute": i.DN_ATTRIBUTE,
        "dn_replacement": i.DN_REPLACEMENT,
    }


def _keysets() -> dict[str, Any]:
    """``udfs.rules.keysets`` and ``udfs.rules.defaults`` (``KeySets``, ``Profile``, ``Defaults``); the data files
    are in ``data``; the version patterns are Python ``re`` ones (Unicode ``\\d``)."""
    from udfs.rules import defaults, keysets

    return {
        "roles": list(keysets.ROLES),
        "unknown_role": keysets.UNKNOWN_ROLE,
        "any_key": keysets.ANY_KEY,
        "default_judge": keysets.DEFAULT_JUDGE,
        "ignores_unknown_keys": keysets.IGNORES_UNKNOWN_KEYS,
        "default_durations": keysets.DEFAULT_DURATIONS,
        "go_durations": keysets.GO_DURATIONS,
        "key_set_version": keysets.KEY_SET_VERSION.pattern,
        "release": defaults.RELEASE.pattern,
    }


def _effective() -> dict[str, Any]:
    """``udfs.rules.effective`` (``Effective``); ``number`` and ``acks_decoration`` are RE2 patterns (pyarrow)."""
    from udfs.rules import effective as e

    return {
        "numeric_keys": list(e.NUMERIC_KEYS),
        "bool_keys": list(e.BOOL_KEYS),
        "string_keys": list(e.STRING_KEYS),
        "ms_keys": [e.NUMERIC_KEYS[i] for i in e.MS_COLUMNS],
        "yielding_idempotence": e.YIELDING_IDEMPOTENCE,
        "no_profile": e.NO_PROFILE,
        "bool_words": dict(e.BOOL_WORDS),
        "number": e.NUMBER,
        "acks_words": dict(e.ACKS_WORDS),
        "acks_decoration": e.ACKS_DECORATION,
    }


def _durations() -> dict[str, Any]:
    """``udfs.rules.durations`` (``GoDurations``): Python ``re`` patterns (ASCII classes) and units."""
    from udfs.rules import durations as d

    return {
        "go_duration": d.GO_DURATION.pattern,
        "component": d.COMPONENT.pattern,
        "ms_per_unit": dict(d.MS_PER_UNIT),
    }


def _anomalies() -> dict[str, Any]:
    """``udfs.rules.anomalies`` (``Anomalies``): the rules in order with their messages, thresholds, words."""
    from udfs.rules import anomalies as a

    return {
        "rules": [{"id": r.id, "message": r.message} for r in a.STATELESS_ANOMALIES],
        "broker_min_session_ms": a.BROKER_MIN_SESSION_MS,
        "broker_max_session_ms": a.BROKER_MAX_SESSION_MS,
        "idempotence_max_in_flight": a.IDEMPOTENCE_MAX_IN_FLIGHT,
        "classic_only": list(a.CLASSIC_ONLY),
        "enums": {k: list(v) for k, v in a.ENUMS.items()},
        "shown_set": a.SHOWN_SET,
        "shown_acks_all": a.SHOWN_ACKS_ALL,
        "placeholder": a.PLACEHOLDER.pattern,
    }


def _typos() -> dict[str, Any]:
    """``udfs.rules.typos`` (``Typos``)."""
    from udfs.rules import typos as t

    return {"rule": t.RULE, "message": t.MESSAGE, "max_distance": t.MAX_DISTANCE, "short_key": t.SHORT_KEY}


def _fleet() -> dict[str, Any]:
    """``udfs.rules.fleet``'s summaries, scoring and state (``Fleet``, ``FleetSummary``, ``FleetState``)."""
    from udfs.rules import fleet

    return {
        "rule": fleet.RULE,
        "message": fleet.MESSAGE,
        "min_peers": fleet.MIN_PEERS,
        "rare_share": fleet.RARE_SHARE,
        "rare_radius": fleet.RARE_RADIUS,
        "iqr_k": fleet.IQR_K,
        "min_log_distance": fleet.MIN_LOG_DISTANCE,
        "bucket_width": fleet.BUCKET_WIDTH,
        "max_buckets": fleet.MAX_BUCKETS,
        "unbounded": list(fleet.UNBOUNDED),
        "pending_columns": list(fleet.PENDING_COLUMNS),
        "shown_digits": fleet.SHOWN_DIGITS,
        "shown_places": fleet.SHOWN_PLACES,
        "decades_places": fleet.DECADES_PLACES,
    }


def _groups() -> dict[str, Any]:
    """``udfs.rules.groups``' observations, state and drift findings (``Groups``, ``GroupsState``, ``GroupsDrift``)."""
    from udfs.rules import groups
    from udfs.rules.batch import MARKER_PREFIX

    return {
        "max_members": groups.MAX_MEMBERS,
        "member_ttl_ms": groups.MEMBER_TTL_MS,
        "evidence_members": groups.EVIDENCE_MEMBERS,
        "default_protocol": groups.DEFAULT_PROTOCOL,
        "not_consumers": list(groups.NOT_CONSUMERS),
        "migratable": sorted(groups.MIGRATABLE),
        "list_sep": groups.LIST_SEP,
        "custom_prefix": groups.CUSTOM_PREFIX,
        "builtin": dict(groups.BUILTIN),
        "assignment_drift": groups.ASSIGNMENT_DRIFT,
        "assignment_transition": groups.ASSIGNMENT_TRANSITION,
        "protocol_migration": groups.PROTOCOL_MIGRATION,
        "protocol_drift": groups.PROTOCOL_DRIFT,
        "assignment_keys": list(groups.ASSIGNMENT_KEYS),
        "protocol_keys": list(groups.PROTOCOL_KEYS),
        "counted": groups.COUNTED,
        "lists_sep": groups.LISTS_SEP,
        "names_sep": groups.NAMES_SEP,
        "messages": dict(groups.MESSAGES),
        "marker_prefix": MARKER_PREFIX,
        "group_subject": groups.group_subject("{fp}"),
    }


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
    except RecursionError:
        return "RecursionError", ""
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


def _decode() -> dict[str, Any]:
    """``udfs.classify.parse_record``, ``configwatch.records.validate_event`` and the rows of
    ``udfs.decode._slow_rows`` (``Decoder``)."""
    from configwatch import contract
    from udfs.schema import ENTRY_NAMES, EVENT_SCHEMA, LIST_FIELDS

    return {
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


def _expectations() -> dict[str, Any]:
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


_SECTIONS: Final[dict[str, Callable[[], Any]]] = {
    "contract": _contract,
    "catalog": _catalog,
    "data": _data,
    "decode": _decode,
    "expectations": _expectations,
    "prepare": _prepare,
    "route": _route,
    "sensitivity": _sensitivity,
    "secretscan": _secretscan,
    "identity": _identity,
    "keysets": _keysets,
    "effective": _effective,
    "durations": _durations,
    "anomalies": _anomalies,
    "typos": _typos,
    "fleet": _fleet,
    "groups": _groups,
}


def spec() -> dict[str, Any]:
    """The detection engine's spec: one section per module."""
    return {name: build() for name, build in _SECTIONS.items()}


def spec_json() -> str:
    return json.dumps(spec(), separators=(",", ":"), ensure_ascii=False)

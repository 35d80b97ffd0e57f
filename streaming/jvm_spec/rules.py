"""The spec's sections of the rule modules: each one's words, patterns, thresholds and messages."""

from __future__ import annotations

from typing import Any

__all__ = ["anomalies", "durations", "effective", "fleet", "groups", "identity", "keysets", "secretscan",
           "sensitivity", "typos"]


def sensitivity() -> dict[str, Any]:
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


def secretscan() -> dict[str, Any]:
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
        "uuid": s.UUID,
        "uuid_chars": s.UUID_CHARS,
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


def identity() -> dict[str, Any]:
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


def keysets() -> dict[str, Any]:
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


def effective() -> dict[str, Any]:
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


def durations() -> dict[str, Any]:
    """``udfs.rules.durations`` (``GoDurations``): Python ``re`` patterns (ASCII classes) and units."""
    from udfs.rules import durations as d

    return {
        "go_duration": d.GO_DURATION.pattern,
        "component": d.COMPONENT.pattern,
        "ms_per_unit": dict(d.MS_PER_UNIT),
    }


def anomalies() -> dict[str, Any]:
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


def typos() -> dict[str, Any]:
    """``udfs.rules.typos`` (``Typos``)."""
    from udfs.rules import typos as t

    return {"rule": t.RULE, "message": t.MESSAGE, "max_distance": t.MAX_DISTANCE, "short_key": t.SHORT_KEY}


def fleet() -> dict[str, Any]:
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


def groups() -> dict[str, Any]:
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

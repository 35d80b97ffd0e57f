"""Frozen dataclasses for the record contract: input events and the job's outputs.

``validate_event`` is the one statement of section 3 (invalid input) in Python;
it raises :class:`ContractError` with the stable quarantine reason code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from configwatch import verdicts
from configwatch.contract import (
    CONFIG_PUSH,
    CONFIG_TYPES,
    ENTRY_FIELDS,
    EVENT_FIELDS,
    EVENT_TYPES,
    SCHEMA_VERSION,
    UNKNOWN_SOFTWARE,
    FieldSpec,
    is_valid_software,
    software_key,
    usage_key,
)

__all__ = [
    "ConfigEntry",
    "Event",
    "Finding",
    "Gauge",
    "QuarantineRecord",
    "VersionUsage",
    "validate_event",
]


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _check_type(obj: Mapping[str, Any], spec: FieldSpec, where: str) -> None:
    value = obj.get(spec.name)
    if value is None:
        if spec.required:
            raise verdicts.MISSING_FIELD.error(field=f"{where}{spec.name}")
        return
    ok = isinstance(value, spec.json_type)
    if spec.json_type is int and isinstance(value, bool):
        ok = False  # JSON true/false is not an int in the contract.
    if ok and spec.json_type is int and not _INT64_MIN <= value <= _INT64_MAX:
        # Every contract int is a signed int64 (the decoded column type).
        raise verdicts.OUT_OF_RANGE.error(field=f"{where}{spec.name}")
    if not ok:
        raise verdicts.WRONG_TYPE.error(field=f"{where}{spec.name}", expected=spec.json_type.__name__,
                                        got=type(value).__name__)
    if spec.items is not None and isinstance(value, list):
        inner = f"{where}{spec.name}[]."
        for item in value:
            if not isinstance(item, dict):
                raise verdicts.ITEM_NOT_OBJECT.error(field=f"{where}{spec.name}")
            for item_spec in spec.items:
                _check_type(item, item_spec, inner)


def validate_event(obj: Any) -> None:
    """Raise ContractError unless ``obj`` (parsed JSON) is a valid contract event."""
    if not isinstance(obj, dict):
        raise verdicts.NOT_OBJECT.error()
    for spec in EVENT_FIELDS:
        if spec.name not in ("schema_version", "event"):
            continue
        _check_type(obj, spec, "")
    if obj["schema_version"] != SCHEMA_VERSION:
        raise verdicts.BAD_SCHEMA_VERSION.error(version=str(SCHEMA_VERSION))
    if obj["event"] not in EVENT_TYPES:
        raise verdicts.UNKNOWN_EVENT.error(events=", ".join(EVENT_TYPES))
    for spec in EVENT_FIELDS:
        _check_type(obj, spec, "")
    for name in ("client_software_name", "client_software_version"):
        value = obj.get(name)
        if value and not is_valid_software(value):
            raise verdicts.BAD_SOFTWARE.error(part=name.rsplit("_", 1)[1], field=name)
    if obj["event"] == CONFIG_PUSH:
        configs = obj.get("configs")
        if configs is None:
            raise verdicts.MISSING_CONFIGS.error()
        if not isinstance(configs, list):
            raise verdicts.CONFIGS_NOT_ARRAY.error()
        for entry in configs:
            if not isinstance(entry, dict):
                raise verdicts.ENTRY_NOT_OBJECT.error()
            if "key" not in entry or entry["key"] is None:
                raise verdicts.ENTRY_WITHOUT_KEY.error()
            for spec in ENTRY_FIELDS:
                _check_type(entry, spec, "configs[].")
            if entry["type"] not in CONFIG_TYPES:
                raise verdicts.BAD_CONFIG_TYPE.error()
    elif obj.get("connection_id") is None:
        raise verdicts.MISSING_CONNECTION.error()


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One PushConfig entry as published (value null when redacted); its repr leaves the value out."""

    key: str
    value: str | None = field(repr=False)
    type: str
    is_default: bool
    redacted: bool = False
    fingerprint: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ConfigEntry:
        return cls(
            key=d["key"],
            value=d.get("value"),
            type=d["type"],
            is_default=d["is_default"],
            redacted=bool(d.get("redacted", False)),
            fingerprint=d.get("fingerprint"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "key": self.key,
            "value": self.value,
            "type": self.type,
            "is_default": self.is_default,
        }
        if self.redacted:
            d["redacted"] = True
            d["fingerprint"] = self.fingerprint
        return d


@dataclass(frozen=True, slots=True)
class Event:
    """An input event (section 1): ``config_push``, ``connection_opened`` or ``connection_closed``.

    Its repr leaves ``configs`` out (their keys and values).
    """

    event: str
    timestamp_ms: int
    schema_version: int = SCHEMA_VERSION
    broker_id: int | None = None
    connection_id: str | None = None
    client_instance_id: str | None = None
    client_software_name: str | None = None
    client_software_version: str | None = None
    client_id: str | None = None
    principal: str | None = None
    listener: str | None = None
    security_protocol: str | None = None
    # The connection's security posture as the gateway saw it (connection events).
    tls_version: str | None = None
    tls_cipher: str | None = None
    sasl_mechanism: str | None = None
    client_certificate: bool | None = None
    tls_offered_at: str | None = None  # a plaintext gateway: where the same cluster is reachable over TLS
    client_address: str | None = None
    configs: tuple[ConfigEntry, ...] | None = field(default=None, repr=False)
    request_size_bytes: int | None = None
    # connection_closed in gateway proxy mode: the distinct (api_key, version) pairs the client sent, sorted.
    request_versions: tuple[tuple[int, int], ...] | None = None
    request_versions_overflow: int | None = None
    usage_sequence: int | None = None  # connection_usage: 1, 2, ... per connection (redeliveries repeat it)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Event:
        """Build from parsed JSON; raises ContractError with the quarantine reason."""
        validate_event(d)
        known = {spec.name for spec in EVENT_FIELDS}
        kwargs = {k: v for k, v in d.items() if k in known}
        configs = d.get("configs")
        entries = tuple(ConfigEntry.from_dict(e) for e in configs) if configs is not None else None
        pairs = kwargs.pop("request_versions", None)
        if pairs is not None:
            kwargs["request_versions"] = tuple((p["api_key"], p["version"]) for p in pairs)
        return cls(configs=entries, **kwargs)

    @classmethod
    def from_json(cls, data: str | bytes) -> Event:
        try:
            obj = json.loads(data)
        except (UnicodeDecodeError, ValueError):
            raise verdicts.NOT_UTF8_JSON.error() from None  # the decoder's error holds the whole record
        return cls.from_dict(obj)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"schema_version": self.schema_version, "event": self.event}
        d["timestamp_ms"] = self.timestamp_ms
        for spec in EVENT_FIELDS[3:]:
            value = getattr(self, spec.name)
            if value is not None:
                d[spec.name] = value
        if self.request_versions is not None:
            d["request_versions"] = [{"api_key": k, "version": v} for k, v in self.request_versions]
        if self.configs is not None:
            d["configs"] = [e.to_dict() for e in self.configs]
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    def kafka_key(self) -> bytes:
        """The contract's record key: client_instance_id, else connection_id."""
        key = self.client_instance_id or self.connection_id or ""
        return key.encode()

    @property
    def software(self) -> tuple[str, str]:
        """(name, version) with the contract's ``unknown`` for absent values."""
        return (
            self.client_software_name or UNKNOWN_SOFTWARE,
            self.client_software_version or UNKNOWN_SOFTWARE,
        )


def _json(d: dict[str, Any]) -> str:
    return json.dumps(d, separators=(",", ":"), sort_keys=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """An alert record (section 2, Findings), its fields in contract order. ``evidence`` holds fingerprints,
    never values. The rules' Arrow schema (``udfs.rules.findings.FINDING_SCHEMA``) is derived from these fields."""

    schema_version: int = SCHEMA_VERSION
    alert_id: str
    kind: str
    rule: str
    severity: str
    keys: tuple[str, ...]
    client_instance_id: str | None = None
    client_software_name: str | None = None
    client_software_version: str | None = None
    client_id: str | None = None
    principal: str | None = None
    client_address: str | None = None
    message: str
    evidence: Mapping[str, Any] = field(default_factory=dict)
    event_timestamp_ms: int | None
    detected_at_ms: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Finding:
        kwargs = dict(d)
        kwargs["keys"] = tuple(d["keys"])
        kwargs["evidence"] = dict(d.get("evidence") or {})
        return cls(**kwargs)

    @classmethod
    def from_json(cls, data: str | bytes) -> Finding:
        return cls.from_dict(json.loads(data))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["keys"] = list(self.keys)
        d["evidence"] = dict(self.evidence)
        return d

    def to_json(self) -> str:
        return _json(self.to_dict())


@dataclass(frozen=True, slots=True)
class Gauge:
    """Open connections and distinct client instances of one software name and version."""

    client_software_name: str
    client_software_version: str
    connections: int
    client_instances: int
    updated_at_ms: int
    removed: bool = False
    # Open connections per security posture (``configwatch.contract.security_label``: ``SASL_SSL/SCRAM-SHA-512``).
    connections_by_security: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """Kafka record key on the compacted gauges topic."""
        return software_key(self.client_software_name, self.client_software_version)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Gauge:
        return cls(**{k: d[k] for k in d if k in cls.__dataclass_fields__})

    @classmethod
    def from_json(cls, data: str | bytes) -> Gauge:
        return cls.from_dict(json.loads(data))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["connections_by_security"] = dict(self.connections_by_security)
        return d

    def to_json(self) -> str:
        return _json(self.to_dict())


@dataclass(frozen=True, slots=True)
class VersionUsage:
    """What the connections of one client software name and version sent through a proxying gateway.

    ``request_versions``: (API key, version, connections that sent it) for every pair seen;
    ``connections``: connections closed with their usage recorded; ``client_instances``: distinct
    instance ids among them, of which ``client_instance_ids`` lists up to 50; ``overflow``: requests
    not recorded because a connection's set was full. Keyed like a gauge, never deleted.
    """

    client_software_name: str
    client_software_version: str
    request_versions: tuple[tuple[int, int, int], ...]
    connections: int
    client_instances: int
    client_instance_ids: tuple[str, ...]
    updated_at_ms: int
    overflow: int = 0
    # Clients below ApiVersions v3 name no software: their usage is grouped by client id and principal.
    client_id: str | None = None
    principal: str | None = None

    MAX_INSTANCE_IDS: ClassVar[int] = 50

    @property
    def key(self) -> str:
        """Kafka record key on the compacted usage topic (the gauge key, plus the group of unnamed clients)."""
        return usage_key(self.client_software_name, self.client_software_version, self.client_id, self.principal)

    @property
    def pairs(self) -> frozenset[tuple[int, int]]:
        return frozenset((k, v) for k, v, _ in self.request_versions)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> VersionUsage:
        return cls(d["client_software_name"], d["client_software_version"],
                   tuple((int(r["api_key"]), int(r["version"]), int(r["connections"]))
                         for r in d["request_versions"]),
                   int(d["connections"]), int(d["client_instances"]), tuple(d["client_instance_ids"]),
                   int(d["updated_at_ms"]), int(d.get("overflow") or 0), d.get("client_id"), d.get("principal"))

    @classmethod
    def from_json(cls, data: str | bytes) -> VersionUsage:
        return cls.from_dict(json.loads(data))

    def to_dict(self) -> dict[str, Any]:
        return {"client_software_name": self.client_software_name,
                "client_software_version": self.client_software_version,
                "request_versions": [{"api_key": k, "version": v, "connections": n}
                                     for k, v, n in self.request_versions],
                "connections": self.connections, "client_instances": self.client_instances,
                "client_instance_ids": list(self.client_instance_ids), "updated_at_ms": self.updated_at_ms,
                "overflow": self.overflow,
                **({"client_id": self.client_id, "principal": self.principal}
                   if self.client_id is not None or self.principal is not None else {})}

    def to_json(self) -> str:
        return _json(self.to_dict())


@dataclass(frozen=True, slots=True)
class QuarantineRecord:
    """An invalid input record's reason and coordinates; never its payload."""

    reason: str
    detail: str
    source: Mapping[str, Any]
    size_bytes: int
    quarantined_at_ms: int
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> QuarantineRecord:
        return cls(**{k: d[k] for k in d if k in cls.__dataclass_fields__})

    @classmethod
    def from_json(cls, data: str | bytes) -> QuarantineRecord:
        return cls.from_dict(json.loads(data))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["source"] = dict(self.source)
        return d

    def to_json(self) -> str:
        return _json(self.to_dict())


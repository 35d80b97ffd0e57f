"""Constants of the record contract, version 1 (shared/spec/records.md).

Everything that must agree between the ingest edge, the Spark job and the
sinks (event names, field types, patterns, ConfigType ids, topic names) is
declared here once.
"""

from __future__ import annotations

import json
import re
from typing import Final

__all__ = [
    "ALERTS",
    "ALERTS_TOPIC",
    "CONFIG_TYPES",
    "CONFIG_TYPE_BY_ID",
    "CONFIG_TYPE_IDS",
    "ENTRY_FIELDS",
    "EVENT_FIELDS",
    "EVENT_TYPES",
    "GAUGES",
    "GAUGES_TOPIC",
    "INPUT_TOPIC",
    "MAX_REQUEST_VERSIONS",
    "OUTPUT_KINDS",
    "QUARANTINE",
    "QUARANTINE_TOPIC",
    "REQUEST_VERSION_FIELDS",
    "SCHEMA_VERSION",
    "SECURITY_PROTOCOLS",
    "SECURITY_SEP",
    "SEVERITIES",
    "SOFTWARE_MAX_CHARS",
    "SOFTWARE_PATTERN",
    "UNKNOWN_SECURITY",
    "UNKNOWN_SOFTWARE",
    "USAGE",
    "USAGE_TOPIC",
    "FieldSpec",
    "config_type_from_id",
    "is_valid_software",
    "software_key",
    "usage_key",
]

SCHEMA_VERSION: Final = 1

INPUT_TOPIC: Final = "client-configs"
ALERTS_TOPIC: Final = "client-config-alerts"
QUARANTINE_TOPIC: Final = "client-config-quarantine"
GAUGES_TOPIC: Final = "client-version-gauges"
USAGE_TOPIC: Final = "client-version-usage"

# The job's outputs (section 2): each has a topic above and a replay sink directory of this name.
ALERTS: Final = "alerts"
QUARANTINE: Final = "quarantine"
GAUGES: Final = "gauges"
USAGE: Final = "usage"  # request versions per software name and version (gateway proxy mode); rides with gauges
OUTPUT_KINDS: Final = (ALERTS, QUARANTINE, GAUGES, USAGE)

CONFIG_PUSH: Final = "config_push"
CONNECTION_OPENED: Final = "connection_opened"
CONNECTION_CLOSED: Final = "connection_closed"
CONNECTION_USAGE: Final = "connection_usage"  # a long-lived connection's new request versions (gateway proxy mode)
EVENT_TYPES: Final = (CONFIG_PUSH, CONNECTION_OPENED, CONNECTION_CLOSED, CONNECTION_USAGE)

SECURITY_PROTOCOLS: Final = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SEVERITIES: Final = ("critical", "high", "medium", "low", "info")

# Wire ConfigType ids: the ids DescribeConfigsResponse already uses for ConfigDef.Type.
CONFIG_TYPE_BY_ID: Final[dict[int, str]] = {
    0: "UNKNOWN",
    1: "BOOLEAN",
    2: "STRING",
    3: "INT",
    4: "SHORT",
    5: "LONG",
    6: "DOUBLE",
    7: "LIST",
    8: "CLASS",
    9: "PASSWORD",
}
CONFIG_TYPE_IDS: Final[dict[str, int]] = {name: i for i, name in CONFIG_TYPE_BY_ID.items()}
CONFIG_TYPES: Final = tuple(CONFIG_TYPE_BY_ID.values())

# The broker's KIP-511 pattern (stricter than the KIP text; see the contract).
SOFTWARE_PATTERN: Final = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")
# Kafka sets no length; configwatch refuses longer names and versions (real ones are under 40 characters),
# so one client cannot make every metric scrape and published event carry a megabyte.
SOFTWARE_MAX_CHARS: Final = 128
UNKNOWN_SOFTWARE: Final = "unknown"

# The most distinct (API key, version) pairs one connection's ``request_versions`` holds (real clients use ~20).
MAX_REQUEST_VERSIONS: Final = 128


def config_type_from_id(type_id: int) -> str:
    """Map a wire ConfigType id to its ConfigDef.Type name; unknown ids are UNKNOWN."""
    return CONFIG_TYPE_BY_ID.get(type_id, "UNKNOWN")


def is_valid_software(value: str) -> bool:
    """True when a client software name or version passes the broker's KIP-511 check (the whole string),
    within ``SOFTWARE_MAX_CHARS``."""
    return len(value) <= SOFTWARE_MAX_CHARS and SOFTWARE_PATTERN.fullmatch(value) is not None


class FieldSpec:
    """One contract field: its JSON type and whether it is required; a ``list`` field's ``items`` are the
    fields of each of its elements (objects)."""

    __slots__ = ("items", "json_type", "name", "required")

    def __init__(self, name: str, json_type: type, required: bool,
                 items: tuple[FieldSpec, ...] | None = None) -> None:
        self.name = name
        self.json_type = json_type
        self.required = required
        self.items = items

    def __repr__(self) -> str:
        return f"FieldSpec({self.name!r}, {self.json_type.__name__}, required={self.required})"


# One element of ``request_versions``: a request the client sent on the connection.
REQUEST_VERSION_FIELDS: Final = (
    FieldSpec("api_key", int, True),
    FieldSpec("version", int, True),
)

# Fields of every event, in contract order. connection_id is required for
# connection events only; configs only for config_push (see records.validate_event).
# request_versions and request_versions_overflow are connection_closed's (gateway proxy mode).
EVENT_FIELDS: Final = (
    FieldSpec("schema_version", int, True),
    FieldSpec("event", str, True),
    FieldSpec("timestamp_ms", int, True),
    FieldSpec("broker_id", int, False),
    FieldSpec("connection_id", str, False),
    FieldSpec("client_instance_id", str, False),
    FieldSpec("client_software_name", str, False),
    FieldSpec("client_software_version", str, False),
    FieldSpec("client_id", str, False),
    FieldSpec("principal", str, False),
    FieldSpec("listener", str, False),
    FieldSpec("security_protocol", str, False),
    FieldSpec("tls_version", str, False),
    FieldSpec("tls_cipher", str, False),
    FieldSpec("sasl_mechanism", str, False),
    FieldSpec("client_certificate", bool, False),
    FieldSpec("tls_offered_at", str, False),
    FieldSpec("client_address", str, False),
    FieldSpec("request_size_bytes", int, False),
    FieldSpec("request_versions", list, False, REQUEST_VERSION_FIELDS),
    FieldSpec("request_versions_overflow", int, False),
    FieldSpec("usage_sequence", int, False),
)

ENTRY_FIELDS: Final = (
    FieldSpec("key", str, True),
    FieldSpec("value", str, False),
    FieldSpec("type", str, True),
    FieldSpec("is_default", bool, True),
    FieldSpec("redacted", bool, False),
    FieldSpec("fingerprint", str, False),
)


def software_key(name: str, version: str) -> str:
    """The record key of a client software name and version on the gauges and usage topics: ``<name>/<version>``."""
    return f"{name}/{version}"


# How a gauge counts a connection's posture (``connections_by_security``): ``<security_protocol>`` or, on SASL,
# ``<security_protocol>/<sasl_mechanism>`` (``SASL_SSL/SCRAM-SHA-512``); ``unknown`` when the event names no protocol.
SECURITY_SEP: Final = "/"
UNKNOWN_SECURITY: Final = "unknown"


def usage_key(name: str, version: str, client_id: str | None = None, principal: str | None = None) -> str:
    """A usage record's key: the software key, and for clients that name no software (below ApiVersions v3,
    grouped by client id and principal) ``/["<client id>","<principal>"]`` after it."""
    key = software_key(name, version)
    if client_id is None and principal is None:
        return key
    return key + "/" + json.dumps([client_id, principal], separators=(",", ":"), ensure_ascii=False)

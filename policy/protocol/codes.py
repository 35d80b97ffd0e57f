"""API keys and error codes the gateway and the client use on the wire.

Kafka's own codes (REQUEST_TIMED_OUT=7, INVALID_REQUEST=42, UNSUPPORTED_VERSION=35, INVALID_CONFIG=40,
THROTTLING_QUOTA_EXCEEDED=89, UNKNOWN_SERVER_ERROR=-1) keep their values. The
draft KIP leaves two numbers open; configwatch picks values Apache Kafka does not
use (its API keys end in the 90s, its error codes in the 130s): PushConfig is API
key 1000 and CONFIG_TOO_LARGE is error code 1001. See docs/ingest.md.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "API_VERSIONS_KEY",
    "API_VERSIONS_MAX_VERSION",
    "CONFIG_TOO_LARGE",
    "ERROR_NAMES",
    "INVALID_CONFIG",
    "INVALID_REQUEST",
    "NONE",
    "PUSH_CONFIG_KEY",
    "PUSH_CONFIG_MAX_VERSION",
    "REQUEST_TIMED_OUT",
    "THROTTLING_QUOTA_EXCEEDED",
    "UNKNOWN_SERVER_ERROR",
    "UNSUPPORTED_VERSION",
    "error_name",
]

API_VERSIONS_KEY: Final = 18
API_VERSIONS_MAX_VERSION: Final = 5
PUSH_CONFIG_KEY: Final = 1000
PUSH_CONFIG_MAX_VERSION: Final = 0

NONE: Final = 0
UNKNOWN_SERVER_ERROR: Final = -1
REQUEST_TIMED_OUT: Final = 7  # retriable: the gateway cannot publish the push now
UNSUPPORTED_VERSION: Final = 35
INVALID_CONFIG: Final = 40
INVALID_REQUEST: Final = 42
THROTTLING_QUOTA_EXCEEDED: Final = 89
CONFIG_TOO_LARGE: Final = 1001

ERROR_NAMES: Final[dict[int, str]] = {
    NONE: "NONE",
    UNKNOWN_SERVER_ERROR: "UNKNOWN_SERVER_ERROR",
    REQUEST_TIMED_OUT: "REQUEST_TIMED_OUT",
    UNSUPPORTED_VERSION: "UNSUPPORTED_VERSION",
    INVALID_CONFIG: "INVALID_CONFIG",
    INVALID_REQUEST: "INVALID_REQUEST",
    THROTTLING_QUOTA_EXCEEDED: "THROTTLING_QUOTA_EXCEEDED",
    CONFIG_TOO_LARGE: "CONFIG_TOO_LARGE",
}


def error_name(code: int) -> str:
    """The Kafka-style name of an error code, or ``ERROR_<code>`` for others."""
    return ERROR_NAMES.get(code, f"ERROR_{code}")

"""The Kafka wire protocol for what the KIP needs: ApiVersions v0-v5 and PushConfig v0.

Message classes come from the KIP's JSON definitions (``schemas/``) through
kafka-python's schema-driven protocol classes; framing helpers add the size
prefix and headers.
"""

from policy.protocol.codes import (
    API_VERSIONS_KEY,
    API_VERSIONS_MAX_VERSION,
    CONFIG_TOO_LARGE,
    INVALID_CONFIG,
    INVALID_REQUEST,
    NONE,
    PUSH_CONFIG_KEY,
    PUSH_CONFIG_MAX_VERSION,
    REQUEST_TIMED_OUT,
    THROTTLING_QUOTA_EXCEEDED,
    UNKNOWN_SERVER_ERROR,
    UNSUPPORTED_VERSION,
    error_name,
)
from policy.protocol.framing import (
    FrameBudget,
    decode_message,
    encode_request,
    encode_response,
    peek_request_header,
    read_frame,
)
from policy.protocol.messages import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    PushConfigRequest,
    PushConfigResponse,
    instance_id_or_none,
)

__all__ = [
    "API_VERSIONS_KEY",
    "API_VERSIONS_MAX_VERSION",
    "CONFIG_TOO_LARGE",
    "INVALID_CONFIG",
    "INVALID_REQUEST",
    "NONE",
    "PUSH_CONFIG_KEY",
    "PUSH_CONFIG_MAX_VERSION",
    "REQUEST_TIMED_OUT",
    "THROTTLING_QUOTA_EXCEEDED",
    "UNKNOWN_SERVER_ERROR",
    "UNSUPPORTED_VERSION",
    "ApiVersionsRequest",
    "ApiVersionsResponse",
    "FrameBudget",
    "PushConfigRequest",
    "PushConfigResponse",
    "decode_message",
    "encode_request",
    "encode_response",
    "error_name",
    "instance_id_or_none",
    "peek_request_header",
    "read_frame",
]

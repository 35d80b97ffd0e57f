"""The KIP's message classes, generated from our JSON definitions by kafka-python.

``ApiVersionsRequest``/``ApiVersionsResponse`` (v0-v5) and ``PushConfigRequest``/
``PushConfigResponse`` (v0) are kafka-python schema-driven ``ApiMessage`` classes
whose schemas are the JSON files in ``policy/protocol/schemas/`` (package data).
Encoding and decoding is kafka-python's; nothing here packs bytes by hand.

kafka-python keeps one process-wide table from API key to response class, which
its own clients use to decode responses. Declaring a second ApiVersionsResponse
would replace kafka-python's entry for key 18 and change how every KafkaProducer
in this process reads ApiVersions, so the table is restored after the classes
are declared (``_keep_kafka_python_registry``).
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kafka.protocol.api_header import ResponseClassRegistry
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.schemas.fields.codecs.types import Int16

from policy.protocol import schemas
from policy.protocol.codes import PUSH_CONFIG_KEY, UNSUPPORTED_VERSION

__all__ = [
    "ApiVersionsRequest",
    "ApiVersionsResponse",
    "PushConfigRequest",
    "PushConfigResponse",
    "instance_id_or_none",
]


@contextmanager
def _keep_kafka_python_registry() -> Iterator[None]:
    table = ResponseClassRegistry._response_class_registry
    saved = dict(table)
    try:
        yield
    finally:
        for key in list(table):
            if key in saved:
                table[key] = saved[key]
            elif key != PUSH_CONFIG_KEY:
                del table[key]


with _keep_kafka_python_registry():

    class ApiVersionsRequest(ApiMessage, load_json=schemas):  # type: ignore[call-arg]  # kafka-python metaclass kwarg
        """ApiVersions request v0-v5 (v3+: software name/version, v5: ClientInstanceId)."""

    class ApiVersionsResponse(ApiMessage, load_json=schemas):  # type: ignore[call-arg]  # kafka-python metaclass kwarg
        """ApiVersions response v0-v5.

        Its response header is never flexible (KIP-511: the client must find the
        error code at a fixed offset whatever the version), and a response whose
        error is UNSUPPORTED_VERSION is always version 0 (the KIP-511 fallback).
        """

        def encode_header(self, flexible: bool = False) -> Any:
            return super().encode_header(flexible=False)

        @classmethod
        def parse_header(cls, data: Any, version: int | None = None) -> Any:
            return cls.header_class.decode(data, flexible=False)

        @classmethod
        def decode_any(cls, payload: bytes, version: int) -> Any:
            """Decode a response (header included) to a request of ``version``.

            Reads the error code first, with kafka-python's Int16 codec, as the
            fixed offset allows: UNSUPPORTED_VERSION means a version 0 body.
            """
            error_code = Int16.decode(io.BytesIO(payload[4:6]))
            body_version = 0 if error_code == UNSUPPORTED_VERSION else version
            return cls.decode(payload, version=body_version, header=True)

    class PushConfigRequest(ApiMessage, load_json=schemas):  # type: ignore[call-arg]  # kafka-python metaclass kwarg
        """PushConfig request v0 (flexible): the client's configuration entries."""

    class PushConfigResponse(ApiMessage, load_json=schemas):  # type: ignore[call-arg]  # kafka-python metaclass kwarg
        """PushConfig response v0 (flexible): throttle time, error code and message."""


def instance_id_or_none(value: Any) -> str | None:
    """ClientInstanceId as a string; absent (the all-zero UUID) is None."""
    if value is None:
        return None
    parsed = value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    return None if parsed.int == 0 else str(parsed)

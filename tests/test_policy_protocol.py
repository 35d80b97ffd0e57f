"""The KIP's message classes: wire-compatible with kafka-python's own Kafka definitions, no side effects."""

from __future__ import annotations

import uuid

import pytest
from kafka.protocol.api_header import ResponseClassRegistry
from kafka.protocol.metadata.api_versions import ApiVersionsRequest as KafkaApiVersionsRequest
from kafka.protocol.metadata.api_versions import ApiVersionsResponse as KafkaApiVersionsResponse

from configwatch.contract import CONFIG_TYPE_IDS
from policy.exceptions import ProtocolError
from policy.protocol import (
    PUSH_CONFIG_KEY,
    UNSUPPORTED_VERSION,
    ApiVersionsRequest,
    ApiVersionsResponse,
    PushConfigRequest,
    PushConfigResponse,
    decode_message,
    encode_request,
    encode_response,
    instance_id_or_none,
    peek_request_header,
)


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_api_versions_request_bytes_match_kafka_python_for_shared_versions(version: int) -> None:
    fields = {"client_software_name": "apache-kafka-java", "client_software_version": "4.1.0"} if version >= 3 else {}
    ours = encode_request(ApiVersionsRequest(version=version, **fields), version, 5, "cid")
    theirs = KafkaApiVersionsRequest(version=version, **fields)
    theirs.with_header(correlation_id=5, client_id="cid")
    assert ours == bytes(theirs.encode(header=True, framed=True))


@pytest.mark.parametrize("version", [0, 3, 4])
def test_our_api_versions_response_decodes_with_kafka_python(version: int) -> None:
    keys = [ApiVersionsResponse.ApiVersion(api_key=18, min_version=0, max_version=5),
            ApiVersionsResponse.ApiVersion(api_key=PUSH_CONFIG_KEY, min_version=0, max_version=0)]
    framed = encode_response(ApiVersionsResponse(version=version, error_code=0, api_keys=keys, throttle_time_ms=0),
                             version, 11)
    decoded = KafkaApiVersionsResponse.decode(framed[4:], version=version, header=True)
    assert decoded.header.correlation_id == 11
    assert [(k.api_key, k.min_version, k.max_version) for k in decoded.api_keys] == [(18, 0, 5), (1000, 0, 0)]


def test_v5_adds_client_instance_id_after_the_software_fields() -> None:
    instance = uuid.uuid4()
    v4 = encode_request(ApiVersionsRequest(version=4, client_software_name="n", client_software_version="1"), 4, 1,
                        None)
    v5 = encode_request(ApiVersionsRequest(version=5, client_software_name="n", client_software_version="1",
                                           client_instance_id=instance), 5, 1, None)
    assert len(v5) == len(v4) + 16
    decoded = ApiVersionsRequest.decode(v5[4:], version=5, header=True)
    assert decoded.client_instance_id == instance
    assert instance_id_or_none(decoded.client_instance_id) == str(instance)
    assert instance_id_or_none(uuid.UUID(int=0)) is None


def test_fallback_response_is_version_0_and_decodes_as_such() -> None:
    fallback = ApiVersionsResponse(version=0, error_code=UNSUPPORTED_VERSION,
                                   api_keys=[ApiVersionsResponse.ApiVersion(api_key=18, min_version=0, max_version=5)])
    framed = encode_response(fallback, 0, 3)
    decoded = ApiVersionsResponse.decode_any(framed[4:], 5)  # asked at v5, answered at v0
    assert (decoded.version, decoded.error_code, decoded.api_keys[0].max_version) == (0, UNSUPPORTED_VERSION, 5)


def test_push_config_round_trip_with_tagged_fields_and_ids() -> None:
    entries = [PushConfigRequest.Config(config_key=k, config_value=v, config_type=CONFIG_TYPE_IDS[t], is_default=d)
               for k, v, t, d in [("acks", "all", "STRING", False), ("linger.ms", "5", "LONG", True),
                                  ("ssl.key.password", "pw", "PASSWORD", False)]]
    framed = encode_request(PushConfigRequest(version=0, configs=entries), 0, 42, "c")
    header = peek_request_header(framed[4:])
    assert (header.request_api_key, header.request_api_version, header.correlation_id) == (PUSH_CONFIG_KEY, 0, 42)
    decoded = decode_message(PushConfigRequest, framed[4:], 0)
    assert [(c.config_key, c.config_value, c.config_type, c.is_default) for c in decoded.configs] == [
        ("acks", "all", 2, False), ("linger.ms", "5", 5, True), ("ssl.key.password", "pw", 9, False)]
    response = PushConfigResponse(version=0, throttle_time_ms=250, error_code=40, error_message="violation")
    back = PushConfigResponse.decode(encode_response(response, 0, 42)[4:], version=0, header=True)
    assert (back.throttle_time_ms, back.error_code, back.error_message) == (250, 40, "violation")
    null_message = PushConfigResponse(version=0, throttle_time_ms=0, error_code=0, error_message=None)
    assert PushConfigResponse.decode(encode_response(null_message, 0, 1)[4:], version=0,
                                     header=True).error_message is None


def test_garbage_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError):
        peek_request_header(b"\x00\x12")
    with pytest.raises(ProtocolError):
        decode_message(PushConfigRequest, encode_request(ApiVersionsRequest(version=0), 0, 1, "x")[4:] + b"\xff", 0)


def test_kafka_pythons_response_table_is_untouched() -> None:
    # Our ApiVersionsResponse must not replace kafka-python's (its producers decode with that table).
    # (Which kafka-python module defines its class depends on what it has imported so far.)
    table = ResponseClassRegistry._response_class_registry
    assert table[18] is not ApiVersionsResponse
    assert table[18].__module__.startswith("kafka.protocol.")
    assert table[PUSH_CONFIG_KEY].__module__ == "policy.protocol.messages"

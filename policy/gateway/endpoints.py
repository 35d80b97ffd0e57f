"""Broker endpoints inside proxied responses, read and rewritten through kafka-python's message classes.

In proxy mode every response that names a broker (Metadata, FindCoordinator,
DescribeCluster, and Produce v10+'s KIP-951 ``NodeEndpoints``) is decoded with
kafka-python's schema-driven class for its API and version, its host and port
replaced by the gateway's listener for that node, and encoded again; every other
response passes through as bytes. APIs whose responses carry endpoints the
gateway does not rewrite are advertised only in versions without them (Fetch up
to v15, DescribeQuorum up to v1) or not at all (ShareFetch, ShareAcknowledge),
so a client never learns a broker's own address.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin import DescribeClusterResponse
from kafka.protocol.metadata import FindCoordinatorResponse, MetadataResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse

from policy.exceptions import ProtocolError
from policy.protocol import (
    API_VERSIONS_KEY,
    API_VERSIONS_MAX_VERSION,
    PUSH_CONFIG_KEY,
    PUSH_CONFIG_MAX_VERSION,
    ApiVersionsResponse,
    decode_message,
    encode_response,
)

__all__ = [
    "REWRITTEN",
    "BrokerEndpoint",
    "advertised_api_keys",
    "decode_endpoints",
    "expects_response",
    "reframe",
    "rewrite_endpoints",
]

PRODUCE_KEY = 0
FETCH_KEY = 1
DESCRIBE_QUORUM_KEY = 55
DESCRIBE_CLUSTER_KEY = 60
CONTROLLER_ENDPOINTS = 2  # DescribeCluster EndpointType: controllers, not brokers (never rewritten)

# API key -> the response class whose endpoints the gateway rewrites.
REWRITTEN: dict[int, Any] = {
    PRODUCE_KEY: ProduceResponse,
    3: MetadataResponse,
    10: FindCoordinatorResponse,
    DESCRIBE_CLUSTER_KEY: DescribeClusterResponse,
}
# Produce responses name brokers only from v10 (KIP-951); older ones pass as bytes.
_REWRITE_FROM = {PRODUCE_KEY: 10}
# Highest version advertised for APIs whose responses carry endpoints the gateway leaves alone.
_CAPPED = {FETCH_KEY: 15, DESCRIBE_QUORUM_KEY: 1}
# Never advertised: their responses carry NodeEndpoints and have no schema here.
_WITHHELD = frozenset({78, 79})  # ShareFetch, ShareAcknowledge
# Lowest version advertised: SaslHandshake v0 is followed by raw SASL tokens outside Kafka's framing, which a
# proxy reading requests cannot relay; v1 (Kafka 1.0+ clients) wraps them in SaslAuthenticate.
_FLOOR = {17: 1}


@dataclass(frozen=True, slots=True)
class BrokerEndpoint:
    """One broker address inside a decoded response: the object holding it and its id field."""

    holder: Any
    id_field: str

    @property
    def node_id(self) -> int:
        return int(getattr(self.holder, self.id_field))

    @property
    def address(self) -> tuple[str, int]:
        return (str(self.holder.host), int(self.holder.port))

    def move_to(self, host: str, port: int) -> None:
        self.holder.host = host
        self.holder.port = port


def advertised_api_keys(upstream: Iterable[Any], *, push_config: bool) -> list[Any]:
    """The upstream's ApiVersions ranges as the gateway may offer them (ApiVersions up to v5, which the
    gateway answers itself), plus PushConfig with a policy."""
    keys = []
    for entry in upstream:
        key, low, high = int(entry.api_key), int(entry.min_version), int(entry.max_version)
        if key in _WITHHELD or key == PUSH_CONFIG_KEY:
            continue
        if key == API_VERSIONS_KEY:
            high = max(high, API_VERSIONS_MAX_VERSION)  # the gateway takes v5 (the draft KIP's) itself
        if key in REWRITTEN:
            high = min(high, REWRITTEN[key].max_version)
        high = min(high, _CAPPED.get(key, high))
        low = max(low, _FLOOR.get(key, low))
        if high >= low:
            keys.append(ApiVersionsResponse.ApiVersion(api_key=key, min_version=low, max_version=high))
    if push_config:
        keys.append(ApiVersionsResponse.ApiVersion(api_key=PUSH_CONFIG_KEY, min_version=0,
                                                   max_version=PUSH_CONFIG_MAX_VERSION))
    return keys


def expects_response(payload: bytes, api_key: int, version: int) -> bool:
    """False only for a Produce request with acks=0, which Kafka never answers."""
    if api_key != PRODUCE_KEY:
        return True
    return bool(decode_message(ProduceRequest, payload, version).acks != 0)


def decode_endpoints(api_key: int, version: int, payload: bytes) -> tuple[Any, list[BrokerEndpoint]] | None:
    """The decoded response and its broker endpoints, or None when this response passes as bytes."""
    cls = REWRITTEN.get(api_key)
    if cls is None or version < _REWRITE_FROM.get(api_key, 0) or version > cls.max_version:
        return None
    message = decode_message(cls, payload, version)
    if api_key == PRODUCE_KEY:
        found = [BrokerEndpoint(n, "node_id") for n in message.node_endpoints or ()]
    elif api_key == 3:
        found = [BrokerEndpoint(b, "node_id") for b in message.brokers or ()]
    elif api_key == 10:
        holders = message.coordinators if version >= 4 else [message]
        found = [BrokerEndpoint(c, "node_id") for c in holders or ()]
    elif version >= 1 and message.endpoint_type == CONTROLLER_ENDPOINTS:
        found = []
    else:
        found = [BrokerEndpoint(b, "broker_id") for b in message.brokers or ()]
    return message, [e for e in found if e.node_id >= 0]


def rewrite_endpoints(message: Any, endpoints: list[BrokerEndpoint], gateway_ports: dict[int, int], host: str,
                      version: int, correlation_id: int) -> bytes:
    """Point every endpoint at the gateway's listener for its node and frame the response again."""
    for endpoint in endpoints:
        port = gateway_ports.get(endpoint.node_id)
        if port is None:
            raise ProtocolError(f"no gateway listener for broker {endpoint.node_id}")
        endpoint.move_to(host, port)
    return reframe(message, version, correlation_id)


def reframe(message: Any, version: int, correlation_id: int) -> bytes:
    """A decoded response framed again (size, header, body) at ``version``."""
    if version != message.API_VERSION:
        fresh = type(message)(version=version, **{name: getattr(message, name) for name in message.fields})
        return encode_response(fresh, version, correlation_id)
    message.with_header(correlation_id=correlation_id)  # the decoded header cannot take a new version
    return bytes(message.encode(header=True, framed=True))


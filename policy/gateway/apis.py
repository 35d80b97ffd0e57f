"""The gateway's two APIs, as a broker with a ClientConfigPolicy would answer them.

ApiVersions (v0-v5): KIP-511 fallback for versions above 5 (a v0 response with
UNSUPPORTED_VERSION listing the ApiVersions range); v3+ software name and version
checked against the broker's pattern (INVALID_REQUEST, then close); a valid
request registers the connection. PushConfig is advertised only with a policy.

PushConfig (v0): over ``client.config.max.bytes`` gets CONFIG_TOO_LARGE without
calling the policy; over the rate limit gets THROTTLING_QUOTA_EXCEEDED with
ThrottleTimeMs; otherwise the policy judges it off the event loop
(``policy.gateway.judge``) and its violation text,
if any, comes back as INVALID_CONFIG + ErrorMessage; a policy that cannot record
the push now (``PolicyUnavailableError``: the publisher is not connected, stalled
or full) gets the retriable REQUEST_TIMED_OUT with a throttle time, never NONE.
A retry of a push already recorded for that client instance gets the first
answer again without reaching the policy (``policy.gateway.recorded``).

Once a connection is registered, a request whose header carries another
(non-empty) client id than the connection's closes it (``identity_changed``):
its events, gauges and quota belong to the client id it registered with.

Anything else (unknown API key, unsupported version, PushConfig without a
policy, undecodable body) closes the connection, as Kafka's broker does.
"""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass
from typing import Any

from configwatch.contract import config_type_from_id, is_valid_software
from policy.api import ClientConfig, ClientConfigData, ClientConfigPolicy, RequestContext
from policy.exceptions import PolicyUnavailableError, PolicyViolationError, ProtocolError
from policy.gateway.config import GatewayConfig
from policy.gateway.judge import PushJudge
from policy.gateway.metrics import GatewayMetrics
from policy.gateway.recorded import RecordedAnswer, RecordedPushes
from policy.gateway.registry import ConnectionRegistry
from policy.gateway.sasl import SASL_MECHANISMS, SaslExchange
from policy.gateway.throttle import ClientQuotas
from policy.gateway.tls import TlsPosture
from policy.protocol import (
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
    ApiVersionsRequest,
    ApiVersionsResponse,
    PushConfigRequest,
    PushConfigResponse,
    decode_message,
    encode_response,
    instance_id_or_none,
    peek_request_header,
)

__all__ = ["CLIENT_ID_MAX_CHARS", "MAX_PUSH_ENTRIES", "ConnectionState", "Reply", "RequestHandler"]

log = logging.getLogger(__name__)

# How long a client waits before retrying a push the policy could not record (the publisher is down or full).
UNAVAILABLE_THROTTLE_MS = 1000
# Kafka caps neither; these bound what one client can make the gateway hold and publish.
CLIENT_ID_MAX_CHARS = 256
PRINCIPAL = "User:ANONYMOUS"  # a connection that neither authenticated nor presented a client certificate
MAX_PUSH_ENTRIES = 1000


@dataclass(slots=True)
class ConnectionState:
    """What the gateway learned about one connection so far."""

    connection_id: str
    client_address: str | None
    client_id: str | None = None
    client_software_name: str | None = None
    client_software_version: str | None = None
    client_instance_id: str | None = None
    registered: tuple[str | None, ...] | None = None  # the identity its connection_opened carries (or will)
    opened: bool = False  # connection_opened published: the identity is fixed from then on
    tls: TlsPosture | None = None  # a TLS listener's handshake
    sasl: SaslExchange | None = None  # a SASL listener's exchange: connection_opened waits for its success

    @property
    def principal(self) -> str | None:
        """As the broker names it: the SASL identity (None where the mechanism's is not read: OAUTHBEARER,
        GSSAPI), else the client certificate's subject, else ``User:ANONYMOUS``."""
        if self.sasl is not None:
            return self.sasl.principal
        return (self.tls.principal if self.tls else None) or PRINCIPAL

    @property
    def awaiting_authentication(self) -> bool:
        return self.sasl is not None and not self.sasl.authenticated


@dataclass(frozen=True, slots=True)
class Reply:
    """A framed response to write (or None), whether to close afterwards and why, and how long to
    read nothing more from the connection (a throttled client's muted channel)."""

    response: bytes | None
    close_reason: str | None = None
    mute_ms: int = 0


class RequestHandler:
    """Answers one request at a time for every connection of a gateway."""

    def __init__(self, config: GatewayConfig, policy: ClientConfigPolicy | None, registry: ConnectionRegistry,
                 metrics: GatewayMetrics) -> None:
        self._config = config
        self._policy = policy
        self._registry = registry
        self._metrics = metrics
        self._quotas = ClientQuotas(config.push_rate_limit)
        self._recorded = RecordedPushes()
        self._judge = PushJudge(policy) if policy is not None else None
        if self._judge is not None:
            metrics.watch_pending_pushes(self._judge.pending)
        keys = [ApiVersionsResponse.ApiVersion(api_key=API_VERSIONS_KEY, min_version=0,
                                               max_version=API_VERSIONS_MAX_VERSION)]
        if policy is not None:
            keys.append(ApiVersionsResponse.ApiVersion(api_key=PUSH_CONFIG_KEY, min_version=0,
                                                       max_version=PUSH_CONFIG_MAX_VERSION))
        self._advertised = keys

    def context(self, state: ConnectionState) -> RequestContext:
        return RequestContext(
            connection_id=state.connection_id, client_address=state.client_address,
            listener=self._config.listener, security_protocol=self._config.security_protocol,
            principal=state.principal, client_id=state.client_id, client_instance_id=state.client_instance_id,
            client_software_name=state.client_software_name, client_software_version=state.client_software_version,
            broker_id=self._config.broker_id,
            tls_version=state.tls.version if state.tls else None, tls_cipher=state.tls.cipher if state.tls else None,
            client_certificate=state.tls.client_certificate if state.tls else None,
            sasl_mechanism=state.sasl.mechanism if state.sasl else None, tls_offered_at=self._config.tls_offered_at)

    def close(self) -> None:
        """Judge the pushes still queued, then stop the policy's thread (after every connection ended)."""
        if self._judge is not None:
            self._judge.close()

    @property
    def serves_push_config(self) -> bool:
        """True when a policy is configured, so PushConfig is advertised and answered."""
        return self._policy is not None

    async def handle(self, payload: bytes, state: ConnectionState, received_ms: int) -> Reply:
        """Answer one request frame. Raises ProtocolError when the bytes are not a request."""
        header, refused = self.admit(payload, state)
        if refused is not None:
            return refused
        key, version = header.request_api_key, header.request_api_version
        if key == API_VERSIONS_KEY:
            return self.check_api_versions(payload, version, header.correlation_id, state) or Reply(
                encode_response(ApiVersionsResponse(version=version, error_code=NONE, api_keys=self._advertised,
                                                    throttle_time_ms=0), version, header.correlation_id))
        return await self.answer_push_config(payload, header, state, received_ms)

    def admit(self, payload: bytes, state: ConnectionState) -> tuple[Any, Reply | None]:
        """Read the request header and note the client id; a Reply when the request is refused."""
        header = peek_request_header(payload)
        if header.client_id and len(header.client_id) > CLIENT_ID_MAX_CHARS:
            self._metrics.requests.labels(api=str(header.request_api_key), outcome="client_id_too_long").inc()
            log.info("closing %s: a client id of %d characters (limit %d)", state.connection_id,
                     len(header.client_id), CLIENT_ID_MAX_CHARS)
            return header, Reply(None, "client_id_too_long")
        if header.client_id and state.registered is not None and state.client_id \
                and header.client_id != state.client_id:
            # Its events, gauges and quota are the registered client id's: another one is refused (a null or
            # empty client id in a later header is no change; clients keep one client id per connection).
            return header, self._identity_changed(state, header.request_api_key, header.request_api_version,
                                                  header.correlation_id, "a request under another client id")
        if header.client_id:
            state.client_id = header.client_id
        return header, None

    def _identity_changed(self, state: ConnectionState, key: int, version: int, correlation_id: int,
                          what: str) -> Reply:
        """Close a connection that changed its identity; an ApiVersions request gets INVALID_REQUEST first."""
        api = {API_VERSIONS_KEY: "ApiVersions", PUSH_CONFIG_KEY: "PushConfig"}.get(key, str(key))
        self._metrics.requests.labels(api=api, outcome="identity_changed").inc()
        log.info("closing %s: %s than the connection registered", state.connection_id, what)
        if key != API_VERSIONS_KEY or not 0 <= version <= API_VERSIONS_MAX_VERSION:
            return Reply(None, "identity_changed")
        response = ApiVersionsResponse(version=version, error_code=INVALID_REQUEST, api_keys=[], throttle_time_ms=0)
        return Reply(encode_response(response, version, correlation_id), "identity_changed")

    async def answer_push_config(self, payload: bytes, header: Any, state: ConnectionState,
                                 received_ms: int) -> Reply:
        """PushConfig when a policy is configured; any other request (or PushConfig without one) closes."""
        key, version = header.request_api_key, header.request_api_version
        if key == PUSH_CONFIG_KEY and self._judge is not None:
            return await self._push_config(payload, version, header.correlation_id, state, received_ms)
        self._metrics.requests.labels(api=str(key), outcome="unknown_api").inc()
        log.info("closing %s: API key %d is not served here", state.connection_id, key)
        return Reply(None, "unknown_api")

    def register_unknown(self, state: ConnectionState) -> None:
        """Register a connection at a request other than ApiVersions: as an ApiVersions named it, else unknown.

        A SASL connection opens at its first request after authenticating (or when it ends): the Java client
        authenticates after an ApiVersions v0, which names no software, and sends its real one afterwards."""
        if state.registered is None:
            state.registered = (None, None, None, state.client_id)
        if not state.opened:
            self._register(state)

    def _register(self, state: ConnectionState) -> None:
        """Publish ``connection_opened``, unless the connection has yet to authenticate."""
        if not state.awaiting_authentication:
            self._registry.register(self.context(state))
            state.opened = True

    def authenticated(self, state: ConnectionState) -> None:
        """The broker accepted a SASL exchange of the connection (the first: it opens at its next request, under
        its principal; or a KIP-368 re-authentication)."""
        self._metrics.sasl.labels(mechanism=_mechanism_label(state), outcome="ok").inc()

    def authentication_failed(self, state: ConnectionState, error_code: int) -> None:
        """The broker refused a SASL step (its error reaches the client as it is)."""
        self._metrics.sasl.labels(mechanism=_mechanism_label(state), outcome="failed").inc()
        log.info("%s: the cluster refused its SASL %s authentication (error %d)", state.connection_id,
                 _mechanism_label(state), error_code)

    # -- ApiVersions ---------------------------------------------------------------------------
    def check_api_versions(self, payload: bytes, version: int, correlation_id: int,
                           state: ConnectionState) -> Reply | None:
        """Validate an ApiVersions request and register the connection: None when accepted, else the
        gateway's own answer (the KIP-511 fallback, or INVALID_REQUEST and close)."""
        if not 0 <= version <= API_VERSIONS_MAX_VERSION:
            # KIP-511: answer v0 with UNSUPPORTED_VERSION and the supported ApiVersions range.
            self._metrics.requests.labels(api="ApiVersions", outcome="unsupported_version").inc()
            fallback = ApiVersionsResponse(version=0, error_code=UNSUPPORTED_VERSION, api_keys=self._advertised[:1])
            return Reply(encode_response(fallback, 0, correlation_id))
        request = decode_message(ApiVersionsRequest, payload, version)
        if version >= 3:
            name, sw_version = request.client_software_name, request.client_software_version
            if not (name and sw_version and is_valid_software(name) and is_valid_software(sw_version)):
                self._metrics.requests.labels(api="ApiVersions", outcome="invalid_request").inc()
                log.info("closing %s: client software name/version fail the KIP-511 pattern", state.connection_id)
                response = ApiVersionsResponse(version=version, error_code=INVALID_REQUEST, api_keys=[],
                                               throttle_time_ms=0)
                return Reply(encode_response(response, version, correlation_id), "invalid_request")
        else:
            name, sw_version = state.client_software_name, state.client_software_version
        instance = instance_id_or_none(request.client_instance_id) if version >= 5 else state.client_instance_id
        identity = (name, sw_version, instance, state.client_id)
        if state.opened and state.registered != identity:
            # The connection's events and gauges carry the first identity: a second one is refused.
            return self._identity_changed(state, API_VERSIONS_KEY, version, correlation_id,
                                          "a second ApiVersions with another client identity")
        state.client_software_name, state.client_software_version, state.client_instance_id = identity[:3]
        state.registered = identity
        self._register(state)
        self._metrics.requests.labels(api="ApiVersions", outcome="ok").inc()
        return None

    # -- PushConfig ----------------------------------------------------------------------------
    async def _push_config(self, payload: bytes, version: int, correlation_id: int, state: ConnectionState,
                     received_ms: int) -> Reply:
        assert self._judge is not None
        if not 0 <= version <= PUSH_CONFIG_MAX_VERSION:
            self._metrics.requests.labels(api="PushConfig", outcome="unsupported_version").inc()
            log.info("closing %s: PushConfig v%d is not supported", state.connection_id, version)
            return Reply(None, "unsupported_version")
        size = len(payload)
        limit = self._config.max_config_bytes
        if size > limit:
            self._metrics.requests.labels(api="PushConfig", outcome="config_too_large").inc()
            return self._push_reply(correlation_id, CONFIG_TOO_LARGE,
                                    f"PushConfig request of {size} bytes exceeds client.config.max.bytes={limit}")
        wait_ms = self._quotas.acquire(_quota_key(state))
        if wait_ms:
            self._metrics.requests.labels(api="PushConfig", outcome="throttled").inc()
            return self._push_reply(correlation_id, THROTTLING_QUOTA_EXCEEDED,
                                    "PushConfig rate limit exceeded", throttle_ms=wait_ms)
        request = decode_message(PushConfigRequest, payload, version)
        if len(request.configs or ()) > MAX_PUSH_ENTRIES:
            self._metrics.requests.labels(api="PushConfig", outcome="config_too_large").inc()
            return self._push_reply(correlation_id, CONFIG_TOO_LARGE,
                                    f"PushConfig request with {len(request.configs)} entries exceeds the "
                                    f"gateway's {MAX_PUSH_ENTRIES}")
        configs = []
        for c in request.configs or ():
            if c.config_key is None or c.config_value is None:
                raise ProtocolError("PushConfig entry with a null key or value")
            configs.append(ClientConfig(c.config_key, c.config_value, config_type_from_id(c.config_type),
                                        bool(c.is_default)))
        data = ClientConfigData(configs=tuple(configs), timestamp=received_ms, size_bytes=size)
        # Without a client instance id no retry can be recognised: no digest to compute.
        digest = self._recorded.digest(data.configs) if state.client_instance_id else b""
        earlier = self._recorded.answer(state.client_instance_id, digest)
        if earlier is not None:  # a retry of a push already recorded: the same answer, not a second record
            self._metrics.requests.labels(api="PushConfig", outcome="retry_answered").inc()
            log.info("answering a retried push from %s as before", state.connection_id)
            return self._push_reply(correlation_id, earlier.error_code, earlier.error_message)
        started = time.perf_counter()
        error = False
        try:
            violation = await self._judge.judge(self.context(state), data)
        except PolicyViolationError as exc:
            violation = str(exc)
        except PolicyUnavailableError as exc:
            self._metrics.requests.labels(api="PushConfig", outcome="unavailable").inc()
            log.warning("refusing a push from %s for now: %s", state.connection_id, exc)
            return self._push_reply(correlation_id, REQUEST_TIMED_OUT, str(exc), throttle_ms=UNAVAILABLE_THROTTLE_MS)
        except Exception as exc:  # a plugin's failure must not take the connection or the gateway down
            error = True
            # The exception's message may quote config values: log its type and frames, never its text.
            log.error("ClientConfigPolicy.process_all() raised %s on %s", type(exc).__name__, state.connection_id)
            log.debug("process_all() failed at:\n%s", "".join(traceback.format_tb(exc.__traceback__)))
            violation = None
        finally:
            self._metrics.observe_process((time.perf_counter() - started) * 1000.0, error=error)
        if error:
            self._metrics.requests.labels(api="PushConfig", outcome="process_error").inc()
            return self._push_reply(correlation_id, UNKNOWN_SERVER_ERROR, "the client config policy failed")
        answer = RecordedAnswer(INVALID_CONFIG, violation) if violation else RecordedAnswer(NONE, None)
        self._recorded.record(state.client_instance_id, digest, answer)
        self._metrics.requests.labels(api="PushConfig", outcome="violation" if violation else "ok").inc()
        return self._push_reply(correlation_id, answer.error_code, answer.error_message)

    @staticmethod
    def _push_reply(correlation_id: int, error_code: int, message: str | None, throttle_ms: int = 0) -> Reply:
        response = PushConfigResponse(version=0, throttle_time_ms=throttle_ms, error_code=error_code,
                                      error_message=message)
        return Reply(encode_response(response, 0, correlation_id), mute_ms=throttle_ms)


def _quota_key(state: ConnectionState) -> str:
    """Whose quota a request uses: as Kafka's (user, client-id) quotas, the principal and client id; without a
    client id, the client instance, else the connection."""
    if state.client_id:
        return f"client-id:{state.principal}/{state.client_id}"
    return f"instance:{state.client_instance_id}" if state.client_instance_id else state.connection_id


def _mechanism_label(state: ConnectionState) -> str:
    """A bounded metric label: a mechanism Kafka ships, else ``other`` (the client names it)."""
    mechanism = state.sasl.mechanism if state.sasl else None
    return mechanism if mechanism in SASL_MECHANISMS else "other"

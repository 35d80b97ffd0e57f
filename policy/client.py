"""The client side of the KIP: push a client's configuration to a broker, best effort.

``push_config`` (and ``push_config_async``) connect to one of the given
brokers, perform ApiVersions (v5 with a client instance id), and if the broker
advertises PushConfig, send the client's configuration:

- ``enable.config.push=false`` skips the handshake entirely;
- ``config.push.allowed.keys`` (or ``PushOptions.allowed_keys``) replaces the
  default key set; that key itself is only sent when it lists itself;
- entries sensitive under the KIP rules (``udfs.sensitivity``) are dropped with
  a warning naming the keys (never values; a key that itself holds a secret as
  its marker, ``udfs.rules.batch.safe_key_names``); if nothing is left, nothing is sent;
- network and retriable errors are retried with exponential backoff (and
  ThrottleTimeMs waited out) until ``timeout_s``;
- nothing raises into the caller: the outcome is a ``PushResult``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

import kafka.errors
import pyarrow as pa

from configwatch.secrets import SecretStr
from policy.api import ClientConfig
from policy.exceptions import ProtocolError
from policy.protocol import CONFIG_TOO_LARGE, INVALID_CONFIG, NONE, error_name
from policy.session import ClientIdentity, HandshakeRejectedError, PushSession
from udfs.rules.batch import safe_key_names
from udfs.sensitivity import kip_client_reason

__all__ = ["ClientIdentity", "PushOptions", "PushResult", "push_config", "push_config_async", "select_configs"]

log = logging.getLogger(__name__)

ENABLE_KEY = "enable.config.push"
ALLOWED_KEYS_KEY = "config.push.allowed.keys"

# Outcomes of a push attempt.
ACCEPTED = "accepted"          # ErrorCode NONE
VIOLATION = "violation"        # INVALID_CONFIG: recorded by the broker, with a violation message
REJECTED = "rejected"          # a non-retriable error: nothing recorded (CONFIG_TOO_LARGE, INVALID_REQUEST, ...)
UNSUPPORTED = "unsupported"    # the broker does not advertise PushConfig
SKIPPED = "skipped"            # enable.config.push=false
NOTHING = "nothing_to_send"    # every selected entry was sensitive (or none selected)
FAILED = "failed"              # retries exhausted (network, timeouts, retriable errors)

# A client holds no deployment key: the markers of withheld keys are under this process's own.
_MARKER_KEY = SecretStr(secrets.token_hex(32))


@dataclass(frozen=True, slots=True)
class PushOptions:
    """The client's push settings (``None`` for the two KIP keys: read them from the configs)."""

    enable_config_push: bool | None = None
    allowed_keys: tuple[str, ...] | None = None
    default_keys: tuple[str, ...] | None = None
    filter_sensitive: bool = True
    timeout_s: float = 60.0
    request_timeout_s: float = 30.0
    retry_backoff_ms: int = 100
    retry_backoff_max_ms: int = 1000


@dataclass(frozen=True, slots=True)
class PushResult:
    """What happened to one push; ``delivered`` means the broker recorded it."""

    status: str
    error_code: int | None = None
    error_message: str | None = None
    attempts: int = 0
    throttle_ms: int = 0
    sent_keys: tuple[str, ...] = ()
    withheld_keys: tuple[str, ...] = ()
    request_size_bytes: int | None = None
    client_instance_id: str | None = None

    @property
    def delivered(self) -> bool:
        return self.status in (ACCEPTED, VIOLATION)


def _enabled(configs: Sequence[ClientConfig], options: PushOptions) -> bool:
    if options.enable_config_push is not None:
        return options.enable_config_push
    for c in configs:
        if c.key == ENABLE_KEY:
            return (c.value or "").strip().lower() != "false"
    return True


def _allowed(configs: Sequence[ClientConfig], options: PushOptions) -> tuple[str, ...] | None:
    if options.allowed_keys is not None:
        return options.allowed_keys
    for c in configs:
        if c.key == ALLOWED_KEYS_KEY and c.value:
            return tuple(k.strip() for k in c.value.split(",") if k.strip())
    return options.default_keys


def select_configs(configs: Sequence[ClientConfig], options: PushOptions
                   ) -> tuple[list[ClientConfig], list[tuple[str, str]]]:
    """The entries to send and the (key as shown, rule) pairs withheld as sensitive (the caller warns)."""
    allowed = _allowed(configs, options)
    selected = []
    for c in configs:
        if allowed is not None:
            if c.key not in allowed:
                continue
        elif c.key == ALLOWED_KEYS_KEY:
            continue  # only sent when it lists itself
        if c.value is None:
            continue  # the wire's ConfigValue is not nullable
        selected.append(c)
    if not options.filter_sensitive:
        return selected, []
    sent: list[ClientConfig] = []
    withheld: list[tuple[str, str]] = []
    for c in selected:
        rule = kip_client_reason(c.key, c.type)
        if rule is None:
            sent.append(c)
        else:
            withheld.append((c.key, rule))
    if withheld:
        shown, _ = safe_key_names(pa.array([k for k, _ in withheld], pa.string()), _MARKER_KEY)
        withheld = [(str(k), rule) for k, (_, rule) in zip(shown, withheld, strict=True)]
    return sent, withheld


def _retriable(code: int) -> bool:
    return code not in (CONFIG_TOO_LARGE, INVALID_CONFIG) and bool(getattr(kafka.errors.for_code(code),
                                                                           "retriable", False))


def _backoff_s(options: PushOptions, attempt: int) -> float:
    base = min(options.retry_backoff_ms * (2 ** max(0, attempt - 1)), options.retry_backoff_max_ms)
    return base * random.uniform(0.8, 1.2) / 1000.0


async def push_config_async(bootstrap: str | tuple[str, int], configs: Sequence[ClientConfig],
                            identity: ClientIdentity | None = None, options: PushOptions | None = None, *,
                            hold: Callable[[], Awaitable[None]] | None = None) -> PushResult:
    """Push ``configs`` to one of ``bootstrap`` (``host:port[,host:port...]``); never raises.

    ``hold``, if given, is awaited after the push (or after learning there is
    nothing to push) with the connection still open; the simulator uses it to
    model connection lifetimes.
    """
    options = options or PushOptions()
    identity = identity or ClientIdentity()
    if identity.client_instance_id is None:
        identity = _with_instance_id(identity)
    try:
        return await _push(bootstrap, configs, identity, options, hold)
    except Exception as exc:  # best effort: the caller must never see an exception
        log.warning("config push failed unexpectedly: %s", type(exc).__name__)
        return PushResult(FAILED, error_message=type(exc).__name__, client_instance_id=identity.client_instance_id)


def push_config(bootstrap: str | tuple[str, int], configs: Sequence[ClientConfig],
                identity: ClientIdentity | None = None, options: PushOptions | None = None) -> PushResult:
    """Blocking ``push_config_async`` (runs its own event loop); never raises."""
    try:
        return asyncio.run(push_config_async(bootstrap, configs, identity, options))
    except Exception as exc:  # e.g. called from inside a running event loop
        log.warning("config push failed: %s", exc)
        return PushResult(FAILED, error_message=str(exc))


def _with_instance_id(identity: ClientIdentity) -> ClientIdentity:
    return replace(identity, client_instance_id=str(uuid.uuid4()))


def _pick(bootstrap: str | tuple[str, int]) -> str | tuple[str, int]:
    if isinstance(bootstrap, tuple):
        return bootstrap
    nodes = [b.strip() for b in bootstrap.split(",") if b.strip()]
    return random.choice(nodes) if nodes else bootstrap


async def _push(bootstrap: str | tuple[str, int], configs: Sequence[ClientConfig], identity: ClientIdentity,
                options: PushOptions, hold: Callable[[], Awaitable[None]] | None) -> PushResult:
    if not _enabled(configs, options):
        return PushResult(SKIPPED, client_instance_id=identity.client_instance_id)
    entries, withheld = select_configs(configs, options)
    if withheld:
        log.warning("not pushing %d sensitive config(s): %s", len(withheld),
                    ", ".join(f"{k} ({rule})" for k, rule in withheld))
    size = PushSession.request_size(entries, identity.client_id) if entries else None
    deadline = time.monotonic() + options.timeout_s
    attempts = 0  # PushConfig requests sent
    retries = 0  # failed rounds (connect, handshake or push), for the backoff
    throttled = 0
    session: PushSession | None = None
    last_error = "no attempt"

    def done(status: str, code: int | None = None, message: str | None = None) -> PushResult:
        sent = tuple(c.key for c in entries) if attempts else ()
        return PushResult(status, code, message, attempts, throttled, sent_keys=sent,
                          withheld_keys=tuple(k for k, _ in withheld), request_size_bytes=size,
                          client_instance_id=identity.client_instance_id)

    try:
        while True:
            wait_s = 0.0
            try:
                if session is None:
                    session = await PushSession.open(_pick(bootstrap), identity, options.request_timeout_s)
                if not session.supports_push or not entries:
                    await _hold(hold)
                    return done(UNSUPPORTED if not session.supports_push else NOTHING)
                attempts += 1
                response = await session.push(entries)
            except HandshakeRejectedError as exc:
                log.warning("config push: %s", exc)
                return done(REJECTED, exc.error_code, str(exc))
            except (OSError, TimeoutError, asyncio.IncompleteReadError, ProtocolError) as exc:
                last_error = f"{type(exc).__name__}: {exc}"
                if session is not None:
                    await session.close()
                    session = None
            else:
                code, throttle = int(response.error_code), int(response.throttle_time_ms or 0)
                throttled += throttle
                if code in (NONE, INVALID_CONFIG):
                    if code == INVALID_CONFIG:
                        log.warning("config push recorded with a violation: %s", response.error_message)
                    await _hold(hold)
                    return done(ACCEPTED if code == NONE else VIOLATION, code, response.error_message)
                if not _retriable(code):
                    log.warning("config push rejected: %s %s", error_name(code), response.error_message or "")
                    return done(REJECTED, code, response.error_message)
                last_error = error_name(code)
                wait_s = throttle / 1000.0
            retries += 1
            wait_s = max(wait_s, _backoff_s(options, retries))
            if time.monotonic() + wait_s >= deadline:
                log.warning("config push gave up after %d attempt(s): %s", attempts, last_error)
                return done(FAILED, None, last_error)
            log.debug("config push round %d failed (%s); retrying in %.2f s", retries, last_error, wait_s)
            await asyncio.sleep(wait_s)
    finally:
        if session is not None:
            await session.close()


async def _hold(hold: Callable[[], Awaitable[None]] | None) -> None:
    if hold is not None:
        await hold()

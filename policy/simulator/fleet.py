"""A reproducible fleet of simulated Kafka clients, and its pushes and events without the network.

``generate_fleet`` draws clients (family, release, kind, 25-55 config entries,
is_default flags) from a seeded RNG, then makes a configurable share of them
misconfigured (acks=0 with idempotence, heartbeat >= session timeout, typo keys
such as ``linger.msec``, ...) or leaking (a password in ``sasl.jaas.config``
typed STRING, an AWS access key in a custom key, a JWT as client id), plus small
shares that push an oversize request or report an invalid software name.
Leaking clients that put secrets in KIP-sensitive keys are modelled as
non-compliant libraries that skip the KIP's client-side filter, so the gateway's
redaction is what protects the stream.

``fleet_pushes`` and ``fleet_events`` give what the gateway would hand the
policy, and what the policy would publish, for benchmarks and tests that need
the workload without sockets.
"""

from __future__ import annotations

import random
import string
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from configwatch.contract import CONNECTION_CLOSED, CONNECTION_OPENED, is_valid_software
from configwatch.records import Event
from configwatch.secrets import SecretStr
from policy.api import ClientConfig, ClientConfigData, RequestContext
from policy.client import PushOptions, select_configs
from policy.redaction import redact
from policy.session import ClientIdentity, PushSession
from policy.simulator.catalog import FAMILIES, Family, KeySpec, Release
from udfs.sensitivity import kip_client_reason, mask_identity, sensitive_reason

__all__ = ["FleetSpec", "SimulatedClient", "fleet_events", "fleet_pushes", "generate_fleet"]

PUSH, OVERSIZE, INVALID_SOFTWARE, NO_PUSH = "push", "oversize", "invalid_software", "no_push"


@dataclass(frozen=True, slots=True)
class FleetSpec:
    """How many clients, the seed, and the shares of unusual ones (each 0..1)."""

    clients: int = 100
    seed: int = 7
    misconfigured_share: float = 0.2
    leaking_share: float = 0.1
    oversize_share: float = 0.01
    invalid_software_share: float = 0.01
    hold_ms_min: int = 0
    hold_ms_max: int = 200


@dataclass(frozen=True, slots=True)
class SimulatedClient:
    """One client instance: who it is, its configuration, and what it is expected to trigger."""

    index: int
    family: str
    kind: str
    identity: ClientIdentity
    configs: tuple[ClientConfig, ...]
    pushes: bool
    compliant: bool
    misconfigurations: tuple[str, ...]
    leaks: tuple[str, ...]
    expect: str
    hold_ms: int
    leaked_keys: tuple[str, ...] = ()

    def options(self, **overrides: object) -> PushOptions:
        """The client's push options: non-compliant clients skip the KIP's sensitive-key filter."""
        return replace(PushOptions(filter_sensitive=self.compliant), **overrides)  # type: ignore[arg-type]

    def selected(self) -> list[ClientConfig]:
        """The entries this client puts on the wire."""
        return select_configs(self.configs, self.options())[0]

    def redactable_values(self) -> tuple[str, ...]:
        """Planted secrets this client sends in sensitive entries: the gateway must never publish them."""
        return tuple(c.value for c in self.selected()
                     if c.key in self.leaked_keys and c.value and sensitive_reason(c.key, c.type, c.value))


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _pick_family(rng: random.Random) -> Family:
    return rng.choices(FAMILIES, weights=[f.weight for f in FAMILIES])[0]


def _pick_release(rng: random.Random, family: Family, *, pushing: bool | None = None) -> Release:
    releases = [r for r in family.releases if pushing is None or r.pushes == pushing] or list(family.releases)
    return rng.choices(releases, weights=[r.weight for r in releases])[0]


def _base_configs(rng: random.Random, keys: Sequence[KeySpec]) -> list[ClientConfig]:
    """25-55 entries a compliant client would send, plus some KIP-sensitive ones it would withhold."""
    plain = [i for i, k in enumerate(keys) if kip_client_reason(k.key, k.type) is None]
    sensitive = [i for i, k in enumerate(keys) if kip_client_reason(k.key, k.type) is not None]
    count = rng.randint(min(25, len(plain)), min(55, len(plain)))
    chosen = sorted(rng.sample(plain, count) + [i for i in sensitive if rng.random() < 0.3])
    out = []
    for i in chosen:
        spec = keys[i]
        if spec.overrides and rng.random() < 0.3:
            out.append(ClientConfig(spec.key, rng.choice(spec.overrides), spec.type, False))
        else:
            out.append(ClientConfig(spec.key, spec.default, spec.type, True))
    return out


def _set(configs: list[ClientConfig], key: str, value: str, type_: str) -> None:
    for i, c in enumerate(configs):
        if c.key == key:
            configs[i] = ClientConfig(key, value, c.type, False)
            return
    configs.append(ClientConfig(key, value, type_, False))


def _rename(configs: list[ClientConfig], key: str, typo: str, value: str, type_: str) -> None:
    configs[:] = [c for c in configs if c.key != key]
    configs.append(ClientConfig(typo, value, type_, False))


def _misconfigure(rng: random.Random, family: Family, kind: str, configs: list[ClientConfig]) -> str:
    style = family.style
    if style == "python":
        choice = rng.choice(["acks0_idempotent", "typo_linger"])
        if choice == "acks0_idempotent":
            _set(configs, "acks", "0", "STRING")
            _set(configs, "enable_idempotence", "true", "BOOLEAN")
        else:
            _rename(configs, "linger_ms", "linger_msec", "20", "STRING")
        return choice
    if style == "go-option":
        _set(configs, "RequiredAcks", "NoAck", "STRING")
        _set(configs, "DisableIdempotentWrite", "false", "BOOLEAN")
        return "acks0_idempotent"
    if style == "go-struct":
        if kind == "consumer":
            _set(configs, "Consumer.Group.Session.Timeout", "10s", "LONG")
            _set(configs, "Consumer.Group.Heartbeat.Interval", "15s", "LONG")
            return "heartbeat_ge_session"
        _set(configs, "Producer.RequiredAcks", "0", "SHORT")
        _set(configs, "Producer.Idempotent", "true", "BOOLEAN")
        return "acks0_idempotent"
    if kind == "admin":
        _rename(configs, "default.api.timeout.ms", "default.api.timeout", "120000", "STRING")
        return "typo_api_timeout"
    if kind in ("consumer", "streams"):
        choice = rng.choice(["heartbeat_ge_session", "typo_session_timeout", "typo_auto_commit"])
        if choice == "heartbeat_ge_session":
            _set(configs, "session.timeout.ms", "10000", "INT")
            _set(configs, "heartbeat.interval.ms", "15000", "INT")
        elif choice == "typo_session_timeout":
            _rename(configs, "session.timeout.ms", "session.timeout.msec", "30000", "STRING")
        else:
            _rename(configs, "enable.auto.commit", "enable.auto.comit", "false", "STRING")
        return choice
    choice = rng.choice(["acks0_idempotent", "inflight_idempotent", "typo_linger", "request_gt_delivery"])
    if choice == "acks0_idempotent":
        _set(configs, "acks", "0", "STRING" if family.family != "librdkafka" else "INT")
        _set(configs, "enable.idempotence", "true", "BOOLEAN")
    elif choice == "inflight_idempotent":
        _set(configs, "enable.idempotence", "true", "BOOLEAN")
        _set(configs, "max.in.flight.requests.per.connection", "10", "INT")
    elif choice == "typo_linger":
        _rename(configs, "linger.ms", "linger.msec", "20", "STRING")
    else:
        _set(configs, "delivery.timeout.ms", "120000", "INT")
        _set(configs, "request.timeout.ms", "180000", "INT")
    return choice


def _token(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


_B64URL = string.ascii_letters + string.digits + "-_"


def _leak(rng: random.Random, family: Family, configs: list[ClientConfig]) -> tuple[str, bool, str]:
    """Add one leak; returns its kind, whether the client must skip the KIP filter to send it, and its key."""
    choice = rng.choice(["password_in_sensitive_key", "aws_key_in_custom_key", "jwt_in_client_id"])
    if choice == "password_in_sensitive_key":
        password = _token(rng, string.ascii_letters + string.digits + "!#%", 20)
        user = f"svc-{_token(rng, string.ascii_lowercase, 6)}"
        key, type_, value = {
            "python": ("sasl_plain_password", "PASSWORD", password),
            "go-option": ("SASLPlainPassword", "PASSWORD", password),
            "go-struct": ("Net.SASL.Password", "PASSWORD", password),
        }.get(family.style, ("sasl.jaas.config", "STRING",
                             "org.apache.kafka.common.security.plain.PlainLoginModule required "
                             f'username="{user}" password="{password}";'))
        if family.family == "librdkafka":
            key, value = "sasl.password", password
        _set(configs, key, value, type_)
        return choice, True, key
    if choice == "aws_key_in_custom_key":
        _set(configs, "app.s3.access.key.id", "AKIA" + _token(rng, string.ascii_uppercase + string.digits, 16),
             "STRING")
        return choice, False, "app.s3.access.key.id"
    header = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    jwt = f"{header}.eyJ{_token(rng, _B64URL, 40)}.{_token(rng, _B64URL, 43)}"
    key = {"python": "client_id", "go-option": "ClientID", "go-struct": "ClientID"}.get(family.style, "client.id")
    _set(configs, key, jwt, "STRING")
    return choice, False, key


def _oversize(rng: random.Random, family: Family, configs: list[ClientConfig]) -> None:
    hosts = ",".join(f"kafka-broker-{i:04d}.{_token(rng, string.ascii_lowercase, 8)}.internal:9092"
                     for i in range(300))
    key = {"python": "bootstrap_servers", "go-option": "SeedBrokers", "go-struct": "Addrs"}.get(
        family.style, "bootstrap.servers")
    _set(configs, key, hosts, "LIST")


def generate_fleet(spec: FleetSpec) -> list[SimulatedClient]:
    """``spec.clients`` clients, the same for the same spec (seeded)."""
    rng = random.Random(spec.seed)
    fleet = []
    for i in range(spec.clients):
        family = _pick_family(rng)
        roll = rng.random()
        expect = (OVERSIZE if roll < spec.oversize_share else
                  INVALID_SOFTWARE if roll < spec.oversize_share + spec.invalid_software_share else PUSH)
        release = _pick_release(rng, family, pushing=True if expect != PUSH else None)
        kind = rng.choice(sorted(family.kinds))
        configs = _base_configs(rng, family.kinds[kind])
        misconfigs: list[str] = []
        leaks: list[str] = []
        leaked_keys: list[str] = []
        compliant = True
        if rng.random() < spec.misconfigured_share:
            misconfigs.append(_misconfigure(rng, family, kind, configs))
        if rng.random() < spec.leaking_share:
            leak, skips_filter, leaked_key = _leak(rng, family, configs)
            leaks.append(leak)
            leaked_keys.append(leaked_key)
            compliant = not skips_filter
        name, version = family.software_name, release.version
        if expect == OVERSIZE:
            _oversize(rng, family, configs)
        elif expect == INVALID_SOFTWARE:
            name = rng.choice(["acme kafka client", "my_client/2", "svc@prod"])
        if not release.pushes:
            expect = NO_PUSH
        client_id = next((c.value for c in configs if c.key.lower().replace("_", ".") in ("client.id", "clientid")),
                         None) or f"{family.family}-{kind}-{i}"
        identity = ClientIdentity(software_name=name, software_version=version, client_id=client_id,
                                  client_instance_id=_uuid(rng), api_versions_version=release.api_versions)
        hold = rng.randint(spec.hold_ms_min, max(spec.hold_ms_min, spec.hold_ms_max))
        fleet.append(SimulatedClient(i, family.family, kind, identity, tuple(configs), release.pushes, compliant,
                                     tuple(misconfigs), tuple(leaks), expect, hold, tuple(leaked_keys)))
    return fleet


def _context(client: SimulatedClient, broker_id: int) -> RequestContext:
    port = 40000 + client.index % 20000
    ident = client.identity
    v3 = ident.api_versions_version >= 3
    return RequestContext(
        connection_id=f"127.0.0.1:9192-10.0.{client.index // 250 % 256}.{client.index % 250}:{port}-{client.index}",
        client_address=f"10.0.{client.index // 250 % 256}.{client.index % 250}", client_id=ident.client_id,
        client_instance_id=ident.client_instance_id if ident.api_versions_version >= 5 else None,
        client_software_name=ident.software_name if v3 else None,
        client_software_version=ident.software_version if v3 else None, broker_id=broker_id)


def _accepted_by_gateway(client: SimulatedClient) -> bool:
    ident = client.identity
    if ident.api_versions_version < 3:
        return True
    return bool(ident.software_name and ident.software_version and is_valid_software(ident.software_name)
                and is_valid_software(ident.software_version))


def fleet_pushes(clients: Sequence[SimulatedClient], *, start_ms: int = 1_790_000_000_000, broker_id: int = 0,
                 max_bytes: int | None = 10240, check_software: bool = True
                 ) -> Iterator[tuple[RequestContext, ClientConfigData]]:
    """What the gateway would pass to ``process`` for each pushing client.

    Clients the gateway would refuse (request over ``max_bytes``, None: no limit;
    an invalid software name when ``check_software``) are left out, as are
    clients with nothing to send.
    """
    for client in clients:
        if not client.pushes or (check_software and not _accepted_by_gateway(client)):
            continue
        entries = client.selected()
        if not entries:
            continue
        size = PushSession.request_size(entries, client.identity.client_id)
        if max_bytes is not None and size > max_bytes:
            continue
        yield _context(client, broker_id), ClientConfigData(tuple(entries), start_ms + client.index, size)


def fleet_events(clients: Sequence[SimulatedClient], fingerprint_key: SecretStr, *,
                 start_ms: int = 1_790_000_000_000, broker_id: int = 0, redact_sensitive: bool = True
                 ) -> Iterator[Event]:
    """The contract events gateway + KafkaTopicPolicy would publish: open, push (if any), close per client."""
    pushes = {ctx.connection_id: (ctx, data) for ctx, data in fleet_pushes(clients, start_ms=start_ms,
                                                                           broker_id=broker_id)}
    for client in clients:
        if not _accepted_by_gateway(client):
            continue
        ctx = _context(client, broker_id)
        ts = start_ms + client.index
        # The publisher masks identity fields holding a secret in every event it sends.
        yield mask_identity(Event(event=CONNECTION_OPENED, timestamp_ms=ts, **ctx.event_fields()), fingerprint_key)
        if ctx.connection_id in pushes:
            _, data = pushes[ctx.connection_id]
            pushed = redact(ctx, data, fingerprint_key, enabled=redact_sensitive).event
            yield mask_identity(replace(pushed, timestamp_ms=ts), fingerprint_key)
        closed = Event(event=CONNECTION_CLOSED, timestamp_ms=ts + client.hold_ms, **ctx.event_fields())
        yield mask_identity(closed, fingerprint_key)

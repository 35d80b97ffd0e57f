"""One typed settings object, read from CLI flags, then ``CONFIGWATCH_*`` variables, then defaults.

Each field declares its help text and the subcommands that take it as a flag;
every field can also be set from the environment as ``CONFIGWATCH_<NAME>``.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import os
import re
import secrets as _stdlib_secrets
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from configwatch.contract import (
    ALERTS_TOPIC,
    GAUGES_TOPIC,
    INPUT_TOPIC,
    QUARANTINE_TOPIC,
    SECURITY_PROTOCOLS,
    USAGE_TOPIC,
)
from configwatch.errors import SetupError, UsageError
from configwatch.hostports import check_host, host_ports
from configwatch.paths import cache_dir, default_checkpoint_root
from configwatch.secrets import SecretStr

__all__ = ["DRIVER_MEMORY", "ENV_PREFIX", "Settings", "add_arguments", "secret_flags", "setting"]

ENV_PREFIX = "CONFIGWATCH_"
# The Spark driver's heap maximum (under local[N] its JVM runs the tasks too; the decode, rules and state work
# runs in the Python workers beside it). It bounds the process's peak memory (docs/benchmarks.md, figure 5).
DRIVER_MEMORY = "1g"
_JVM_SIZE = re.compile(r"[1-9][0-9]*[kmgt]", re.IGNORECASE)  # what the JVM's -Xmx takes, which Spark passes it as
_TOPIC_NAME = re.compile(r"[A-Za-z0-9._-]{1,249}")  # Kafka's own rule (org.apache.kafka.common.internals.Topic)


def setting(default: Any, help: str, *, commands: Sequence[str] = (), choices: Sequence[str] = (),
            metavar: str | None = None) -> Any:
    """Declare a settings field: its default, help line, and the subcommands exposing it."""
    return field(default=default, metadata={
        "help": help, "commands": tuple(commands), "choices": tuple(choices), "metavar": metavar,
    })


def _default_key_file() -> Path:
    return cache_dir() / "fingerprint.key"


@dataclass(frozen=True)
class Settings:
    """Every knob of configwatch. ``None`` means "decide at run time" (see each help)."""

    bootstrap_servers: str | None = setting(
        None, "Kafka bootstrap servers (host:port,...); default: the local broker (dashboard, report: one "
        "already running; the others start it if none runs)",
        commands=("run", "demo", "gateway", "simulate", "dashboard", "report"), metavar="HOSTS")
    input_topic: str = setting(INPUT_TOPIC, "topic holding the contract's input events",
                               commands=("run", "demo", "gateway", "simulate", "dashboard"), metavar="TOPIC")
    kafka_home: Path = setting(None, "directory of the local broker's config, data and log "
                               "(default: <cache>/kafka/local)", commands=("kafka", "run", "demo"),
                               metavar="DIR")
    kafka_port: int | None = setting(None, "port of the local broker (default: a free port)",
                                     commands=("kafka",), metavar="PORT")
    checkpoint_dir: Path = setting(None, "root of the streaming checkpoints (default: the source tree's checkpoints/; "
                                   "set it in a deployment)",
                                   commands=("run",), metavar="DIR")  # demo: a fresh temporary one per run
    checkpoint_uri: str | None = setting(None, "checkpoint root as a Hadoop URI for a cluster (hdfs://..., "
                                         "s3a://...); overrides --checkpoint-dir", commands=("run",), metavar="URI")
    spark_master: str | None = setting(None, "Spark master URL (default: spark-submit's, else local[2])",
                                       commands=("run", "demo"), metavar="URL")
    driver_memory: str = setting(DRIVER_MEMORY, "Spark driver memory (its JVM heap maximum)",
                                 commands=("run", "demo"), metavar="SIZE")
    fingerprint_key: SecretStr = setting(
        None, "per-deployment HMAC key for fingerprints (default: a random key kept in "
        "<cache>/fingerprint.key); prefer the environment variable", commands=(), metavar="KEY")
    gauges_topic: str = setting(GAUGES_TOPIC, "compacted topic of per-version connection gauges",
                                commands=("dashboard", "run", "demo"), metavar="TOPIC")
    alerts_topic: str = setting(ALERTS_TOPIC, "topic of findings (alerts)",
                                commands=("dashboard", "run", "demo", "report"), metavar="TOPIC")
    usage_topic: str = setting(USAGE_TOPIC, "compacted topic of request versions per client software name and "
                               "version (gateway proxy mode)", commands=("dashboard", "run", "demo", "report"),
                               metavar="TOPIC")
    # -- the streaming job (configwatch run); see docs/operations.md
    quarantine_topic: str = setting(QUARANTINE_TOPIC, "topic of quarantined (invalid) input records",
                                    commands=("run", "demo"), metavar="TOPIC")
    source: str = setting("kafka", "where records come from: kafka (the input topic) or files:DIR (replay: "
                          "JSON Lines files appearing in DIR)", commands=("run",), metavar="SOURCE")
    sink: str = setting("kafka", "where the job's outputs go, a target of sinks/registry.py: kafka (their topics, "
                        "created if absent) or files:DIR (JSON Lines under DIR/<kind>)",
                        commands=("run",), metavar="SINK")
    trigger: str = setting("continuous", "continuous: micro-batches until stopped (SIGINT/SIGTERM); "
                           "available-now: process what exists, then exit", commands=("run",),
                           choices=("continuous", "available-now"))
    trigger_interval: str = setting("1 second", "time between micro-batch starts when continuous",
                                    commands=("run",), metavar="INTERVAL")
    starting_offsets: str = setting("earliest", "where a query without a checkpoint starts in the input topic",
                                    commands=("run",), choices=("earliest", "latest"))
    max_offsets_per_trigger: int | None = setting(120_000, "most Kafka records per micro-batch: a backlog is "
                                                  "worked off in bounded batches", commands=("run",), metavar="N")
    max_files_per_trigger: int | None = setting(None, "most replay files per micro-batch (default: all available)",
                                                commands=("run",), metavar="N")
    expectations: bool = setting(True, "check every decoded batch with the Great Expectations suite",
                                 commands=("run",))
    outputs: str | None = setting(None, "comma-separated outputs to compute and write (default: all of "
                                  "alerts, quarantine, gauges, usage)", commands=("run",), metavar="NAMES")
    connect_timeout_s: float = setting(15.0, "how long to wait for Kafka to answer before giving up",
                                       commands=("run", "demo", "gateway", "simulate", "dashboard", "report"),
                                       metavar="SECONDS")
    webhook_url: SecretStr | None = setting(
        None, "also POST every finding to this Alertmanager-compatible webhook (best effort, de-duplicated by "
        "alert_id, rate limited; the Kafka/files copy never depends on it); prefer the environment variable",
        commands=("run", "demo"), metavar="URL")
    connection_ttl: float | None = setting(
        None, "lease for the connection gauges: a connection with no event for this many seconds is dropped "
        "(logged and counted); for edges that may die without sending closes (default: no lease)",
        commands=("run",), metavar="SECONDS")  # demo: no lease (its first run is available-now)
    dashboard_host: str = setting("127.0.0.1", "address the dashboard binds (also --host); anything but "
                                  "loopback needs a dashboard token", commands=("dashboard",), metavar="ADDR")
    dashboard_port: int = setting(8765, "dashboard HTTP port, 0 for a free one (also --port)",
                                  commands=("dashboard",), metavar="PORT")
    dashboard_token: SecretStr | None = setting(
        None, "bearer token the dashboard requires (required off loopback); prefer the environment variable",
        commands=("dashboard",), metavar="TOKEN")
    dashboard_max_clients: int = setting(10_000, "client instances whose latest config the dashboard keeps (LRU)",
                                         commands=("dashboard",), metavar="N")
    dashboard_max_client_bytes: int = setting(64 * 1024 * 1024, "memory the kept client configs may take, "
                                              "estimated (LRU)", commands=("dashboard",), metavar="BYTES")
    dashboard_max_alerts: int = setting(2_000, "recent alerts the dashboard keeps for its feed",
                                        commands=("dashboard",), metavar="N")
    # -- the ingest edge (policy/): PushConfig gateway, ClientConfigPolicy, simulator; see docs/ingest.md
    gateway_host: str = setting("127.0.0.1", "address the PushConfig gateway listens on (simulate: connects to "
                                "with --connect)", commands=("gateway", "simulate"), metavar="HOST")
    gateway_port: int = setting(9192, "port of the PushConfig gateway (0: a free port; simulate: connects to "
                                "with --connect, else runs its own gateway on a free port)",
                                commands=("gateway", "simulate"), metavar="PORT")
    gateway_metrics_port: int = setting(9193, "port of the gateway's Prometheus /metrics (0: a free port, "
                                        "-1: off)", commands=("gateway",), metavar="PORT")
    gateway_broker_id: int = setting(0, "broker_id the gateway writes on its events",
                                     commands=("gateway", "simulate"), metavar="ID")
    client_config_policy_class_name: str = setting(
        "policy.kafka_policy.KafkaTopicPolicy", "client.config.policy.class.name: dotted Python path of the "
        "ClientConfigPolicy; 'none' disables PushConfig", commands=("gateway", "simulate"), metavar="CLASS")
    client_config_max_bytes: int = setting(10240, "client.config.max.bytes: larger PushConfig requests get "
                                           "CONFIG_TOO_LARGE", commands=("gateway", "simulate"), metavar="BYTES")
    redact_sensitive: bool = setting(True, "redact entries sensitive under the KIP rules before publishing "
                                     "(value null + fingerprint)", commands=("gateway", "simulate"))
    policy_buffer_size: int = setting(10000, "events the publisher buffers before it drops (and counts) them",
                                      commands=("gateway", "simulate"), metavar="N")
    policy_buffer_bytes: int = setting(32 * 1024 * 1024, "bytes of serialized events the publisher buffers "
                                       "before it drops (and counts) them", commands=("gateway", "simulate"),
                                       metavar="BYTES")
    gateway_max_frame_bytes: int = setting(1048576, "largest request frame the gateway reads; larger closes "
                                           "the connection", commands=("gateway", "simulate"), metavar="BYTES")
    gateway_max_queued_request_bytes: int = setting(
        64 * 1024 * 1024, "bytes of request frames over 64 KiB the gateway reads at once, all connections together "
        "(queued.max.request.bytes); more wait", commands=("gateway", "simulate"), metavar="BYTES")
    gateway_max_connections: int = setting(10000, "open connections the gateway accepts; more are closed at "
                                           "once", commands=("gateway", "simulate"), metavar="N")
    gateway_idle_timeout_s: float = setting(600.0, "close a connection idle this long (connections.max.idle.ms)",
                                            commands=("gateway", "simulate"), metavar="SECONDS")
    gateway_frame_timeout_s: float = setting(30.0, "close a connection whose started frame is not complete "
                                             "within this", commands=("gateway", "simulate"), metavar="SECONDS")
    gateway_socket_send_buffer_bytes: int = setting(
        102400, "SO_SNDBUF of each client connection (socket.send.buffer.bytes); -1 or 0: the OS default",
        commands=("gateway", "simulate"), metavar="BYTES")
    gateway_socket_receive_buffer_bytes: int = setting(
        102400, "SO_RCVBUF of each client connection (socket.receive.buffer.bytes); -1 or 0: the OS default",
        commands=("gateway", "simulate"), metavar="BYTES")
    gateway_push_rate_limit: float = setting(0.0, "PushConfig requests per second accepted per client (0: "
                                             "unlimited); beyond it THROTTLING_QUOTA_EXCEEDED with ThrottleTimeMs",
                                             commands=("gateway", "simulate"), metavar="RATE")
    upstream: str | None = setting(None, "proxy mode: bootstrap servers of the Kafka cluster the gateway stands in "
                                   "front of (host:port,...); every request but PushConfig goes there",
                                   commands=("gateway",), metavar="HOST:PORT,...")
    gateway_security_protocol: str = setting("PLAINTEXT", "what clients speak to the gateway (every listener of it); "
                                             "SASL_* passes authentication through to the upstream cluster",
                                             commands=("gateway",), choices=SECURITY_PROTOCOLS)
    gateway_ssl_certfile: Path | None = setting(None, "SSL/SASL_SSL: the gateway's certificate chain (PEM)",
                                                commands=("gateway",), metavar="FILE")
    gateway_ssl_keyfile: Path | None = setting(None, "SSL/SASL_SSL: the private key of --gateway-ssl-certfile "
                                               "(PEM, unencrypted)", commands=("gateway",), metavar="FILE")
    gateway_ssl_cafile: Path | None = setting(None, "SSL/SASL_SSL: CA certificates (PEM); given, every client must "
                                              "present a certificate they sign (mutual TLS)",
                                              commands=("gateway",), metavar="FILE")
    gateway_tls_offered_at: str | None = setting(None, "PLAINTEXT/SASL_PLAINTEXT gateway: where clients can reach "
                                                 "the same cluster over TLS instead (a TLS gateway or listener); "
                                                 "named on connection events, so clients still on unauthenticated "
                                                 "plaintext are flagged (posture-plaintext-tls-offered)",
                                                 commands=("gateway",), metavar="HOST:PORT")
    gateway_ssl_enabled_protocols: str = setting("TLSv1.2,TLSv1.3", "SSL/SASL_SSL: the TLS versions clients may "
                                                 "negotiate (ssl.enabled.protocols); adding TLSv1.1 or TLSv1 lets "
                                                 "such clients connect so their posture is flagged",
                                                 commands=("gateway",), metavar="VERSIONS")
    gateway_advertised_host: str | None = setting(None, "proxy mode: the host written into Metadata, "
                                                  "FindCoordinator and DescribeCluster answers (default: "
                                                  "--gateway-host)", commands=("gateway",), metavar="HOST")
    upstream_security_protocol: str = setting("PLAINTEXT", "proxy mode: the upstream cluster's security.protocol; "
                                              "SASL_* needs a SASL_* --gateway-security-protocol",
                                              commands=("gateway",), choices=SECURITY_PROTOCOLS)
    upstream_ssl_cafile: Path | None = setting(None, "proxy mode, SSL/SASL_SSL upstream: CA certificates (PEM) the "
                                               "brokers' certificates must chain to (default: the system's)",
                                               commands=("gateway",), metavar="FILE")
    upstream_ssl_certfile: Path | None = setting(None, "proxy mode, SSL/SASL_SSL upstream: the gateway's client "
                                                 "certificate (PEM), for brokers that require one",
                                                 commands=("gateway",), metavar="FILE")
    upstream_ssl_keyfile: Path | None = setting(None, "proxy mode: the private key of --upstream-ssl-certfile (PEM)",
                                                commands=("gateway",), metavar="FILE")
    upstream_ssl_check_hostname: bool = setting(True, "proxy mode: check that each broker's certificate names "
                                                "the host connected to (turning it off is warned about at start)",
                                                commands=("gateway",))
    gateway_broker_port_base: int = setting(9200, "proxy mode: the gateway listens for broker N on this port + N "
                                            "(0: a free port per broker)", commands=("gateway",), metavar="PORT")
    gateway_usage_interval_s: float = setting(300.0, "proxy mode: how often a connection's new request versions "
                                              "are published (connection_usage), so clients that never disconnect "
                                              "show in upgrade readiness; 0: only when it closes",
                                              commands=("gateway",), metavar="SECONDS")
    gateway_broker_ports: str | None = setting(None, "proxy mode: node ids to gateway ports, NODES=PORT,... "
                                               "(NODES an id or a range lo-hi, numbered up from PORT), for large or "
                                               "sparse ids, e.g. 1001-1099=9201", commands=("gateway",),
                                               metavar="NODES=PORT,...")
    log_level: str = setting("INFO", "log level", choices=("DEBUG", "INFO", "WARNING", "ERROR"))

    def __post_init__(self) -> None:
        # Resolve run-time defaults once, so every reader sees concrete values.
        if self.kafka_home is None:
            object.__setattr__(self, "kafka_home", cache_dir() / "kafka" / "local")
        if self.checkpoint_dir is None:
            object.__setattr__(self, "checkpoint_dir", default_checkpoint_root())
        if self.fingerprint_key is None:
            object.__setattr__(self, "fingerprint_key", _load_or_create_key(_default_key_file()))
        self._check_values()
        self._check_names()

    def _check_values(self) -> None:
        """Values no command can use fail before anything starts, naming their flag (or variable: ``load``)."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if _types()[f.name] is float and value is not None and not math.isfinite(value):
                raise _SettingError(f.name, f"must be a finite number, got {value}")
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            secret = isinstance(value, SecretStr)
            if value is None:
                continue
            if (secret or f.name.endswith("_host")) and not (value.get_secret_value() if secret else value).strip():
                raise _SettingError(f.name, "empty; leave it unset for the default")
            if f.name.endswith("_host"):
                try:
                    check_host(value)
                except ValueError as exc:
                    raise _SettingError(f.name, str(exc)) from None
        if self.bootstrap_servers is not None:
            try:
                host_ports(self.bootstrap_servers)
            except ValueError as exc:
                raise _SettingError("bootstrap_servers", str(exc)) from None
        for name in ("connect_timeout_s", "connection_ttl", "max_offsets_per_trigger", "max_files_per_trigger"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise _SettingError(name, f"must be a positive number, got {value:g}")
        if not _JVM_SIZE.fullmatch(self.driver_memory):
            raise _SettingError("driver_memory", f"{self.driver_memory!r} is not a JVM memory size (a whole number "
                                "and k, m, g or t: 1536m, 2g)")
        seen: dict[str, str] = {}
        for name in ("input_topic", "alerts_topic", "quarantine_topic", "gauges_topic", "usage_topic"):
            topic = getattr(self, name)
            if topic in seen:
                raise _SettingError(name, f"{topic!r} is also {_flag(seen[topic])}; each needs a topic of its own")
            seen[topic] = name

    def _check_names(self) -> None:
        """Topic names Kafka would refuse, and a webhook that is no http(s) URL, fail before anything starts."""
        for f in dataclasses.fields(self):
            name = getattr(self, f.name)
            if f.name.endswith("_topic") and (not _TOPIC_NAME.fullmatch(name) or name in (".", "..")):
                raise _SettingError(f.name, f"{name!r} is not a Kafka topic name (letters, digits, '.', '_' and '-', "
                                    "at most 249)")
        if self.webhook_url is not None:
            text = self.webhook_url.get_secret_value()
            try:
                url = urlsplit(text)
                usable = (url.scheme in ("http", "https") and bool(url.hostname) and (url.port or 1) > 0
                          and text.isascii() and not any(c.isspace() or not c.isprintable() for c in text))
            except ValueError:  # an unclosed IPv6 bracket, a port that is no number
                usable = False
            if not usable:
                raise _SettingError("webhook_url", "not an http:// or https:// URL with a host, in printable ASCII "
                                    "without spaces (the value is not shown: it may hold a token)")

    @classmethod
    def load(cls, args: argparse.Namespace | None = None,
             environ: Mapping[str, str] | None = None) -> Settings:
        """Build settings: a flag given on the command line wins over the environment."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for f in dataclasses.fields(cls):
            raw = getattr(args, f.name, None) if args is not None else None
            source = _flag(f.name)
            if raw is None:
                raw = environ.get(ENV_PREFIX + f.name.upper())
                source = ENV_PREFIX + f.name.upper()
            if raw is None:
                continue
            values[f.name] = _convert(raw, _types()[f.name], source, f.metadata.get("choices", ()))
            sources[f.name] = source
        try:
            return cls(**values)
        except _SettingError as exc:  # name where the value came from: a flag or a variable
            raise UsageError(f"{sources.get(exc.name, _flag(exc.name))}: {exc.problem}") from None


class _SettingError(UsageError):
    """A setting's value cannot work: ``--flag: problem`` (``Settings.load`` names a variable it came from)."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{_flag(name)}: {problem}")
        self.name = name
        self.problem = problem


def _flag(name: str) -> str:
    return f"--{name.replace('_', '-')}"


def _load_or_create_key(path: Path) -> SecretStr:
    try:
        if path.exists():
            return SecretStr(path.read_text().strip())
        path.parent.mkdir(parents=True, exist_ok=True)
        key = _stdlib_secrets.token_hex(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(key + "\n")
    except OSError as exc:
        raise SetupError(f"cannot read or create the fingerprint key {path} ({exc.strerror}); set "
                         "CONFIGWATCH_CACHE_DIR to a writable directory, or CONFIGWATCH_FINGERPRINT_KEY") from None
    return SecretStr(key)


@functools.cache
def _types() -> dict[str, Any]:
    """Each setting's type, ``None`` taken off (``int | None`` is ``int``)."""
    return {name: _base_type(hint) for name, hint in typing.get_type_hints(Settings).items()}


def _base_type(hint: Any) -> Any:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return args[0]
    return hint


def _convert(raw: Any, target: Any, source: str, choices: Sequence[str]) -> Any:
    if not isinstance(raw, str):
        return raw  # argparse already converted it
    try:
        if target is bool:
            lowered = raw.strip().lower()
            if lowered not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                raise ValueError(raw)
            value: Any = lowered in ("1", "true", "yes", "on")
        elif target is int:
            value = int(raw)
        elif target is float:
            value = float(raw)
        elif target is Path:
            if not raw.strip():
                raise UsageError(f"{source}: empty; give a directory (or leave it out for the default)")
            value = Path(raw).expanduser()
        elif target is SecretStr:
            value = SecretStr(raw)
        else:
            value = raw
    except ValueError:
        raise UsageError(f"{source}: cannot read {raw!r} as {target.__name__}") from None
    if choices and value not in choices:
        raise UsageError(f"{source}: {value!r} is not one of {', '.join(choices)}")
    return value


def add_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """Add the flags of every setting that ``command`` exposes (defaults stay None)."""
    for f in dataclasses.fields(Settings):
        meta = f.metadata
        if command not in meta.get("commands", ()):
            continue
        target = _types()[f.name]
        kwargs: dict[str, Any] = {"default": None, "help": meta["help"], "dest": f.name}
        if meta.get("metavar"):
            kwargs["metavar"] = meta["metavar"]
        if target is int:
            kwargs["type"] = int
        elif target is float:
            kwargs["type"] = float
        if meta.get("choices"):
            kwargs["choices"] = meta["choices"]
        if target is bool:
            kwargs.pop("metavar", None)
            kwargs["action"] = argparse.BooleanOptionalAction
        parser.add_argument(f"--{f.name.replace('_', '-')}", **kwargs)


def secret_flags() -> frozenset[str]:
    """The flag of every secret setting (a ``SecretStr``), whichever commands expose it."""
    return frozenset(_flag(name) for name, target in _types().items() if target is SecretStr)

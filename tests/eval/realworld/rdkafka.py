"""The librdkafka part of the real-world set: configurations applications give confluent-kafka clients.

librdkafka prints no configuration block, so each file under ``rdkafka/`` holds the literal
configuration an application's code builds (``Producer({...})`` in Python, ``kafka.ConfigMap{...}``
in Go), with its source and the binding version the same commit pins. ``to_push`` turns it into
the push a KIP client of that version would send: every property of the role's key set at its
default (``udfs/rules/data/librdkafka-*.json``, read from that release's CONFIGURATION.md), the
application's keys under the property they set (``linger.ms`` is ``queue.buffering.max.ms``),
``is_default`` false for every key the application set (librdkafka tracks which properties were
set), and what the KIP's client withholds left out. A value the code computes at run time
(``"<runtime: os.environ['BROKERS']>"``) is pushed set but without a value: the rules cannot
judge it. Binding-only keys (callbacks, Go's ``go.*`` channel switches, the serializers of
confluent-kafka-python's SerializingProducer) never reach librdkafka and are not pushed. A key
the version does not know (``rejected``) fails the client's creation: it never pushes, and the
scorer sets it apart.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tests.eval.realworld import Label, Push
from udfs.rules.keysets import configdef, key_set_file, profile
from udfs.sensitivity import kip_client_reason

__all__ = ["CONFIGS", "RdkafkaConfig", "load", "rejected", "software_version", "to_push"]

CONFIGS: Final = Path(__file__).resolve().parent / "rdkafka"
RUNTIME: Final = "<runtime:"  # a value computed when the application runs
CALLABLE: Final = "<callable>"
NESTED_TOPIC_CONFIG: Final = "default.topic.config"  # older confluent-kafka-python: topic properties as a dict
_EXACT: Final = re.compile(r"^\d+\.\d+\.\d+$")
_FIRST_KEY_SET: Final = (1, 4)  # librdkafka 1.4 is the first to send KIP-511's software name


@dataclass(frozen=True, slots=True)
class RdkafkaConfig:
    """One application's librdkafka configuration and where it comes from."""

    id: str
    source: str
    client: str  # producer, consumer, admin
    software_name: str  # confluent-kafka-python, confluent-kafka-go
    release: str  # the binding's version; its wheels and modules bundle the librdkafka of the same number
    config: tuple[tuple[str, Any], ...]  # (key, value as written), nested topic configs flattened
    labels: tuple[Label, ...]
    batch: str = ""
    binding_class: str = ""  # confluent-kafka-python's class, where the file names it (plain Producer: no serdes)

    @property
    def exact_release(self) -> bool:
        """One exact version, from librdkafka 1.4 on."""
        return bool(_EXACT.match(self.release)) and tuple(map(int, self.release.split(".")[:2])) >= _FIRST_KEY_SET


def _flat(config: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    out: list[tuple[str, Any]] = []
    for key, value in config.items():
        if key == NESTED_TOPIC_CONFIG and isinstance(value, dict):
            out.extend(value.items())
        else:
            out.append((key, value))
    return tuple(out)


def load(directory: Path = CONFIGS) -> list[RdkafkaConfig]:
    """Every configuration file, sorted by id."""
    out = []
    for path in sorted(directory.glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        labels = tuple(Label(tuple(lb["keys"]), lb["problem"]) for lb in raw["labels"])
        out.append(RdkafkaConfig(raw["id"], raw["source"], raw["client"], raw["software_name"],
                                 raw["software_version"], _flat(raw["config"]), labels, raw.get("batch", ""),
                                 raw.get("binding_class", "")))
    return out


def software_version(config: RdkafkaConfig) -> str:
    """The KIP-511 software version the binding reports (as the generated fleet's clients do)."""
    if config.software_name == "confluent-kafka-python":
        return f"{config.release}-rdkafka-{config.release}"
    return f"v{config.release}"


# confluent-kafka-python's SerializingProducer and DeserializingConsumer take these out of the configuration
# before librdkafka sees it; its plain classes hand them to librdkafka, which refuses them.
PYTHON_SERDES: Final = frozenset({"key.serializer", "value.serializer", "key.deserializer", "value.deserializer"})
PLAIN_CLASSES: Final = frozenset({"Producer", "Consumer", "AdminClient"})


def _binding_only(config: RdkafkaConfig, key: str, value: Any) -> bool:
    if config.software_name == "confluent-kafka-python" and key in PYTHON_SERDES:
        return config.binding_class not in PLAIN_CLASSES
    return value == CALLABLE or key.startswith("go.")


def _printed(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _key_set(config: RdkafkaConfig) -> str:
    file = key_set_file(config.software_name, software_version(config))
    assert file is not None, "librdkafka bindings always have a key set"
    return file


def rejected(config: RdkafkaConfig) -> tuple[str, ...]:
    """The keys this version of librdkafka does not know: it refuses them, so the client never starts or pushes."""
    known = set(profile(_key_set(config), config.client).family_keys.to_pylist())
    return tuple(k for k, v in config.config if not _binding_only(config, k, v) and k not in known)


def to_push(config: RdkafkaConfig) -> Push:
    """The push a KIP client of ``config.release`` sends for this configuration."""
    file = _key_set(config)
    prof, specs = profile(file, config.client), configdef(file, config.client)
    aliases = prof.aliases
    entries: dict[str, dict[str, Any]] = {}
    for key, spec in specs.items():
        if key not in aliases and spec.type != "UNKNOWN" and not key.startswith("client.software."):
            entries[key] = {"key": key, "value": spec.default, "type": spec.type, "is_default": True}
    client_id = "rdkafka"
    unknown = set()
    for written, value in config.config:
        if _binding_only(config, written, value):
            continue
        key = aliases.get(written, written)
        spec = specs.get(key)
        runtime = isinstance(value, str) and value.startswith(RUNTIME)
        if runtime:
            unknown.add(key)
        else:
            unknown.discard(key)
        entries[key] = {"key": key, "value": None if runtime else _printed(value),
                        "type": spec.type if spec else "STRING", "is_default": False}
        if key == "client.id" and not runtime:
            client_id = _printed(value)
    withheld = {k for k, e in entries.items() if kip_client_reason(k, e["type"]) is not None}  # set or default
    names = {k: prof.canonical(k) for k in aliases} | {k: prof.canonical(v) for k, v in prof.equivalents.items()}
    return Push(config, tuple(e for k, e in entries.items() if k not in withheld), frozenset(withheld),
                config.software_name, software_version(config), client_id, names, frozenset(unknown - withheld))

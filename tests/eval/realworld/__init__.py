"""The real-world evaluation set: configurations printed by real Java clients, as KIP pushes.

Each file under ``dumps/`` holds one ``ProducerConfig``/``ConsumerConfig``/``AdminClientConfig``/
``StreamsConfig values:`` block that someone published (``source``), the client release the
same source names, and hand labels: what a platform engineer would want flagged, by keys.
``pushes`` turns each block into the push a KIP client of that release would send: every
key typed with that release's own ConfigDef (``udfs/rules/data``, read from its jars),
``is_default`` when the printed value is the default of that release's own ConfigDef (a
Streams client's StreamsConfig), the printed forms undone
(``[a, b]`` is the list ``a,b``, ``class x.Y`` the class ``x.Y``, ``null`` no value), and
what the KIP's client withholds left out (``udfs.sensitivity.kip_client_reason``). A key
the client changed itself (the Java producer logs "Idempotence will be disabled because
acks is set to 1" and prints ``enable.idempotence = false``) is pushed as a default, as
the KIP's IsDefault means "not changed by the user"; the dump names such keys, with the
log line that shows it, under ``unset_by_user``.
``tests.eval.realworld.score`` runs the job's detection over them and scores it.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from udfs.rules.defaults import band, defaults_at
from udfs.rules.keysets import STREAMS, KeySpec, configdef, key_set_file, profile
from udfs.sensitivity import kip_client_reason

__all__ = ["DUMPS", "FAMILY", "Case", "Dump", "Label", "Push", "instance_id", "load", "to_push"]

DUMPS: Final = Path(__file__).resolve().parent / "dumps"
FAMILY: Final = "apache-kafka-java"  # every dump is the Java client's (KIP-511 name)
_RELEASE: Final = re.compile(r"^\d+(?:\.\d+){1,3}(?:-(?:ccs|ce))?$")


@dataclass(frozen=True, slots=True)
class Label:
    """One misconfiguration a platform engineer would want flagged, by the keys that show it."""

    keys: tuple[str, ...]
    problem: str


@dataclass(frozen=True, slots=True)
class Dump:
    """One published config block and where it comes from."""

    id: str
    source: str
    client: str  # producer, consumer, admin, streams
    release: str
    lines: tuple[tuple[str, str], ...]  # (key, value as printed)
    labels: tuple[Label, ...]
    unset_by_user: frozenset[str] = frozenset()  # keys the source shows the client changed itself
    batch: str = ""  # the batch it was gathered in: development, or a held-out batch scored once

    @property
    def exact_release(self) -> bool:
        """Whether the source names one release (``2.8.1``, ``7.9.0-ccs``), not a range."""
        return bool(_RELEASE.match(self.release))


class Case(Protocol):
    """What the scorer needs of a published configuration: its id and hand labels."""

    @property
    def id(self) -> str: ...

    @property
    def labels(self) -> tuple[Label, ...]: ...

    @property
    def release(self) -> str: ...

    @property
    def batch(self) -> str: ...

    @property
    def exact_release(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Push:
    """A published configuration as a KIP client's push: who sends it, entries sent, keys withheld as sensitive."""

    dump: Case
    entries: tuple[dict[str, Any], ...]  # contract entries: key, value, type, is_default (redacted: value unknown)
    withheld: frozenset[str]
    software_name: str = FAMILY
    software_version: str = ""
    client_id: str = ""
    names: Mapping[str, str] = field(default_factory=dict)  # another name of a key -> the key pushed
    unknown: frozenset[str] = frozenset()  # keys pushed whose value the set records only as an expression (run time)

    @property
    def sent(self) -> frozenset[str]:
        return frozenset(e["key"] for e in self.entries)

    def pushed_as(self, keys: Iterable[str]) -> frozenset[str]:
        """``keys`` (a label's or a finding's) as this push names them (librdkafka: ``acks`` is
        ``request.required.acks``)."""
        return frozenset(self.names.get(k, k) for k in keys)


def load(directory: Path = DUMPS) -> list[Dump]:
    """Every dump file, sorted by id."""
    out = []
    for path in sorted(directory.glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        lines = []
        for line in raw["dump"].splitlines():
            key, sep, value = line.partition(" = ")
            if sep:
                lines.append((key.strip(), value.rstrip()))
            elif line.strip().endswith(" ="):  # an empty value printed without its trailing space
                lines.append((line.strip()[:-2].strip(), ""))
        labels = tuple(Label(tuple(lb["keys"]), lb["problem"]) for lb in raw["labels"])
        out.append(Dump(raw["id"], raw["source"], raw["client"], raw["release"], tuple(lines), labels,
                        frozenset(raw.get("unset_by_user", {}).get("keys", ())), raw.get("batch", "")))
    return out


def _value(printed: str, spec: KeySpec | None) -> str | None:
    """The value a client pushes for what its config dump printed."""
    if printed == "null":
        return None
    kind = spec.type if spec else "STRING"
    if kind == "LIST" and printed.startswith("[") and printed.endswith("]"):
        return ",".join(p.strip() for p in printed[1:-1].split(",") if p.strip())
    if kind == "CLASS" and printed.startswith("class "):
        return printed.removeprefix("class ")
    return printed


def _items(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def _is_default(value: str | None, spec: KeySpec | None) -> bool:
    if spec is None or spec.required:
        return False
    default = spec.default
    if value is None or default is None:
        return value is None and default is None
    if spec.type == "LIST":
        return _items(value) == _items(default)
    if spec.type == "DOUBLE":
        try:
            return float(value) == float(default)
        except ValueError:
            return False
    return value == default


def to_push(dump: Dump) -> Push:
    """The push a KIP client of ``dump.release`` sends for this configuration."""
    file = key_set_file(FAMILY, dump.release)
    assert file is not None, "the Java family always has a key set"
    specs, own = profile(file, dump.client).keys, dict(configdef(file, dump.client))
    # The defaults of its own release where they differ from its line's key set; not for Streams, whose
    # defaults.json entries are what it hands its clients, not its StreamsConfig's own defaults.
    if dump.client != STREAMS:
        for key, default in defaults_at(FAMILY, dump.client, band(FAMILY, dump.release)).items():
            if key in own:
                own[key] = KeySpec(own[key].type, default, own[key].required)
    entries, withheld = [], set()
    for key, printed in dump.lines:
        spec = own.get(key) or specs.get(key)  # the client judges is_default by its own ConfigDef
        type_name = spec.type if spec else "STRING"
        if kip_client_reason(key, type_name) is not None:
            withheld.add(key)
            continue
        value = _value(printed, spec)
        is_default = key in dump.unset_by_user or _is_default(value, spec)
        entries.append({"key": key, "value": value, "type": type_name, "is_default": is_default})
    printed_id = dict(dump.lines).get("client.id", "")
    return Push(dump, tuple(entries), frozenset(withheld), FAMILY, dump.release, printed_id or dump.id)


def instance_id(case: Case) -> str:
    """A stable client instance id per configuration (findings name their subject by it)."""
    return str(uuid.UUID(bytes=hashlib.sha256(case.id.encode()).digest()[:16], version=4))

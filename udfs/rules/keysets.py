"""Known configuration keys of each client software family, with types and documented defaults.

The data files under ``udfs/rules/data/`` (package data) hold the facts: the Java
producer, consumer, admin and Streams ConfigDefs of every Apache Kafka release line
(``generate_keysets``) and librdkafka's CONFIGURATION.md of every release line
(``generate_rdkafka_keysets``). ``families.json`` maps KIP-511 software names to
them, and a reported version to the release it stands for (``upstream_version``).
A family that names its keys in its own style maps the Java keys the rules read to
its own (``java_equivalents``: kafka-python's ``session_timeout_ms``,
sarama's ``Producer.RequiredAcks``, franz-go's ``SessionTimeout``), only where the
client documents the same meaning; ``durations: "go"`` says its timeouts are Go
``time.Duration`` text (``10s``), which the rules read in milliseconds
(``udfs.rules.durations``). A :class:`Profile` is one family key set narrowed to
one role (producer, consumer, admin, streams, or ``unknown`` when the pushed keys do
not tell); ``resolve_profiles`` picks a profile for every push of a batch from its
software name, version and keys.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from udfs.rules.defaults import band, behaviours_at, defaults_at, version_tuple
from udfs.rules.exceptions import KeySetError

__all__ = [
    "ANY_KEY",
    "DEFAULT_DURATIONS",
    "DEFAULT_JUDGE",
    "GO_DURATIONS",
    "IGNORES_UNKNOWN_KEYS",
    "ROLES",
    "STREAMS",
    "UNKNOWN_ROLE",
    "KeySpec",
    "Profile",
    "configdef",
    "family_of",
    "key_set_file",
    "known_anywhere",
    "parse_profile_id",
    "profile",
    "resolve_profiles",
    "upstream_version",
]

STREAMS: Final = "streams"
ROLES = ("producer", "consumer", "admin", STREAMS)
UNKNOWN_ROLE = "unknown"
ANY_KEY: Final = "*"  # a client prefix under which every key is the client's own
DEFAULT_JUDGE: Final = "none"  # a family that names no judge: its rules judge only what was sent
IGNORES_UNKNOWN_KEYS: Final = "ignored"  # unknown_keys of a client that runs with a key it does not know
DEFAULT_DURATIONS: Final = "number"  # durations in the key's unit
GO_DURATIONS: Final = "go"  # durations as Go time.Duration text


@dataclass(frozen=True, slots=True)
class KeySpec:
    """One documented key: its ConfigDef type name and documented default (None: no default)."""

    type: str
    default: str | None
    required: bool = False


@dataclass(frozen=True)
class Profile:
    """One family key set narrowed to one role: what the rules need to judge a push."""

    id: str
    family: str
    version: str
    role: str
    judge: str
    keys: Mapping[str, KeySpec]
    prefixes: Mapping[str, frozenset[str]] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)
    equivalents: Mapping[str, str] = field(default_factory=dict)
    behaviours: frozenset[str] = frozenset()  # udfs.rules.defaults behaviours in effect for its releases
    unknown_keys: str = IGNORES_UNKNOWN_KEYS  # what the client does with an unknown key: ignored|rejected|impossible
    durations: str = DEFAULT_DURATIONS  # how its duration keys read: "number" (the key's unit) or "go" (Go text)
    family_keys: pa.Array = field(default_factory=lambda: pa.array([], pa.string()))  # every role's keys

    @functools.cached_property
    def known_names(self) -> frozenset[str]:
        return frozenset(self.keys)

    @functools.cached_property
    def _known_array(self) -> pa.Array:
        return pa.array(sorted(self.keys), pa.string())

    def known_mask(self, keys: pa.Array) -> pa.Array:
        """Vectorized: True where a key is the client's own, not custom configuration.

        Own keys are those of any role of the key set (one librdkafka configuration may hold producer and
        consumer properties; a wrongly inferred role must not turn the others into custom keys), and
        Streams' client-prefixed keys.
        """
        mask = pc.or_(pc.is_in(keys, value_set=self._known_array), pc.is_in(keys, value_set=self.family_keys))
        for prefix, names in self.prefixes.items():
            under = pc.starts_with(keys, prefix)
            if names:
                stripped = pc.utf8_slice_codeunits(keys, start=len(prefix))
                under = pc.and_(under, pc.is_in(stripped, value_set=pa.array(sorted(names), pa.string())))
            mask = pc.or_(mask, under)
        return pc.fill_null(mask, False)

    @functools.cached_property
    def _alias_arrays(self) -> tuple[pa.Array, pa.Array]:
        return pa.array(list(self.aliases), pa.string()), pa.array(list(self.aliases.values()), pa.string())

    def other_role_mask(self, keys: pa.Array) -> np.ndarray:
        """Vectorized: True where a key (aliases read as the property they name) is one of the key set's other
        roles' and not this role's own (``group.id`` on a producer)."""
        canonical = keys
        if self.aliases:
            names, targets = self._alias_arrays
            index = pc.index_in(keys, value_set=names)
            canonical = pc.if_else(pc.is_valid(index), pc.take(targets, index), keys)
        other = pc.and_(pc.is_in(canonical, value_set=self.family_keys),
                        pc.invert(pc.is_in(canonical, value_set=self._known_array)))
        return pc.fill_null(other, False).to_numpy(zero_copy_only=False)

    def canonical(self, key: str) -> str:
        """The property an alias stands for (librdkafka's ``linger.ms`` is ``queue.buffering.max.ms``)."""
        return self.aliases.get(key, key)

    def sources(self, rule_key: str) -> tuple[str, ...]:
        """Every pushed key that carries the value a rule reads as ``rule_key`` (itself and its aliases)."""
        target = self.canonical(self.equivalents.get(rule_key, rule_key))
        names = {target} | {alias for alias, canon in self.aliases.items() if canon == target}
        if target not in self.keys and not (names & set(self.keys)):
            return ()
        return tuple(sorted(names))

    def default(self, rule_key: str) -> str | None:
        """The documented default the client uses when it did not send ``rule_key``."""
        target = self.canonical(self.equivalents.get(rule_key, rule_key))
        spec = self.keys.get(target) or self.keys.get(rule_key)
        return None if spec is None else spec.default

    def type_of(self, key: str) -> str | None:
        spec = self.keys.get(self.canonical(key))
        return None if spec is None else spec.type


def _read_json(name: str) -> Any:
    try:
        text = resources.files("udfs.rules").joinpath("data").joinpath(name).read_text(encoding="utf-8")
        return json.loads(text)
    except (FileNotFoundError, ValueError) as exc:
        raise KeySetError(f"known-key data file {name} is missing or not JSON: {exc}") from None


@functools.cache
def _families() -> tuple[dict[str, Any], ...]:
    return tuple(_read_json("families.json")["families"])


@functools.cache
def _key_set(file: str) -> dict[str, Any]:
    doc = _read_json(file)
    for required in ("family", "version", "roles"):
        if required not in doc:
            raise KeySetError(f"known-key data file {file} lacks {required!r}")
    return dict(doc)


def family_of(software_name: str | None) -> dict[str, Any] | None:
    """The family entry of ``families.json`` for a KIP-511 software name, or None."""
    if not software_name:
        return None
    for fam in _families():
        if software_name in fam["names"] or any(software_name.startswith(p) for p in fam["name_prefixes"]):
            return fam
    return None


def upstream_version(fam: Mapping[str, Any], version: str | None, software_name: str | None = None) -> str | None:
    """The release a family's key sets know ``version`` as.

    A vendor build's own version (Confluent Platform's ``7.9.0-ccs``) maps to the
    upstream release it ships (``3.9.0``, ``vendor_versions`` in families.json); a
    library's bindings report the library's version as theirs or embed it in their own
    (``2.6.0-rdkafka-2.6.0``, ``library_version``); a binding that does neither has no
    known release (None).
    """
    library = fam.get("library_version")
    if library and software_name is not None:
        if software_name in library["own"]:
            return version
        found = re.findall(library["embedded"], version or "")
        return found[-1] if found else None
    vendor = fam.get("vendor_versions")
    if not vendor or not version or not version.endswith(tuple(vendor["suffixes"])):
        return version
    parts = version.split("-", 1)[0].split(".")
    line = vendor["lines"].get(".".join(parts[:2]))
    return version if line is None else ".".join([line, *parts[2:]])


def _vendor(fam: Mapping[str, Any], version: str | None) -> str:
    """The suffix of a vendor build that defines keys of its own (``vendor_versions.own_prefixes``: Confluent
    Server's ``-ce`` clients, ``confluent.``), or "" for any other version."""
    own = (fam.get("vendor_versions") or {}).get("own_prefixes", {})
    return next((suffix for suffix in own if version and version.endswith(suffix)), "")


@functools.cache
def key_set_file(software_name: str | None, software_version: str | None) -> str | None:
    """The data file describing this software name and version, or None when there is none."""
    fam = family_of(software_name)
    if fam is None or not fam["key_sets"]:
        return None
    version = version_tuple(upstream_version(fam, software_version, software_name))
    chosen = fam["key_sets"][-1]["file"]  # unparseable versions get the newest key set
    if version is not None:
        for entry in fam["key_sets"]:
            if version >= (version_tuple(entry["from_version"]) or (0,)):
                chosen = entry["file"]
    return str(chosen)


def _specs(raw: Mapping[str, Any]) -> dict[str, KeySpec]:
    return {k: KeySpec(v["type"], v.get("default"), bool(v.get("required", False))) for k, v in raw.items()}


@functools.cache
def configdef(file: str, role: str) -> Mapping[str, KeySpec]:
    """A role's own keys as its client defines them (a Streams client's StreamsConfig), without the release
    defaults and embedded clients a :class:`Profile` adds: what the client judges ``is_default`` by."""
    return _specs(_key_set(file)["roles"][role]["keys"])


def _family(file: str) -> Mapping[str, Any]:
    """The ``families.json`` entry of a key-set file's family (empty when it has none)."""
    doc = _key_set(file)
    return next((fam for fam in _families() if fam["family"] == doc["family"]), {})


def _family_field(file: str, name: str, missing: str) -> str:
    return str(_family(file).get(name, missing))


def _with_release_defaults(keys: dict[str, KeySpec], family: str, role: str, release: str,
                           own: frozenset[str]) -> dict[str, KeySpec]:
    """``keys`` with the defaults ``defaults.json`` records for ``role`` at ``release``.

    Streams also takes its clients' release defaults for the keys it does not define itself (``own``).
    """
    layers = ("producer", "consumer", "admin", "streams") if role == "streams" else (role,)
    for layer in layers:
        for name, value in defaults_at(family, layer, release).items():
            spec = keys.get(name)
            if spec is not None and (layer == role or name not in own):
                keys[name] = KeySpec(spec.type, value, spec.required)
    return keys


@functools.cache
def profile(file: str, role: str, release: str | None = None, vendor: str = "") -> Profile:
    """The profile of one data file and role; ``unknown`` is the union of roles with agreeing defaults.

    ``release`` is the first release of the band the client's version falls in (``defaults.band``):
    defaults and behaviours follow it; None judges with the file's own release. ``vendor`` is the suffix
    of a vendor build whose own key prefixes are its keys too (``_vendor``).
    """
    doc = _key_set(file)
    roles: dict[str, Any] = doc["roles"]
    if role == UNKNOWN_ROLE:
        merged: dict[str, KeySpec] = {}
        disagree: set[str] = set()
        for spec_map in (_specs(r["keys"]) for r in roles.values()):
            for name, spec in spec_map.items():
                if name in merged and merged[name].default != spec.default:
                    disagree.add(name)
                merged.setdefault(name, spec)
        keys = {n: (KeySpec(s.type, None) if n in disagree else s) for n, s in merged.items()}
        prefixes: dict[str, frozenset[str]] = {}
    elif role in roles:
        keys = _specs(roles[role]["keys"])
        prefixes = {}
        for prefix, target in roles[role].get("client_prefixes", {}).items():
            prefixes[prefix] = frozenset() if target == ANY_KEY else frozenset(roles[target]["keys"])
        if role == STREAMS:  # Streams also takes every client config unprefixed
            for other in ("producer", "consumer", "admin"):
                for name, spec in _specs(roles[other]["keys"]).items():
                    keys.setdefault(name, spec)
    else:
        raise KeySetError(f"{file} has no role {role!r}")
    own = _family(file).get("vendor_versions", {}).get("own_prefixes", {}).get(vendor, ()) if vendor else ()
    prefixes.update({prefix: frozenset() for prefix in own})  # every key under them (ANY_KEY)
    base = file.removesuffix(".json")
    release = release or band(doc["family"], doc["version"])
    if role != UNKNOWN_ROLE:
        keys = _with_release_defaults(keys, doc["family"], role, release, frozenset(roles[role]["keys"]))
    return Profile(
        id=f"{base}/{role}@{release}" + (f"#{vendor}" if vendor else ""), family=doc["family"],
        version=doc["version"], role=role,
        judge=_family_field(file, "judge", DEFAULT_JUDGE),
        unknown_keys=_family_field(file, "unknown_keys", IGNORES_UNKNOWN_KEYS),
        keys=keys, prefixes=prefixes, aliases=dict(doc.get("aliases", {})),
        equivalents=dict(doc.get("java_equivalents", {})), behaviours=behaviours_at(doc["family"], release),
        durations=str(doc.get("durations", DEFAULT_DURATIONS)), family_keys=_file_keys(file),
    )


@functools.cache
def _file_keys(file: str) -> pa.Array:
    return pa.array(sorted(set().union(*(set(r["keys"]) for r in _key_set(file)["roles"].values()))), pa.string())


def parse_profile_id(profile_id: str) -> tuple[str, str, str, str]:
    """``(file, role, release, vendor)`` of a profile id ``<file base>/<role>@<release>[#<vendor suffix>]``."""
    base, rest = profile_id.rsplit("/", 1)
    role, _, release = rest.partition("@")
    release, _, vendor = release.partition("#")
    return base + ".json", role, release, vendor


@functools.cache
def _exclusive(file: str) -> dict[str, pa.Array]:
    """Per role, the keys no other role of the file knows (they reveal the role)."""
    roles: dict[str, Any] = _key_set(file)["roles"]
    out = {}
    for role, body in roles.items():
        others = set().union(*(set(b["keys"]) for r, b in roles.items() if r != role))
        out[role] = pa.array(sorted(set(body["keys"]) - others), pa.string())
    return out


def _infer_roles(file: str, rows: np.ndarray, keys: pa.Array, n: int) -> np.ndarray:
    """Role per push of one key-set file, from counts of role-exclusive keys (vectorized)."""
    if _key_set(file).get("single_role"):  # one config struct for every role (sarama, franz-go)
        return np.full(n, UNKNOWN_ROLE, dtype=object)
    exclusive = _exclusive(file)
    score = {r: np.bincount(rows[pc.is_in(keys, value_set=v).to_numpy(zero_copy_only=False)], minlength=n)
             for r, v in exclusive.items()}
    admin_known = pc.fill_null(pc.is_in(keys, value_set=profile(file, "admin")._known_array), False)
    not_admin = np.bincount(rows[~admin_known.to_numpy(zero_copy_only=False)], minlength=n)
    zeros = np.zeros(n, dtype=np.int64)
    producer, consumer = score.get("producer", zeros), score.get("consumer", zeros)
    streams = score.get("streams", zeros)
    role = np.full(n, UNKNOWN_ROLE, dtype=object)
    role[(producer == 0) & (consumer == 0) & (not_admin == 0)] = "admin"
    role[producer > consumer] = "producer"  # the majority of role-revealing keys wins; a tie stays unknown
    role[consumer > producer] = "consumer"
    role[streams > 0] = "streams"
    return role


def resolve_profiles(software_names: Sequence[str | None], software_versions: Sequence[str | None],
                     entry_rows: np.ndarray, entry_keys: pa.Array) -> tuple[np.ndarray, dict[str, Profile]]:
    """A profile id per push (None when its family has no key set), and the profiles by id.

    ``entry_rows[i]`` is the push (row number) of entry ``i`` and ``entry_keys[i]`` its key.
    Work is per distinct (name, version) pair and per key-set file, never per entry.
    """
    n = len(software_names)
    name_codes, name_values = _codes(software_names)
    version_codes, version_values = _codes(software_versions)
    width = len(version_values)
    pairs, codes = np.unique(name_codes * width + version_codes, return_inverse=True)
    chosen = [_file_and_band(name_values[p // width], version_values[p % width]) for p in pairs.tolist()]
    files = np.array([c[0] for c in chosen] or [None], dtype=object)[codes]
    bands = np.array([c[1] for c in chosen] or [None], dtype=object)[codes]
    vendors = np.array([c[2] for c in chosen] or [""], dtype=object)[codes]
    ids = np.full(n, None, dtype=object)
    registry: dict[str, Profile] = {}
    for file in {f for f in files if f is not None}:
        in_file = files == file
        entry_mask = in_file[entry_rows] if len(entry_rows) else np.zeros(0, dtype=bool)
        roles = _infer_roles(file, entry_rows[entry_mask], entry_keys.filter(pa.array(entry_mask)), n)
        for role, release, vendor in set(zip(roles[in_file], bands[in_file], vendors[in_file], strict=True)):
            prof = profile(file, str(role), str(release), str(vendor))
            registry[prof.id] = prof
            ids[in_file & (roles == role) & (bands == release) & (vendors == vendor)] = prof.id
    return ids, registry


def _codes(values: Sequence[str | None]) -> tuple[np.ndarray, list[str | None]]:
    """A code per value and the values by code (code 0 is None)."""
    encoded = pa.array(list(values), pa.string()).dictionary_encode()
    codes = pc.fill_null(pc.add(encoded.indices, 1), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, [None, *encoded.dictionary.to_pylist()]


def _file_and_band(software_name: str | None, software_version: str | None) -> tuple[str | None, str | None, str]:
    """The key-set file, the defaults band and the vendor suffix (``_vendor``) a client is judged with."""
    file = key_set_file(software_name, software_version)
    fam = family_of(software_name)
    if file is None or fam is None:
        return None, None, ""
    release = band(_key_set(file)["family"], upstream_version(fam, software_version, software_name))
    return file, release, _vendor(fam, software_version)


@functools.cache
def _known_anywhere() -> pa.Array:
    names: set[str] = set()
    for fam in _families():
        for entry in fam["key_sets"]:
            for role in _key_set(entry["file"])["roles"].values():
                names.update(role["keys"])
    return pa.array(sorted(names), pa.string())


def known_anywhere(keys: pa.Array) -> pa.Array:
    """Vectorized: True where a key is known to some family's key set (for clients of no known family)."""
    return pc.fill_null(pc.is_in(keys, value_set=_known_anywhere()), False)

"""Release-dependent client defaults and behaviours, each with its source.

``udfs/rules/data/defaults.json`` (package data) holds, per family, role and key,
the default from each release on, and per family the behaviours a release range
shows beyond its defaults (the Java producer's default idempotence yielding to
conflicting settings from 3.0.1, a ConfigException for max.in.flight above 5 from
4.0). A key-set file describes one release; this table corrects the defaults of
every other release judged with it. A release *band* is the span of releases over
which neither a default nor a behaviour changes: profiles are built per band.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

from udfs.rules.exceptions import KeySetError

__all__ = [
    "RELEASE",
    "Behaviour",
    "Default",
    "band",
    "behaviours",
    "behaviours_at",
    "default_history",
    "defaults_at",
    "in_releases",
    "version_tuple",
]

Version = tuple[int, ...]
RELEASE: Final = re.compile(r"^v?(\d+(?:\.\d+)*)")  # the leading dotted number of a version


@dataclass(frozen=True, slots=True)
class Default:
    """One key's default from release ``since`` on (None: no default, or not checked), with its source."""

    since: str
    value: str | None
    source: str


@dataclass(frozen=True, slots=True)
class Behaviour:
    """What a family does beyond its defaults over release ranges [from, until), with its source."""

    name: str
    releases: tuple[tuple[str, str | None], ...]
    about: str
    source: str


def version_tuple(version: str | None) -> Version | None:
    """The leading dotted number of a software version (``v1.17.1`` and ``2.6.0-rdkafka-2.6.0`` included)."""
    match = RELEASE.match((version or "").strip())
    return None if match is None else tuple(int(p) for p in match.group(1).split("."))


def _v(text: str) -> Version:
    parsed = version_tuple(text)
    if parsed is None:
        raise KeySetError(f"defaults.json: {text!r} is not a release")
    return parsed


@functools.cache
def _table() -> dict[str, Any]:
    try:
        text = resources.files("udfs.rules").joinpath("data").joinpath("defaults.json").read_text(encoding="utf-8")
        return dict(json.loads(text)["families"])
    except (FileNotFoundError, ValueError, KeyError) as exc:
        raise KeySetError(f"defaults.json is missing or malformed: {exc}") from None


def default_history(family: str, role: str, key: str) -> tuple[Default, ...]:
    """Every recorded default of one key, oldest first (empty: the key-set file's default holds)."""
    rows = _table().get(family, {}).get("keys", {}).get(role, {}).get(key, [])
    return tuple(Default(str(r["from"]), r["value"], str(r["source"])) for r in rows)


def behaviours(family: str) -> tuple[Behaviour, ...]:
    """The family's recorded behaviours."""
    out = []
    for name, body in _table().get(family, {}).get("behaviours", {}).items():
        ranges = tuple((str(lo), None if hi is None else str(hi)) for lo, hi in body["releases"])
        out.append(Behaviour(name, ranges, str(body["about"]), str(body["source"])))
    return tuple(out)


def in_releases(version: Version, releases: tuple[tuple[str, str | None], ...]) -> bool:
    """True when ``version`` lies in one of the ranges [from, until)."""
    return any(_v(lo) <= version and (hi is None or version < _v(hi)) for lo, hi in releases)


@functools.cache
def _boundaries(family: str) -> tuple[Version, ...]:
    body = _table().get(family, {})
    found: set[Version] = {(0,)}
    for role in body.get("keys", {}).values():
        for rows in role.values():
            found.update(_v(str(r["from"])) for r in rows)
    for b in behaviours(family):
        for lo, hi in b.releases:
            found.add(_v(lo))
            if hi is not None:
                found.add(_v(hi))
    return tuple(sorted(found))


def band(family: str, version: str | None) -> str:
    """The first release of the band ``version`` falls in; an unparseable version gets the newest band."""
    bounds = _boundaries(family)
    parsed = version_tuple(version)
    start = bounds[-1] if parsed is None else max(b for b in bounds if b <= parsed)
    return ".".join(str(p) for p in start)


@functools.cache
def defaults_at(family: str, role: str, release: str) -> Mapping[str, str | None]:
    """The recorded defaults of one role at a release: key to value, for the keys the table records."""
    at = _v(release)
    out: dict[str, str | None] = {}
    for key in _table().get(family, {}).get("keys", {}).get(role, {}):
        current = [d for d in default_history(family, role, key) if _v(d.since) <= at]
        if current:
            out[key] = current[-1].value
    return out


@functools.cache
def behaviours_at(family: str, release: str) -> frozenset[str]:
    """Names of the family's behaviours in effect at a release."""
    at = _v(release)
    return frozenset(b.name for b in behaviours(family) if in_releases(at, b.releases))

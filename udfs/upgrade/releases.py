"""The request versions each Apache Kafka broker release serves, read from package data.

``data/broker_api_versions.json`` (written by ``udfs.upgrade.generate`` from the
real kafka-clients jars of each release, with its source) lists, per broker
release (``major.minor``) and API key, the API's name, the oldest version the
broker accepts, the newest stable one and the deprecated range.

A note the data cannot show: from 4.0 a broker's ApiVersions answer advertises
Produce from v0 (KAFKA-18659, for librdkafka) although it refuses v0-v2; the data
holds what the broker accepts, which is what readiness needs.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType

from configwatch.errors import ConfigwatchError

__all__ = ["BrokerRelease", "ServedApi", "UnknownReleaseError", "api_name", "broker_release", "broker_releases"]

log = logging.getLogger(__name__)

_RELEASE = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)*$")


class UnknownReleaseError(ConfigwatchError, ValueError):
    """A target release the data does not describe."""


@dataclass(frozen=True, slots=True)
class ServedApi:
    """One API a broker release serves: versions ``min_version`` to ``max_version`` (the newest stable one)."""

    api_key: int
    name: str
    min_version: int
    max_version: int
    deprecated: tuple[int, int] | None = None

    def is_deprecated(self, version: int) -> bool:
        return self.deprecated is not None and self.deprecated[0] <= version <= self.deprecated[1]


@dataclass(frozen=True, slots=True, eq=False)
class BrokerRelease:
    """What one broker release (``major.minor``) serves, read from ``kafka_clients``'s definitions (``source``)."""

    release: str
    kafka_clients: str
    source: str
    apis: Mapping[int, ServedApi]

    def api(self, api_key: int) -> ServedApi | None:
        return self.apis.get(api_key)


@functools.cache
def _load() -> Mapping[str, BrokerRelease]:
    text = resources.files("udfs.upgrade").joinpath("data/broker_api_versions.json").read_text(encoding="utf-8")
    releases: dict[str, BrokerRelease] = {}
    for release, data in json.loads(text)["releases"].items():
        apis = {int(key): ServedApi(int(key), api["name"], api["min"], api["max"],
                                    tuple(api["deprecated"]) if api.get("deprecated") else None)
                for key, api in data["apis"].items()}
        releases[release] = BrokerRelease(release, data["kafka_clients"], data["source"], MappingProxyType(apis))
    return MappingProxyType(releases)


def broker_releases() -> tuple[str, ...]:
    """The releases the data describes, oldest first (``major.minor``)."""
    return tuple(sorted(_load(), key=lambda r: tuple(int(p) for p in r.split("."))))


def broker_release(target: str) -> BrokerRelease:
    """The release ``target`` names: ``4.0``, ``4.0.1`` and ``v4.0`` all mean 4.0 (patch releases do not change
    request versions). Raises UnknownReleaseError for a release the data does not describe."""
    match = _RELEASE.match(target.strip())
    key = f"{match.group(1)}.{match.group(2)}" if match else target
    found = _load().get(key)
    if found is None:
        raise UnknownReleaseError(f"no request-version data for Kafka {target!r}; known: "
                                  + ", ".join(broker_releases()))
    return found


def api_name(api_key: int) -> str:
    """The API's name from the newest release that serves it, else ``ApiKey<n>``."""
    for release in reversed(broker_releases()):
        api = _load()[release].api(api_key)
        if api is not None:
            return api.name
    return f"ApiKey{api_key}"

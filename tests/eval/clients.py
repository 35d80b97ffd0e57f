"""One evaluation client: its push as the client would send it, and the labels it carries.

:class:`Client` is a push (a ``policy.api.RequestContext`` and its ``ClientConfig``
entries) with its ground truth: the rule ids that must fire for it (``expected``),
the ones that may (``allowed``, not scored), and the secret strings planted in it.
:class:`Group` is the same for a consumer group (group rules are scored per group).
:class:`PushBuilder` assembles the entries: documented defaults with
``is_default=true``, then what the application set.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from policy.api import ClientConfig, RequestContext
from tests.eval.defaults import Row, java_default, rows_for

__all__ = ["Client", "Group", "PushBuilder", "Software", "make_context"]


@dataclass(frozen=True, slots=True)
class Software:
    """A client family and release as KIP-511 reports it."""

    family: str            # java | librdkafka | kafka-python | sarama | franz-go
    name: str              # client_software_name
    version: str           # client_software_version
    release: tuple[int, ...]


@dataclass(frozen=True)
class Client:
    """One client instance's push and its labels."""

    context: RequestContext
    configs: tuple[ClientConfig, ...]
    family: str
    role: str
    scenario: str          # "<clean|trap|leak|identity|anomaly|outlier|group>/<what>"
    expected: frozenset[str] = frozenset()
    allowed: frozenset[str] = frozenset()
    secrets: tuple[str, ...] = ()
    group: str | None = None

    @property
    def instance_id(self) -> str:
        return str(self.context.client_instance_id)


@dataclass(frozen=True)
class Group:
    """A consumer group and the group rules that must (``expected``) or may (``allowed``) fire for it."""

    group_id: str
    scenario: str
    expected: frozenset[str] = frozenset()
    allowed: frozenset[str] = frozenset()
    members: tuple[str, ...] = ()


@dataclass
class PushBuilder:
    """The entries of one push, in the order the client lists them."""

    software: Software
    role: str
    entries: dict[str, ClientConfig] = field(default_factory=dict)
    _types: dict[str, str] = field(default_factory=dict)

    def defaults(self, *tables: tuple[Row, ...]) -> PushBuilder:
        for table in tables:
            for key, type_, value, _ in rows_for(table, self.software.release):
                if self.software.family == "java":
                    value = java_default(key, self.software.release) or value
                self._types[key] = type_
                self.entries[key] = ClientConfig(key, value, type_, True)
        return self

    def set(self, key: str, value: str, type_: str | None = None) -> PushBuilder:
        """An entry the application set (``is_default=false``); the type defaults to the documented one."""
        self.entries[key] = ClientConfig(key, value, type_ or self._types.get(key, "STRING"), False)
        return self

    def update(self, values: Iterable[tuple[str, str]]) -> PushBuilder:
        for key, value in values:
            self.set(key, value)
        return self

    def drop(self, key: str) -> PushBuilder:
        self.entries.pop(key, None)
        return self

    def get(self, key: str) -> str | None:
        entry = self.entries.get(key)
        return None if entry is None else entry.value

    def configs(self) -> tuple[ClientConfig, ...]:
        return tuple(self.entries.values())


def make_context(rng: random.Random, n: int, software: Software, client_id: str, instance_id: str,
            principal: str, secure: bool) -> RequestContext:
    """What the broker knows about the connection of client number ``n``."""
    address = f"10.{rng.randint(0, 63)}.{rng.randint(0, 255)}.{rng.randint(2, 254)}"
    broker = rng.randint(0, 5)
    port = 9093 if secure else 9092
    return RequestContext(
        connection_id=f"10.8.0.{10 + broker}:{port}-{address}:{rng.randint(32768, 60999)}-{n}",
        client_address=address, listener="SASL_SSL" if secure else "PLAINTEXT",
        security_protocol="SASL_SSL" if secure else "PLAINTEXT", principal=principal, client_id=client_id,
        client_instance_id=instance_id, client_software_name=software.name,
        client_software_version=software.version, broker_id=broker)

"""The sinks the job can write to, by ``--sink`` target, and its notifier, by ``--webhook-url``.

``parse_output("kafka")`` or ``parse_output("files:DIR")`` checks a target once
(a bad one is a :class:`sinks.exceptions.SinkTargetError` with one line to show);
``build_output`` turns it into the :class:`sinks.base.Output` the job writes every
batch to; ``build_notifier`` gives the :class:`sinks.base.Notifier` told about each
batch's findings after the durable write (the Alertmanager-style webhook), or None.
A new sink is a module in ``sinks/`` and one entry in ``_OUTPUTS``; the job imports
only this module and ``sinks.base``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from configwatch.secrets import SecretStr
from sinks.base import Notifier, Output
from sinks.exceptions import SinkTargetError
from sinks.files import FilesOutput
from sinks.kafka import KafkaOutput
from sinks.webhook import WebhookSink

__all__ = ["OutputTarget", "build_notifier", "build_output", "parse_output"]


@dataclass(frozen=True)
class OutputTarget:
    """A checked ``--sink`` value: the sink's name and its argument (``files``'s directory)."""

    name: str
    argument: str = ""

    @property
    def needs_kafka(self) -> bool:
        return _OUTPUTS[self.name].needs_kafka

    def __str__(self) -> str:
        return f"{self.name}:{self.argument}" if self.argument else self.name


@dataclass(frozen=True)
class _Entry:
    usage: str  # how the target is written, for the one-line error
    needs_kafka: bool
    takes_argument: bool
    check: Callable[[str], str]  # the argument, normalised; raises SinkTargetError
    build: Callable[[str, str | None, Mapping[str, str]], Output]  # argument, bootstrap, kind -> topic


def _directory(argument: str) -> str:
    path = Path(argument).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise SinkTargetError(f"files:{path}: exists and is not a directory")
    return str(path)


def _kafka(_argument: str, bootstrap: str | None, topics: Mapping[str, str]) -> Output:
    if bootstrap is None:
        raise SinkTargetError("the kafka sink needs bootstrap servers")
    return KafkaOutput(bootstrap, dict(topics))


_OUTPUTS: dict[str, _Entry] = {
    "kafka": _Entry("kafka", needs_kafka=True, takes_argument=False, check=lambda a: a, build=_kafka),
    "files": _Entry("files:DIR", needs_kafka=False, takes_argument=True, check=_directory,
                    build=lambda argument, _bootstrap, _topics: FilesOutput(Path(argument))),
}
_EXPECTED = "expected " + " or ".join(repr(entry.usage) for entry in _OUTPUTS.values())


def parse_output(value: str) -> OutputTarget:
    """Check a ``--sink`` value; SinkTargetError (one line) when it names no sink or a bad argument."""
    text = value.strip()
    name, colon, argument = text.partition(":")
    entry = _OUTPUTS.get(name)
    if entry is None or entry.takes_argument != bool(colon) or (colon and not argument.strip()):
        raise SinkTargetError(f"{_EXPECTED}, got {value!r}")
    return OutputTarget(name, entry.check(argument.strip()) if colon else "")


def build_output(target: OutputTarget, *, bootstrap: str | None, topics: Mapping[str, str]) -> Output:
    """The Output ``target`` names; ``topics`` maps each output kind to its topic (Kafka sinks)."""
    return _OUTPUTS[target.name].build(target.argument, bootstrap, topics)


def build_notifier(webhook_url: SecretStr | None) -> Notifier | None:
    """The webhook notifier for ``--webhook-url``, or None without one."""
    return WebhookSink(webhook_url) if webhook_url is not None else None

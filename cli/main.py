"""The ``configwatch`` command: parses flags, configures logging, dispatches.

Every ConfigwatchError becomes one line on stderr and exit code 1; a usage
mistake is one line and exit code 2. No tracebacks for user errors.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn

from cli import commands
from configwatch.errors import ConfigwatchError, UsageError
from configwatch.settings import Settings, add_arguments, secret_flags

__all__ = ["build_parser", "main"]

log = logging.getLogger(__name__)


_SECRET_FLAGS = secret_flags()


def _secret_values(argv: Sequence[str]) -> list[str]:
    """What ``argv`` gives secret flags (``--flag VALUE``, ``--flag=VALUE``, or an abbreviation), longest first."""
    values = []
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if len(name) > 2 and name.startswith("--") and any(flag.startswith(name) for flag in _SECRET_FLAGS):
            values.append(value if eq else argv[i + 1] if i + 1 < len(argv) else "")
    return sorted((v for v in values if v.strip()), key=len, reverse=True)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one helpful line, which never echoes what a secret flag was given."""

    _secrets: Sequence[str] = ()

    def parse_known_args(self, args: Iterable[str] | None = None, namespace: Any = None) -> tuple[Any, list[str]]:
        argv = sys.argv[1:] if args is None else list(args)
        self._secrets = _secret_values(argv)
        return super().parse_known_args(argv, namespace)

    def error(self, message: str) -> NoReturn:
        for value in self._secrets:  # where argparse puts a value: "--flag VALUE", "--flag=VALUE", "'VALUE'"
            message = re.sub(rf"(?<![^\s='\"]){re.escape(value)}(?![^\s'\",])", "***", message)
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> _Parser:
    parser = _Parser(
        prog="configwatch",
        description="Observability for Apache Kafka client configurations: ingest PushConfig "
        "pushes, detect leaks and anomalies with Spark, keep per-version connection gauges.",
    )
    parser.add_argument("--log-level", dest="log_level", default=None,
                        choices=("DEBUG", "INFO", "WARNING", "ERROR"), help="log level (default INFO)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for spec in commands.COMMANDS:
        p = sub.add_parser(spec.name, help=spec.help, description=spec.description)
        add_arguments(p, spec.name)
        spec.add_arguments(p)
        p.set_defaults(handler=spec.handler, command_parser=p)
    return parser


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level),
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
        stream=sys.stderr,
    )
    for noisy in ("kafka", "py4j", "great_expectations"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # kafka-python 3 warns whenever one of its own I/O tasks held its event loop over 100 ms; in a process whose
    # other threads hold the GIL meanwhile (the demo's job driver, dashboard and fleet) that is routine, not news.
    logging.getLogger("kafka.net.selector").setLevel(logging.ERROR)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:  # said by the command's parser, whose --help lists the flags it does take
        said_by: _Parser = getattr(args, "command_parser", parser)
        said_by._secrets = _secret_values(sys.argv[1:] if argv is None else list(argv))
        said_by.error(f"unrecognized arguments: {' '.join(extras)}")
    handler: Callable[[Settings, argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        settings = Settings.load(args)
        _configure_logging(settings.log_level)
        return handler(settings, args)
    except UsageError as exc:
        print(f"configwatch {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except ConfigwatchError as exc:
        print(f"configwatch {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""Write the librdkafka key sets, ``udfs/rules/data/librdkafka-<line>.json``, from each release's CONFIGURATION.md.

librdkafka documents every configuration property of a release in the
``CONFIGURATION.md`` of its source tree: one table of global and one of topic
properties, with the role (``C``/``P``/``*``), default, type and whether it is
deprecated or an alias. For each release line in ``LINES`` (1.4, the first to send
KIP-511's software name and version, to the newest) this reads that file at the
line's latest release tag from a librdkafka git clone (``--repo``; the releases are
not on a package registry) and writes one key set per line. The admin role gets the
``*`` properties. ``--check`` compares with the checked-in files without writing;
``--patches`` reports properties that differ between a line's first and latest
release.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from udfs.rules.keyset_files import role_differences, write

__all__ = ["FAMILY", "LINES", "document", "main", "parse"]

log = logging.getLogger(__name__)

FAMILY: Final = "librdkafka"
# Release line -> its latest release tag (checked 2026-12-07; librdkafka has no 2.9 release). 1.5.2 changed
# two producer defaults within its line (retries 2 -> 2147483647, request.timeout.ms 5000 -> 30000), so 1.5.0
# and 1.5.1 have a key set of their own.
LINES: Final[dict[str, str]] = {
    "1.4": "v1.4.4", "1.5": "v1.5.0", "1.5.2": "v1.5.3", "1.6": "v1.6.2", "1.7": "v1.7.0", "1.8": "v1.8.2",
    "1.9": "v1.9.2", "2.0": "v2.0.2", "2.1": "v2.1.1", "2.2": "v2.2.0", "2.3": "v2.3.0", "2.4": "v2.4.0",
    "2.5": "v2.5.3", "2.6": "v2.6.1", "2.7": "v2.7.0", "2.8": "v2.8.0", "2.10": "v2.10.1", "2.11": "v2.11.1",
    "2.12": "v2.12.1", "2.13": "v2.13.2", "2.14": "v2.14.2", "2.15": "v2.15.0",
}
# CONFIGURATION.md's value types -> ConfigDef type names.
TYPES: Final = {"integer": "INT", "string": "STRING", "enum value": "STRING", "boolean": "BOOLEAN", "float": "DOUBLE",
                "CSV flags": "LIST", "pattern list": "LIST", "see dedicated API": "UNKNOWN"}
ROLES: Final = {"*": ("producer", "consumer", "admin"), "P": ("producer",), "C": ("consumer",)}
# A librdkafka key that carries the value of a Java key of another name (read by the anomaly rules).
JAVA_EQUIVALENTS: Final = {"fetch.max.wait.ms": "fetch.wait.max.ms", "max.request.size": "message.max.bytes"}
_ROW: Final = re.compile(r"^([a-z][\w.]*)\s*\|\s*([*CP])\s*\|(.*?)\|\s*(.*?)\s*\|\s*(low|medium|high)\s*\|(.*)$")
_TYPE: Final = re.compile(r"\*Type: ([^*]+)\*\s*$")
_PIPE: Final = "\x00"
_ALIAS: Final = re.compile(r"^(?:\*\*DEPRECATED\*\* )?Alias for `([^`]+)`")


def parse(markdown: str) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Role -> key -> {type, default[, deprecated]}, and alias -> the property it names, from CONFIGURATION.md."""
    roles: dict[str, dict[str, Any]] = {role: {} for role in ROLES["*"]}
    aliases: dict[str, str] = {}
    own: set[str] = set()
    for line in markdown.splitlines():
        row = _ROW.match(line.replace(r"\|", _PIPE))  # a pipe inside a cell is escaped
        if row is None:
            continue
        key, where, _range, default, _importance, description = (cell.replace(_PIPE, "|") for cell in row.groups())
        kind = _TYPE.search(description)
        if kind is None or kind.group(1) not in TYPES:
            raise ValueError(f"CONFIGURATION.md: property {key} has no known type: {description[-60:]!r}")
        spec: dict[str, Any] = {"type": TYPES[kind.group(1)], "default": default or None}
        if "**DEPRECATED**" in description:
            spec["deprecated"] = True
        alias = _ALIAS.match(description.strip())
        if alias:
            aliases.setdefault(key, alias.group(1))
        else:
            own.add(key)
        for role in ROLES[where]:
            roles[role].setdefault(key, spec)  # a global property wins over a topic property of the same name
    # A name that is a property of its own in one table (the consumer's global enable.auto.commit) is no alias.
    return roles, {alias: target for alias, target in sorted(aliases.items()) if alias not in own}


def document(line: str, tag: str, markdown: str) -> dict[str, Any]:
    roles, aliases = parse(markdown)
    version = tag.removeprefix("v")
    for keys in roles.values():
        keys.setdefault("client.software.name", {"type": "STRING", "default": FAMILY})
        keys.setdefault("client.software.version", {"type": "STRING", "default": version})
    return {
        "family": FAMILY, "version": version,
        "source": (f"librdkafka {tag} (for versions from {line}): CONFIGURATION.md, global and topic "
                   "properties (the C/P column gives the role; admin clients take the * ones), plus the hidden "
                   "client.software.name/version of src/rdkafka_conf.c. Types: integer=INT, string and enum=STRING, "
                   "boolean=BOOLEAN, float=DOUBLE, CSV flags and pattern list=LIST, 'see dedicated API'=UNKNOWN. "
                   "Written by python -m udfs.rules.generate_rdkafka_keysets."),
        "aliases": aliases,
        "java_equivalents": JAVA_EQUIVALENTS,
        "roles": {role: {"keys": dict(sorted(keys.items()))} for role, keys in roles.items()},
    }


def _read(repo: Path, tag: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(repo), "show", f"{tag}:CONFIGURATION.md"], check=True,
                              capture_output=True, text=True).stdout
    except subprocess.CalledProcessError as exc:
        raise ValueError(f"cannot read CONFIGURATION.md at {tag} in {repo}: {exc.stderr.strip()}") from None


def patch_differences(repo: Path) -> dict[str, Any]:
    """Per line: the properties whose presence, type or default differ between its first and latest release."""
    out: dict[str, Any] = {}
    for line, tag in LINES.items():
        first = f"v{line}.0" if line.count(".") == 1 else f"v{line}"
        if first == tag:
            continue
        out[line] = role_differences(parse(_read(repo, first))[0], parse(_read(repo, tag))[0])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m udfs.rules.generate_rdkafka_keysets",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="a git clone of confluentinc/librdkafka with tags")
    parser.add_argument("--check", action="store_true", help="compare with the checked-in files, write nothing")
    parser.add_argument("--patches", action="store_true", help="report properties that differ within a line")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        if args.patches:
            print(json.dumps(patch_differences(args.repo), indent=1))
            return 0
        documents = {line: document(line, tag, _read(args.repo, tag)) for line, tag in LINES.items()}
    except ValueError as exc:
        print(f"configwatch: {exc}", file=sys.stderr)
        return 2
    return write(FAMILY, documents, args.check, "CONFIGURATION.md")


if __name__ == "__main__":
    sys.exit(main())

"""Write the Java client key sets, ``udfs/rules/data/apache-kafka-java-<line>.json``, from the real jars.

For each Apache Kafka release line in ``LINES`` (0.10.2 to the newest on Maven Central)
the kafka-streams jar of the line's latest patch and its kafka-clients are resolved by
Maven (``configwatch.jars``), and ``scripts/jvm/ConfigDefProbe.java`` (a development
tool outside the packages, compiled once with javac) prints the full ConfigDef of the
producer, consumer, admin client and Streams: every key, internal and deprecated ones
included, with its type and default. The line's file holds them; ``families.json``
gets one key set per line (a client's version picks the nearest line at or below it).
``--check`` compares with the checked-in files without writing (exit 1 when they
differ); ``--patches`` also probes each line's first patch and reports keys that differ
within a line.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from configwatch import jars
from configwatch.errors import SetupError
from udfs.rules.keyset_files import role_differences, write

__all__ = ["FAMILY", "LINES", "PROBE", "generate", "main"]

log = logging.getLogger(__name__)

FAMILY = "apache-kafka-java"
# Release line -> its latest patch on Maven Central (checked 2026-12-07).
LINES: dict[str, str] = {
    "0.10.2": "0.10.2.2", "0.11.0": "0.11.0.3", "1.0": "1.0.2", "1.1": "1.1.1",
    "2.0": "2.0.1", "2.1": "2.1.1", "2.2": "2.2.2", "2.3": "2.3.1", "2.4": "2.4.1", "2.5": "2.5.1",
    "2.6": "2.6.3", "2.7": "2.7.2", "2.8": "2.8.2", "3.0": "3.0.2", "3.1": "3.1.2", "3.2": "3.2.3",
    "3.3": "3.3.2", "3.4": "3.4.1", "3.5": "3.5.2", "3.6": "3.6.2", "3.7": "3.7.2", "3.8": "3.8.1",
    "3.9": "3.9.2", "4.0": "4.0.2", "4.1": "4.1.2", "4.2": "4.2.2", "4.3": "4.3.2", "4.4": "4.4.0",
}
PROBE = Path(__file__).resolve().parents[2] / "scripts" / "jvm" / "ConfigDefProbe.java"
# StreamsConfig's prefix constants -> the role whose keys follow the prefix ("*": any key is the client's own).
_PREFIX_ROLES = {"PRODUCER_PREFIX": "producer", "CONSUMER_PREFIX": "consumer", "MAIN_CONSUMER_PREFIX": "consumer",
                 "RESTORE_CONSUMER_PREFIX": "consumer", "GLOBAL_CONSUMER_PREFIX": "consumer",
                 "ADMIN_CLIENT_PREFIX": "admin", "TOPIC_PREFIX": "*", "CLIENT_TAG_PREFIX": "*"}


def _classpath(paths: Sequence[Path]) -> str:
    return ":".join(str(p) for p in paths)


def _compile(out: Path) -> None:
    if shutil.which("javac") is None:
        raise SetupError("javac is needed to build the probe (OpenJDK 17; scripts/system-deps.sh installs it)")
    oldest = next(iter(LINES.values()))
    subprocess.run(["javac", "-d", str(out), "-cp", _classpath(jars.resolve("streams", oldest)), str(PROBE)],
                   check=True, capture_output=True, text=True)


def probe(classes: Path, release: str) -> dict[str, Any]:
    """What ``ConfigDefProbe`` prints for the kafka-streams and kafka-clients jars of ``release``."""
    classpath = _classpath([classes, *jars.resolve("streams", release)])
    proc = subprocess.run(["java", "-cp", classpath, "ConfigDefProbe"], capture_output=True, text=True,
                          check=True, timeout=120)
    facts: dict[str, Any] = json.loads(proc.stdout)
    if facts["version"] != release:
        raise SetupError(f"the probe ran kafka-clients {facts['version']}, expected {release}")
    return facts


def _document(line: str, facts: dict[str, Any]) -> dict[str, Any]:
    release = facts["version"]
    roles: dict[str, Any] = {role: {"keys": keys} for role, keys in facts["roles"].items()}
    roles["streams"]["client_prefixes"] = {
        prefix: _PREFIX_ROLES[name] for name, prefix in sorted(facts["streams_prefixes"].items(), key=lambda kv: kv[1])
        if name in _PREFIX_ROLES}
    return {
        "family": FAMILY, "version": release,
        "source": (f"Apache Kafka {release} (the {line} line's latest patch): the ConfigDef of ProducerConfig, "
                   "ConsumerConfig, AdminClientConfig and StreamsConfig, internal and deprecated keys included, "
                   f"read from org.apache.kafka:kafka-clients:{release} and kafka-streams:{release} by "
                   "scripts/jvm/ConfigDefProbe.java. Written by python -m udfs.rules.generate_keysets."),
        "roles": roles,
    }


def generate() -> dict[str, dict[str, Any]]:
    """Release line -> document, for every line in ``LINES``."""
    out: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="configdef-probe-") as tmp:
        classes = Path(tmp)
        _compile(classes)
        for line, release in LINES.items():
            log.info("probing kafka-clients and kafka-streams %s (line %s)", release, line)
            out[line] = _document(line, probe(classes, release))
    return out


def patch_differences(first_patch: str = "0") -> dict[str, Any]:
    """Per line: the keys whose presence, type or default differ between its ``.0`` release and its latest patch."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="configdef-probe-") as tmp:
        classes = Path(tmp)
        _compile(classes)
        for line, release in LINES.items():
            first = f"{line}.{first_patch}"
            if first == release:
                continue
            out[line] = role_differences(probe(classes, first)["roles"], probe(classes, release)["roles"])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m udfs.rules.generate_keysets",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the checked-in files, write nothing")
    parser.add_argument("--patches", action="store_true", help="report keys that differ within a release line")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        if args.patches:
            print(json.dumps(patch_differences(), indent=1))
            return 0
        documents = generate()
    except (SetupError, subprocess.CalledProcessError) as exc:
        print(f"configwatch: {exc}", file=sys.stderr)
        return 2
    return write(FAMILY, documents, args.check, "the jars")


if __name__ == "__main__":
    sys.exit(main())

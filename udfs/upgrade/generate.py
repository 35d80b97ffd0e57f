"""Write ``udfs/upgrade/data/broker_api_versions.json`` from the real kafka-clients jars of each release.

For each release in ``RELEASES`` the jars are resolved by Maven (``configwatch.jars``)
and ``scripts/jvm/BrokerApiVersionsProbe.java`` (a development tool, outside the packages), compiled once
with javac, prints what that
release's ``ApiKeys`` say a KRaft broker serves: per API key of the BROKER listener,
the oldest version and the newest stable one (the message definitions'
``validVersions``; unstable last versions are off on a default broker), and the
deprecated range. Run ``python -m udfs.upgrade.generate`` to rewrite the file,
``--check`` to compare without writing (exit 1 when it differs).
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

__all__ = ["DATA", "PROBE", "RELEASES", "generate", "main", "render"]

log = logging.getLogger(__name__)

# Broker release (major.minor) -> the kafka-clients release whose message definitions it is read from.
RELEASES: dict[str, str] = {"3.9": "3.9.0", "4.0": "4.0.0", "4.1": "4.1.0", "4.2": "4.2.0", "4.3": "4.3.1"}
PROBE = Path(__file__).resolve().parents[2] / "scripts" / "jvm" / "BrokerApiVersionsProbe.java"
DATA = Path(__file__).resolve().parent / "data" / "broker_api_versions.json"
ABOUT = ("Request versions an Apache Kafka broker (KRaft) serves to clients, per release and API key: min is the "
         "oldest version the broker accepts, max the newest stable one; a request below min is refused (the broker "
         "closes the connection), a client newer than max negotiates down through ApiVersions. deprecated is the "
         "range the release's message definitions mark deprecated (KIP-896: counted in the broker's "
         "DeprecatedRequestsPerSec); a later major may remove some of it. Written by python -m "
         "udfs.upgrade.generate.")


def _classpath(paths: Sequence[Path]) -> str:
    return ":".join(str(p) for p in paths)


def _compile(out: Path) -> None:
    if shutil.which("javac") is None:
        raise SetupError("javac is needed to build the probe (OpenJDK 17; scripts/system-deps.sh installs it)")
    oldest = min(RELEASES.values(), key=lambda v: tuple(int(p) for p in v.split(".")))
    subprocess.run(["javac", "-d", str(out), "-cp", _classpath(jars.client_jars(oldest)), str(PROBE)],
                   check=True, capture_output=True, text=True)


def _probe(classes: Path, kafka_clients: str) -> dict[str, Any]:
    classpath = _classpath([classes, *jars.client_jars(kafka_clients)])
    proc = subprocess.run(["java", "-cp", classpath, "BrokerApiVersionsProbe"], capture_output=True, text=True,
                          check=True, timeout=120)
    facts: dict[str, Any] = json.loads(proc.stdout)
    if facts["version"] != kafka_clients:
        raise SetupError(f"the probe ran kafka-clients {facts['version']}, expected {kafka_clients}")
    return facts


def generate() -> dict[str, Any]:
    """The data document, from the real jars of every release in ``RELEASES``."""
    releases: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="broker-api-probe-") as tmp:
        classes = Path(tmp)
        _compile(classes)
        for release, kafka_clients in RELEASES.items():
            log.info("probing kafka-clients %s for broker %s", kafka_clients, release)
            facts = _probe(classes, kafka_clients)
            releases[release] = {
                "kafka_clients": kafka_clients,
                "source": (f"org.apache.kafka:kafka-clients:{kafka_clients} ApiKeys.apisForListener(BROKER): "
                           "oldestVersion(), latestVersion(false), the message type's deprecated versions"),
                "apis": facts["apis"],
            }
    return {"about": ABOUT, "releases": releases}


def render(document: dict[str, Any]) -> str:
    """The file's text: one line per API, so a diff between releases reads line by line."""
    lines = ["{", f'  "about": {json.dumps(document["about"])},', '  "releases": {']
    releases = list(document["releases"].items())
    for i, (release, data) in enumerate(releases):
        lines += [f"    {json.dumps(release)}: {{",
                  f'      "kafka_clients": {json.dumps(data["kafka_clients"])},',
                  f'      "source": {json.dumps(data["source"])},',
                  '      "apis": {']
        apis = sorted(data["apis"].items(), key=lambda kv: int(kv[0]))
        lines += [f"        {json.dumps(key)}: {json.dumps(api, separators=(', ', ': '))}"
                  + ("," if j < len(apis) - 1 else "") for j, (key, api) in enumerate(apis)]
        lines += ["      }", "    }" + ("," if i < len(releases) - 1 else "")]
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m udfs.upgrade.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the checked-in file, write nothing")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        text = render(generate())
    except (SetupError, subprocess.CalledProcessError) as exc:
        print(f"configwatch: {exc}", file=sys.stderr)
        return 2
    if args.check:
        same = DATA.exists() and DATA.read_text() == text
        print(f"{DATA} is {'up to date' if same else 'out of date'}")
        return 0 if same else 1
    DATA.write_text(text)
    print(f"wrote {DATA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

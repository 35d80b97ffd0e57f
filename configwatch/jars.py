"""configwatch's JVM parts in a cache directory: pinned jars resolved with Maven (nothing is compiled).

The manifest is ``streaming/jvm/pom.xml``. Three jar sets, one Maven profile each:

- ``connector``: Spark's Kafka connector at exactly the installed PySpark's version;
- ``broker``: the Apache Kafka broker the project runs locally in KRaft mode;
- ``clients``: one kafka-clients release alone (the real Java client of the tests).

Each set lands in ``<cache>/jars/<set>-<version>/`` and is written atomically,
so a second resolve finds it complete and does nothing.

Run ``python -m configwatch.jars`` to resolve the connector and the broker (the Makefile does).
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from importlib.metadata import version as dist_version
from pathlib import Path

from configwatch.errors import SetupError
from configwatch.paths import cache_dir

__all__ = ["POM", "broker_jars", "client_jars", "connector_jars", "kafka_version", "resolve", "spark_version"]

log = logging.getLogger(__name__)

POM = Path(__file__).resolve().parent.parent / "streaming" / "jvm" / "pom.xml"
_MARKER = ".complete"
_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def spark_version() -> str:
    """The installed PySpark's version; the connector must match it exactly."""
    return dist_version("pyspark")


def kafka_version() -> str:
    """The broker version pinned in the manifest."""
    node = ET.parse(POM).getroot().find("m:properties/m:kafka.version", _NS)
    if node is None or not node.text:
        raise SetupError(f"{POM} has no <kafka.version> property")
    return node.text.strip()


def _set_dir(name: str, version: str) -> Path:
    return cache_dir() / "jars" / f"{name}-{version}"


def _jars_in(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.jar"))


def resolve(name: str, version: str) -> list[Path]:
    """Resolve one jar set (``connector``, ``broker``, ``clients`` or ``streams``) and return its jars."""
    target = _set_dir(name, version)
    if (target / _MARKER).exists():
        return _jars_in(target)
    mvn = shutil.which("mvn")
    if mvn is None:
        raise SetupError("Maven ('mvn') is not on PATH; install Maven 3.8+ to fetch the Kafka/Spark jars")
    prop = {"connector": "spark.version", "broker": "kafka.version", "clients": "clients.version",
            "streams": "clients.version"}[name]
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    cmd = [
        mvn, "-q", "-B", "-f", str(POM), "-P", name,
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={staging}",
        f"-D{prop}={version}",
    ]
    log.info("resolving %s jars %s with Maven", name, version)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not _jars_in(staging):
        shutil.rmtree(staging, ignore_errors=True)
        errors = [ln for ln in proc.stdout.splitlines() if "ERROR" in ln][:3]
        raise SetupError(f"Maven could not resolve the {name} jars {version}: " + " | ".join(errors))
    (staging / _MARKER).write_text(f"{name} {version}\n")
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    return _jars_in(target)


def connector_jars() -> list[Path]:
    """Spark Kafka connector jars for the installed PySpark (resolved on first use)."""
    return resolve("connector", spark_version())


def broker_jars() -> list[Path]:
    """Kafka broker jars (resolved on first use)."""
    return resolve("broker", kafka_version())


def client_jars(version: str) -> list[Path]:
    """kafka-clients ``version`` alone, with a silent logger (resolved on first use)."""
    return resolve("clients", version)


def main() -> int:
    try:
        for name, jars in (("connector", connector_jars()), ("broker", broker_jars())):
            print(f"{name}: {len(jars)} jars in {jars[0].parent}")
    except SetupError as exc:
        print(f"configwatch: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Release defaults and idempotence behaviour, checked against the real clients.

``udfs/rules/data/defaults.json`` records, per release, the Java producer's and
consumer's defaults and when default idempotence gives way. These tests ask the
real kafka-clients jars (resolved by Maven, one release at a time) what their
ConfigDefs say and whether a producer built from a configuration is idempotent,
and ask the installed kafka-python for its DEFAULT_CONFIG; then they check the
idempotence rule fires exactly where the real client turns its default off.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from configwatch import jars
from tests.rules_helpers import entry, findings, push
from udfs.rules.defaults import band, defaults_at

JAVA_RELEASES = ("2.0.1", "2.1.1", "2.8.2", "3.0.0", "3.0.2", "3.1.0", "3.1.1", "3.9.0", "4.0.0", "4.3.1")
CONFLICTS = ("acks=1", "acks=0", "retries=0", "max.in.flight.requests.per.connection=10")
PROBE = Path(__file__).parent / "jvm" / "ClientDefaultsProbe.java"


@pytest.fixture(scope="module")
def probe_classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("javac") is None:
        pytest.fail("javac is needed (OpenJDK 17, scripts/system-deps.sh installs it)")
    out = tmp_path_factory.mktemp("probe")
    classpath = ":".join(str(p) for p in jars.client_jars(JAVA_RELEASES[-1]))
    subprocess.run(["javac", "-d", str(out), "-cp", classpath, str(PROBE)], check=True, capture_output=True)
    return out


def _probe(classes: Path, release: str) -> dict[str, Any]:
    classpath = ":".join([str(classes), *(str(p) for p in jars.client_jars(release))])
    proc = subprocess.run(["java", "-cp", classpath, "ClientDefaultsProbe", "", *CONFLICTS],
                          capture_output=True, text=True, check=True, timeout=120)
    facts: dict[str, Any] = json.loads(proc.stdout)
    assert facts["version"] == release
    return facts


@pytest.mark.parametrize("release", JAVA_RELEASES)
def test_java_defaults_and_idempotence_match_the_real_client(probe_classes: Path, release: str) -> None:
    facts = _probe(probe_classes, release)
    for role in ("producer", "consumer"):
        recorded = defaults_at("apache-kafka-java", role, release)
        assert recorded, role
        for key, value in recorded.items():
            real = facts[role].get(key)
            assert (None if real in (None, "null") else str(real)) == value, (release, role, key)

    default_on = facts["idempotence"][""] == "on"
    for conflict in CONFLICTS:
        outcome = facts["idempotence"][conflict]
        if outcome == "error":
            continue  # the producer refuses this configuration: it never runs, so it never pushes
        key, value = conflict.split("=")
        pushed = push([entry(key, value, "INT" if key != "acks" else "STRING"),
                       entry("key.serializer", "org.apache.kafka.common.serialization.StringSerializer", "CLASS")],
                      ("apache-kafka-java", release))
        fired = "idempotence-implicitly-disabled" in {f["rule"] for f in findings(pushed)}
        assert fired == (default_on and outcome == "off"), (release, conflict, facts["idempotence"])


def test_kafka_python_defaults_match_the_installed_package() -> None:
    import kafka
    from kafka import KafkaProducer

    recorded = defaults_at("kafka-python", "producer", kafka.__version__)
    assert recorded
    for key, value in recorded.items():
        real = KafkaProducer.DEFAULT_CONFIG[key]
        text = str(real).lower() if isinstance(real, bool) else str(real)
        assert text == value, key


def test_bands_split_releases_where_a_default_or_behaviour_changes() -> None:
    assert band("apache-kafka-java", "0.10.0.1") == "0"
    assert band("apache-kafka-java", "2.0.1") == "0.10.1"  # KIP-62: max.poll.records 500, session.timeout.ms 10 s
    assert band("apache-kafka-java", "2.8.2") == "2.7"  # Streams stopped overriding retries
    assert band("apache-kafka-java", "3.0.0") == "3.0"
    assert band("apache-kafka-java", "3.0.2") == "3.0.1"
    assert band("apache-kafka-java", "3.9.0") == band("apache-kafka-java", "3.8.1")
    assert band("apache-kafka-java", "not-a-version") == band("apache-kafka-java", "99.0")


def test_streams_3x_with_no_producer_settings_is_clean() -> None:
    """Kafka Streams' own retries (0 in its ConfigDef) is not its producer's: no idempotence finding."""
    streams = push([entry("application.id", "inventory-join-app"),
                    entry("default.key.serde", "org.apache.kafka.common.serialization.Serdes$StringSerde", "CLASS"),
                    entry("retries", "0", "INT", default=True)], ("apache-kafka-java", "3.9.0"))
    assert not [f for f in findings(streams) if f["rule"].startswith("idempotence")]

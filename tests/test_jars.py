"""The JVM manifest: the connector matches PySpark, and a second resolve is a no-op."""

from __future__ import annotations

import pytest

from configwatch import jars


def test_connector_version_is_the_installed_pyspark() -> None:
    import pyspark

    found = jars.connector_jars()
    assert any(p.name == f"spark-sql-kafka-0-10_2.13-{pyspark.__version__}.jar" for p in found)
    assert any(p.name.startswith("spark-token-provider-kafka-0-10_2.13-") for p in found)


def test_broker_set_holds_kafka_4() -> None:
    version = jars.kafka_version()
    assert version.startswith("4.")
    assert any(p.name == f"kafka_2.13-{version}.jar" for p in jars.broker_jars())


def test_second_resolve_does_not_call_maven(monkeypatch: pytest.MonkeyPatch) -> None:
    first = jars.broker_jars()
    monkeypatch.setattr(jars.shutil, "which", lambda _name: None)  # Maven "gone"
    assert jars.broker_jars() == first

"""The broker release data against the real jars: regenerating it from kafka-clients gives the checked-in file.

``udfs/upgrade/generate.py`` resolves each release's kafka-clients from Maven
(``configwatch.jars``), compiles the probe with javac and asks each release's
``ApiKeys`` what a broker serves. Like ``tests/test_rules_defaults.py`` it needs
javac and Maven (or the jar cache), not Kafka.
"""

from __future__ import annotations

import json

from udfs.upgrade import generate
from udfs.upgrade.releases import broker_releases


def test_the_checked_in_data_is_what_the_real_jars_say() -> None:
    assert generate.DATA.read_text() == generate.render(generate.generate()), (
        "regenerate with: python -m udfs.upgrade.generate")


def test_the_data_covers_every_release_the_generator_names_with_sane_ranges() -> None:
    document = json.loads(generate.DATA.read_text())
    assert tuple(document["releases"]) == tuple(generate.RELEASES) == broker_releases()
    for release, data in document["releases"].items():
        assert data["kafka_clients"] == generate.RELEASES[release]
        assert data["kafka_clients"] in data["source"]
        assert {"0", "1", "3", "18"} <= set(data["apis"]), release  # Produce, Fetch, Metadata, ApiVersions
        for api in data["apis"].values():
            assert 0 <= api["min"] <= api["max"], (release, api)
            if "deprecated" in api:
                low, high = api["deprecated"]
                assert api["min"] <= low <= high <= api["max"], (release, api)

"""The real-world evaluation set: its conversion to pushes, and the figures detection holds on it."""

from __future__ import annotations

from tests.eval.realworld import DUMPS, Dump, Label, load, to_push
from tests.eval.realworld.score import format_realworld, score
from udfs.rules.catalog import CATALOG

SAMPLE = Dump(
    id="sample", source="https://example.invalid/sample", client="producer", release="2.0.0",
    lines=(("acks", "all"), ("retries", "0"), ("bootstrap.servers", "[b1:9092, b2:9092]"),
           ("key.serializer", "class org.apache.kafka.common.serialization.StringSerializer"),
           ("transactional.id", "null"), ("ssl.endpoint.identification.algorithm", ""), ("batch.size", "16384"),
           ("sasl.jaas.config", "[hidden]"), ("interceptor.classes", "[]"), ("metric.reporters", "[]"),
           ("client.id", "")),
    labels=(Label(("acks", "retries"), "acks=all with retries=0"),))


def test_every_dump_names_its_source_release_and_client() -> None:
    dumps = load()
    assert len(dumps) >= 30 and len({d.id for d in dumps}) == len(dumps)
    assert {d.client for d in dumps} == {"producer", "consumer", "admin", "streams"}
    for d in dumps:
        assert d.source.startswith("https://") and d.release and len(d.lines) >= 30, d.id
        assert all(set(label.keys) and label.problem for label in d.labels), d.id
    assert DUMPS.is_dir()


def test_a_dump_becomes_the_push_a_kip_client_of_its_release_sends() -> None:
    push = to_push(SAMPLE)
    entries = {e["key"]: e for e in push.entries}
    assert entries["acks"] == {"key": "acks", "value": "all", "type": "STRING", "is_default": False}  # 1 in 2.0
    assert entries["retries"]["is_default"] and entries["retries"]["type"] == "INT"  # 0 is 2.0's default
    assert entries["bootstrap.servers"]["value"] == "b1:9092,b2:9092" and not entries["bootstrap.servers"]["is_default"]
    assert entries["transactional.id"]["value"] is None and entries["transactional.id"]["is_default"]
    assert entries["metric.reporters"]["value"] == "" and entries["metric.reporters"]["is_default"]
    assert entries["batch.size"]["is_default"] and entries["client.id"]["value"] == ""
    # What the KIP's client withholds by itself: CLASS and PASSWORD types, ssl./sasl. keys, .classes keys.
    assert push.withheld == {"key.serializer", "ssl.endpoint.identification.algorithm", "sasl.jaas.config",
                             "interceptor.classes"}


def test_the_figures_hold_on_the_real_world_set() -> None:
    report = score()
    text = format_realworld(report)
    assert report.custom_keys == [], text  # no key the client's own release defines is called custom
    assert report.rules and all(report.precision(rule) >= 0.9 for rule in report.rules), text
    assert report.recall is not None and report.recall >= 0.9, text
    assert len(report.found) >= 9, text  # the set's labelled, visible misconfigurations
    known = {r.id for r in CATALOG}
    assert set(report.rules) <= known

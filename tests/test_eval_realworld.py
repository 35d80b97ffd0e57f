"""The real-world evaluation set: its conversion to pushes, and the figures detection holds on it."""

from __future__ import annotations

from tests.eval.realworld import DUMPS, Dump, Label, load, rdkafka, to_push
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
    assert push.client_id == "sample"  # an empty client.id: the dump's id stands in
    named = to_push(Dump("named", "https://example.invalid/n", "producer", "3.7.0", (("client.id", "orders-1"),), ()))
    assert named.client_id == "orders-1"  # the id the client reports on its connection


def test_a_streams_client_judges_is_default_by_its_streams_config() -> None:
    streams = Dump(id="streams", source="https://example.invalid/s", client="streams", release="3.4.1",
                   lines=(("application.id", "orders"), ("retries", "0"), ("replication.factor", "-1")), labels=())
    entries = {e["key"]: e for e in to_push(streams).entries}
    # StreamsConfig's retries defaults to 0 (its producer keeps ProducerConfig's Integer.MAX_VALUE).
    assert entries["retries"]["is_default"] and entries["replication.factor"]["is_default"]
    assert not entries["application.id"]["is_default"]


def test_a_key_the_client_changed_itself_is_pushed_as_a_default() -> None:
    lines = (("acks", "1"), ("enable.idempotence", "false"))
    changed = Dump(id="acks1", source="https://example.invalid/a", client="producer", release="3.8.1", lines=lines,
                   labels=(), unset_by_user=frozenset({"enable.idempotence"}))
    entries = {e["key"]: e for e in to_push(changed).entries}
    assert entries["enable.idempotence"] == {"key": "enable.idempotence", "value": "false", "type": "BOOLEAN",
                                             "is_default": True}
    plain = {e["key"]: e for e in to_push(Dump("set", "https://example.invalid/b", "producer", "3.8.1", lines,
                                               ())).entries}
    assert not plain["enable.idempotence"]["is_default"]  # without the source's evidence: the user set it


APP = rdkafka.RdkafkaConfig(
    id="app", source="https://example.invalid/app.py", client="producer", software_name="confluent-kafka-python",
    release="2.3.0", labels=(Label(("linger.ms",), "x"),),
    config=(("bootstrap.servers", "<runtime: os.environ['BROKERS']>"), ("linger.ms", 5), ("acks", "all"),
            ("enable.idempotence", True), ("sasl.password", "<literal secret>"), ("error_cb", "<callable>"),
            ("message.timeout.ms", 300000)))


def test_every_librdkafka_configuration_names_its_source_version_and_client() -> None:
    configs = rdkafka.load()
    assert len(configs) >= 10 and len({c.id for c in configs}) == len(configs)
    for c in configs:
        assert c.source.startswith("https://github.com/") and c.client in ("producer", "consumer", "admin"), c.id
        assert c.software_name in ("confluent-kafka-python", "confluent-kafka-go") and c.config, c.id
        assert all(set(label.keys) and label.problem for label in c.labels), c.id


def test_an_application_configuration_becomes_the_push_its_librdkafka_sends() -> None:
    push = rdkafka.to_push(APP)
    entries = {e["key"]: e for e in push.entries}
    assert push.software_version == "2.3.0-rdkafka-2.3.0" and push.client_id == "rdkafka"
    # Aliases are pushed as the property they set; every key the application set is not a default.
    assert entries["queue.buffering.max.ms"] == {"key": "queue.buffering.max.ms", "value": "5", "type": "DOUBLE",
                                                 "is_default": False}
    assert entries["request.required.acks"]["value"] == "all" and "acks" not in entries
    assert entries["enable.idempotence"]["value"] == "true"
    assert not entries["message.timeout.ms"]["is_default"]  # set to its default: librdkafka knows it was set
    # A value computed at run time: sent, but unknown. The role's other properties at their defaults.
    assert entries["metadata.broker.list"]["value"] is None and not entries["metadata.broker.list"]["is_default"]
    assert entries["batch.num.messages"] == {"key": "batch.num.messages", "value": "10000", "type": "INT",
                                             "is_default": True}
    assert "error_cb" not in entries and "sasl.password" in push.withheld and "security.protocol" in push.withheld
    assert not any(k.startswith(("ssl.", "sasl.")) for k in entries)
    assert push.pushed_as(["linger.ms", "delivery.timeout.ms"]) == {"queue.buffering.max.ms", "message.timeout.ms"}


def test_a_key_librdkafka_refuses_means_no_push() -> None:
    typo = rdkafka.RdkafkaConfig(id="typo", source="https://example.invalid/t.go", client="producer",
                                 software_name="confluent-kafka-go", release="1.8.2", labels=(),
                                 config=(("bootstrap.servers", "b:9092"), ("topic", "orders"),
                                         ("go.delivery.reports", False)))
    assert rdkafka.rejected(typo) == ("topic",)  # go.* keys are the binding's own
    assert rdkafka.rejected(APP) == ()
    assert "typo" in score([typo]).excluded


def test_serializers_reach_librdkafka_only_through_a_plain_class() -> None:
    config = (("bootstrap.servers", "b:9092"), ("value.serializer", "<callable>"))
    serializing = rdkafka.RdkafkaConfig(id="s", source="https://example.invalid/s.py", client="producer",
                                        software_name="confluent-kafka-python", release="2.1.1", labels=(),
                                        config=config, binding_class="SerializingProducer")
    plain = rdkafka.RdkafkaConfig(id="p", source="https://example.invalid/p.py", client="producer",
                                  software_name="confluent-kafka-python", release="2.1.1", labels=(),
                                  config=config, binding_class="Producer")
    assert rdkafka.rejected(serializing) == ()  # SerializingProducer takes them out first
    assert rdkafka.rejected(plain) == ("value.serializer",)  # librdkafka refuses them: no client, no push


def test_the_figures_hold_on_the_real_world_set() -> None:
    report = score()
    text = format_realworld(report)
    assert report.custom_keys == [], text  # no key the client's own release defines is called custom
    # Below issue 68's 0.9 (docs/detection.md): 5 of 6 since held-out 9, where Kafka Connect 2.7's offset store
    # producer sets Integer.MAX_VALUE itself under a default client id, which its push cannot tell from an application.
    held = {"delivery-timeout-unbounded": 0.83}
    assert report.rules and all(report.precision(rule) >= held.get(rule, 0.9) for rule in report.rules), text
    # 0.921 (70 of 76); partly in-sample: each blind batch alone is the evidence (docs/detection.md).
    assert report.recall is not None and report.recall >= 0.9, text
    assert len(report.found) >= 70, text  # the set's labelled, visible misconfigurations
    assert {"java: development", "librdkafka: rdkafka 1 2026-12-07"} <= {row[0] for row in report.by_group()}
    known = {r.id for r in CATALOG}
    assert set(report.rules) <= known


def test_a_label_on_a_run_time_value_is_neither_found_nor_missed() -> None:
    """The push would carry the value the application computes; the set records only the expression."""
    app = rdkafka.RdkafkaConfig(
        id="runtime", source="https://example.invalid/r.py", client="producer", software_name="confluent-kafka-python",
        release="2.3.0", labels=(Label(("acks",), "acks from the environment, 1 there"),
                                 Label(("linger.ms",), "a literal value, missed")),
        config=(("bootstrap.servers", "b:9092"), ("acks", "<runtime: os.environ['ACKS']>"), ("linger.ms", 5)))
    assert rdkafka.to_push(app).unknown == {"request.required.acks"}
    report = score([app])
    assert [label.keys for _, label in report.unknown] == [("acks",)]
    assert [label.keys for _, label in report.missed] == [("linger.ms",)] and report.recall == 0.0

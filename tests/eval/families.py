"""Clean pushes per client family and role: documented defaults, then what a well-run application sets.

An :class:`App` is one deployment (several instances with one configuration):
its family, release, role, names and the tunings its team chose. ``base_push``
gives an instance's entries and client id before any fault is planted. Tunings are
drawn per application from values a sizeable share of real fleets use (1 MiB
``receive.buffer.bytes``, 256 KiB ``batch.size``, a 15-minute
``transaction.timeout.ms``, ``-1`` OS-default socket buffers, ...).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from policy.api import ClientConfig
from tests.eval import defaults as d
from tests.eval import tokens
from tests.eval.clients import PushBuilder, Software

__all__ = ["BOOTSTRAPS", "COOP", "RANGE", "STREAMS_ASSIGNOR", "App", "base_push", "client_id", "pick_software",
           "tunings"]

RANGE = "org.apache.kafka.clients.consumer.RangeAssignor"
COOP = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
STREAMS_ASSIGNOR = "org.apache.kafka.streams.processor.internals.StreamsPartitionAssignor"

_JAVA = (("2.8.2", 4), ("3.0.0", 2), ("3.0.2", 2), ("3.1.0", 1), ("3.1.2", 2), ("3.2.3", 3), ("3.3.2", 3),
         ("3.4.1", 4), ("3.5.2", 5), ("3.6.2", 6), ("3.7.2", 7), ("3.8.1", 7), ("3.9.1", 9), ("4.0.0", 5),
         ("4.1.1", 5), ("4.2.0", 3), ("4.3.1", 2))
_RDKAFKA = (("librdkafka", "{v}", 3), ("confluent-kafka-python", "{v}-rdkafka-{v}", 5),
            ("confluent-kafka-go", "v{v}", 2), ("confluent-kafka-dotnet", "{v}", 1))
_RDKAFKA_VERSIONS = ("2.2.0", "2.3.0", "2.4.0", "2.6.1", "2.8.0", "2.10.1", "2.12.0")
_KAFKA_PYTHON = (("2.0.2", 5), ("2.2.15", 2), ("3.0.12", 3))
_SARAMA = ("1.42.2", "1.43.3", "1.45.1", "1.60.1")
_FRANZ = ("v1.17.1", "v1.18.1", "v1.20.3", "v1.21.5")
BOOTSTRAPS = (
    "pkc-4r297.europe-west1.gcp.confluent.cloud:9092",
    "b-1.orders.x7k2lq.c3.kafka.eu-west-1.amazonaws.com:9096,b-2.orders.x7k2lq.c3.kafka.eu-west-1.amazonaws.com:9096",
    "kafka-0.kafka-headless.data.svc.cluster.local:9093,kafka-1.kafka-headless.data.svc.cluster.local:9093",
    "broker1.prod.example.internal:9092,broker2.prod.example.internal:9092,broker3.prod.example.internal:9092",
)


def tunings(rng: random.Random, app: App) -> dict[str, str]:
    """The tunings an application's team chose (Java and librdkafka; the others run on defaults)."""
    if app.family == "java":
        return _java_tunings(rng, app.role)
    if app.family == "librdkafka":
        return _rdkafka_tunings(rng, app.role)
    return {}


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.lstrip("v").split("-")[0].split("."))


def pick_software(rng: random.Random, family: str) -> Software:
    """A release of ``family`` drawn with the weights of a fleet that upgrades slowly."""
    if family == "java":
        v = rng.choices([r for r, _ in _JAVA], [w for _, w in _JAVA])[0]
        return Software("java", "apache-kafka-java", v, _version(v))
    if family == "librdkafka":
        name, form, _ = rng.choices(_RDKAFKA, [w for *_, w in _RDKAFKA])[0]
        v = rng.choice(_RDKAFKA_VERSIONS)
        return Software("librdkafka", name, form.format(v=v), _version(v))
    if family == "kafka-python":
        v = rng.choices([r for r, _ in _KAFKA_PYTHON], [w for _, w in _KAFKA_PYTHON])[0]
        return Software("kafka-python", "kafka-python", v, _version(v))
    if family == "sarama":
        v = rng.choice(_SARAMA)
        return Software("sarama", "sarama", v, _version(v))
    v = rng.choice(_FRANZ)
    return Software("franz-go", rng.choice(("kgo", "franz-go")), v, _version(v))


@dataclass
class App:
    """One deployment: what its instances share."""

    name: str
    family: str
    role: str                       # producer | consumer | admin | streams
    software: Software
    bootstrap: str
    group: str | None = None
    id_style: str = "app"           # app | default | pod | spark | build | host
    streams_id: str = ""            # Kafka Streams process UUID prefix (per instance it changes)
    eos: bool = False
    tunings: dict[str, str] = field(default_factory=dict)
    principal: str = "User:ANONYMOUS"
    secure: bool = True


def _java_tunings(rng: random.Random, role: str) -> dict[str, str]:
    out: dict[str, str] = {}
    if role in ("producer", "streams") and rng.random() < 0.5:
        out["linger.ms"] = rng.choice(("5", "10", "20", "50", "100"))
    if role == "producer":
        if rng.random() < 0.3:
            out["batch.size"] = rng.choice(("65536", "131072", "262144", "262144"))
        if rng.random() < 0.3:
            out["compression.type"] = rng.choice(("lz4", "zstd", "snappy", "gzip"))
        if rng.random() < 0.15:
            out["transaction.timeout.ms"] = "900000"
        if rng.random() < 0.15:
            out["max.request.size"] = rng.choice(("2097152", "5242880", "10485760"))
        if rng.random() < 0.1:
            out["buffer.memory"] = rng.choice(("67108864", "134217728"))
    if role in ("consumer", "streams"):
        if rng.random() < 0.25:
            out["receive.buffer.bytes"] = "1048576"
        if rng.random() < 0.3:
            out["max.poll.records"] = rng.choice(("100", "250", "1000", "2000"))
        if rng.random() < 0.2:
            out["max.poll.interval.ms"] = rng.choice(("600000", "900000", "1800000"))
        if rng.random() < 0.2:
            out["fetch.min.bytes"] = rng.choice(("1024", "65536", "1048576"))
        if rng.random() < 0.2:
            session = rng.choice((30000, 45000, 60000))
            out["session.timeout.ms"] = str(session)
            out["heartbeat.interval.ms"] = str(rng.choice((3000, session // 4, session // 5)))
        if rng.random() < 0.3:
            out["auto.offset.reset"] = "earliest"
        if rng.random() < 0.3:
            out["enable.auto.commit"] = "false"
    if rng.random() < 0.1:
        out["send.buffer.bytes"] = "-1"
    if rng.random() < 0.15:
        out["metadata.max.age.ms"] = rng.choice(("60000", "120000", "600000"))
    return out


def _rdkafka_tunings(rng: random.Random, role: str) -> dict[str, str]:
    out: dict[str, str] = {}
    if role == "producer":
        if rng.random() < 0.4:
            out["linger.ms"] = rng.choice(("5", "10", "50", "100"))
        if rng.random() < 0.3:
            out["compression.type"] = rng.choice(("lz4", "zstd", "snappy"))
        if rng.random() < 0.4:
            out["enable.idempotence"] = "true"
    else:
        if rng.random() < 0.3:
            out["auto.offset.reset"] = "earliest"
        if rng.random() < 0.3:
            out["enable.auto.commit"] = "false"
        if rng.random() < 0.2:
            out["queued.max.messages.kbytes"] = rng.choice(("16384", "131072"))
    if rng.random() < 0.2:
        out["socket.keepalive.enable"] = "true"
    return out


def base_push(rng: random.Random, app: App, n: int, instance: int) -> tuple[PushBuilder, str]:
    """A clean push of instance ``instance`` of ``app`` (client number ``n``) and its client id."""
    sw, role = app.software, app.role
    b = PushBuilder(sw, role)
    cid = client_id(rng, app, n, instance)
    if sw.family == "java":
        if role == "admin":
            b.defaults(d.JAVA_COMMON, d.JAVA_ADMIN)
        elif role == "producer" or (role == "streams" and cid.endswith("-producer")):
            b.defaults(d.JAVA_COMMON, d.JAVA_PRODUCER)
        else:
            b.defaults(d.JAVA_COMMON, d.JAVA_CONSUMER)
        b.set("bootstrap.servers", app.bootstrap, "LIST")
        if app.id_style != "default" or role == "streams":
            b.set("client.id", cid, "STRING")
        if role == "consumer":
            b.set("group.id", app.group or app.name, "STRING")
        if role == "streams":
            _streams(b, app, cid)
        b.update(app.tunings.items())
    elif sw.family == "librdkafka":
        b.defaults(d.RDKAFKA_COMMON, d.RDKAFKA_PRODUCER if role == "producer" else d.RDKAFKA_CONSUMER)
        b.set("bootstrap.servers", app.bootstrap, "STRING").set("client.id", cid, "STRING")
        if role == "consumer":
            b.set("group.id", app.group or app.name, "STRING")
        b.update(app.tunings.items())
    elif sw.family == "kafka-python":
        b.defaults(d.KAFKA_PYTHON_PRODUCER if role == "producer" else d.KAFKA_PYTHON_CONSUMER)
        if sw.release >= (2, 1):
            b.drop("buffer_memory")  # removed from KafkaProducer in 2.1
        if sw.release >= (3, 0) and role == "producer":
            b.entries["acks"] = ClientConfig("acks", "-1", "STRING", True)  # all from 3.0
        b.set("bootstrap_servers", app.bootstrap, "LIST").set("client_id", cid, "STRING")
        if role == "consumer":
            b.set("group_id", app.group or app.name, "STRING")
        if app.secure:
            b.set("security_protocol", "SASL_SSL").set("sasl_mechanism", rng.choice(("PLAIN", "SCRAM-SHA-512")))
            b.set("sasl_plain_username", f"svc-{app.name}")
        b.update(app.tunings.items())
    elif sw.family == "sarama":
        b.defaults(d.SARAMA_COMMON, d.SARAMA_PRODUCER, d.SARAMA_CONSUMER)
        b.set("Addrs", app.bootstrap, "LIST").set("ClientID", cid, "STRING").set("Version", "2.8.0", "STRING")
        b.update(app.tunings.items())
    else:
        b.defaults(d.FRANZ_GO)
        b.set("SeedBrokers", app.bootstrap, "LIST").set("ClientID", cid, "STRING")
        if role == "consumer":
            b.set("ConsumerGroup", app.group or app.name, "STRING").set("ConsumeTopics", f"{app.name}.events", "LIST")
        else:
            b.set("DefaultProduceTopic", f"{app.name}.events", "STRING")
        b.update(app.tunings.items())
    for key in [k for k in b.entries if k.startswith(("sasl.", "ssl.", "security."))]:
        b.drop(key)  # what a KIP-compliant client withholds by itself
    return b, cid


def _streams(b: PushBuilder, app: App, cid: str) -> None:
    """The embedded clients of a Kafka Streams application, with StreamsConfig's overrides."""
    b.set("application.id", app.name, "STRING")
    if cid.endswith("-producer"):
        b.set("linger.ms", "100")
        if app.eos:
            b.set("enable.idempotence", "true").set("acks", "all")
            b.set("transactional.id", cid.removesuffix("-StreamThread-1-producer") + "-1", "STRING")
            b.set("transaction.timeout.ms", "10000").set("delivery.timeout.ms", "2147483647")
    else:
        b.set("group.id", app.name, "STRING")
        b.set("partition.assignment.strategy", STREAMS_ASSIGNOR, "LIST")
        b.set("max.poll.records", "1000").set("auto.offset.reset", "earliest").set("enable.auto.commit", "false")
        if app.eos:
            b.set("isolation.level", "read_committed")


def client_id(rng: random.Random, app: App, n: int, instance: int) -> str:
    """The id instance ``instance`` of ``app`` reports, following its framework's naming."""
    sw = app.software
    if app.role == "streams":
        process = tokens.uuid4(rng)
        return f"{app.name}-{process}-StreamThread-1-{'producer' if instance % 2 else 'consumer'}"
    style = app.id_style
    if style == "pod":
        return tokens.pod_name(rng, app.name)
    if style == "spark":
        return f"consumer-{app.group}-driver-0-{instance}"
    if style == "build":
        return f"{app.name}-{rng.choice(('1.4.2', '2.0.0', '3.12.1'))}-build-{rng.getrandbits(28):07x}"
    if style == "host":
        return f"ip-10-{rng.randint(0, 63)}-{rng.randint(0, 255)}-{rng.randint(2, 254)}.eu-west-1.compute.internal"
    if style == "default":
        if sw.family == "java":
            return f"{app.role}-{n % 7 + 1}" if app.role != "consumer" else f"consumer-{app.group}-{n % 5 + 1}"
        if sw.family == "librdkafka":
            return "rdkafka"
        if sw.family == "kafka-python":
            return f"kafka-python-producer-{n % 3 + 1}" if app.role == "producer" else f"kafka-python-{sw.version}"
        return "sarama" if sw.family == "sarama" else "kgo"
    return f"{app.name}-{instance}"

"""Input for the detection tests: one push per rule, and secrets planted in 20+ forms.

``rule_pushes()`` makes every catalog rule fire at least once (stateful rules
included: a fleet with an outlier, consumer groups that drift). ``planted_pushes()``
hides secrets in values, keys, client ids, principals, versions, group ids and
connection ids; ``planted_invalid_records()`` hides them in records the job must
quarantine. ``SECRETS`` lists every planted value: none may appear in any output.
"""

from __future__ import annotations

import json
from typing import Any

from configwatch.secrets import fingerprint
from tests.rules_helpers import JAVA, KEY, RDKAFKA, entry, push
from udfs.rules.fleet import MIN_PEERS

__all__ = ["INVALID_SECRETS", "SECRETS", "planted_invalid_records", "planted_pushes", "rule_pushes", "to_event_json"]

JWT = ("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIiwic2NvcGUiOiJrYWZrYSJ9."
       "c2lnbmF0dXJlLW9mLWEtcGxhbnRlZC1qd3QtdmFsdWU")
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7plantedKeyBody"
SECRETS = {
    "password_value": "Planted-Passw0rd-1",
    "jaas_password": "planted-jaas-pw-2",
    "custom_value": "Planted.Custom.Secret.3",
    "aws_value": "AKIAPLANTED4VALUE5XY",
    "jwt_value": JWT,
    "github_key": "ghp_" + "Planted6KeyNameToken7abcdefghijklmno",
    "aws_key": "AKIAPLANTED8KEYNAME9",
    "client_id": "ghp_" + "Planted0ClientIdTokenabcdefghijklmnop",
    "principal": "AKIAPLANTEDPRINCIPAL",
    "url_password": "planted-url-pw-10",
    "pem_body": PEM_BODY,
    "entropy_value": "Zq8Xw2Lk9Pm3Nb7Vc4Rt6Yh1",
    "group_id": "Gx7Hq2Lm9Pw4Rt8Yb3Nc5Kd",
    "strategy": "com.acme.PlantedAssignor11",
    "software_version": "AKIAPLANTED12VERSION",
    "txn_id": "Tq9Wm2Lx8Pn4Rb7Yc3Kd6Fh",
    "fragment": "planted-fragment-pw-13",
    "connection_id": "conn-Kq2Lm9Pw4Rt8Yb3Nc5Xd7",
    "rdkafka_secret": "planted-rdkafka-pw-14",
    "redacted_key_value": "PlantedButRedacted15",
}
INVALID_SECRETS = {
    "not_json": "AKIAPLANTEDNOTJSON16",
    "bad_software_name": "ghp_" + "PlantedBadName17abcdefghijklmnopqrstu",
    "wrong_type": "planted-wrong-type-pw-18",
}


def planted_pushes() -> list[dict[str, Any]]:
    """Valid pushes that carry every secret of ``SECRETS``."""
    s = SECRETS
    return [
        push([entry("acks", "all"), entry("ssl.key.password", s["password_value"], "PASSWORD"),
              entry("sasl.jaas.config", 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                    f'username="app" password="{s["jaas_password"]}";', "PASSWORD"),
              entry("app.db.secret", s["custom_value"]), entry("app.s3.id", s["aws_value"]),
              entry("sasl.oauthbearer.token", s["jwt_value"]), entry(s["github_key"], "1"),
              entry(s["aws_key"], "x"), entry("bootstrap.servers", f"app:{s['url_password']}@b1:9092", "LIST"),
              entry("ssl.keystore.key", f"-----BEGIN PRIVATE KEY-----\n{s['pem_body']}\n-----END PRIVATE KEY-----",
                    "PASSWORD"),
              entry("client.id", s["entropy_value"]), entry("transactional.id", s["txn_id"]),
              entry("enable.idempotence", "false", "BOOLEAN"),
              entry("app.dsn", f"host=db user=app password={s['fragment']}"),
              entry("sasl.jaas.config.extra", None, redacted=True, fingerprint=fingerprint(
                  s["redacted_key_value"], KEY))],
             JAVA, client_id=s["client_id"], principal=f"User:{s['principal']}",
             connection_id=s["connection_id"], client_instance_id=None),
        push([entry("group.id", s["group_id"]), entry("auto.offset.reset", "earliest"),
              entry("partition.assignment.strategy", s["strategy"], "LIST")], JAVA,
             client_software_version=s["software_version"]),
        push([entry("group.id", s["group_id"]), entry("auto.offset.reset", "earliest")], JAVA),
        push([entry("group.id", "g"), entry("sasl.password", s["rdkafka_secret"])], RDKAFKA),
    ]


def planted_invalid_records() -> list[bytes]:
    """Records the job must quarantine, each holding a secret."""
    s = INVALID_SECRETS
    base = to_event_json(push({"acks": "all"}))
    bad_name = json.loads(base)
    bad_name["client_software_name"] = s["bad_software_name"] + "!"
    wrong_type = json.loads(base)
    wrong_type["configs"] = f"password={s['wrong_type']}"
    return [f'{{"schema_version": 1, "event": "config_push", "oops": {s["not_json"]}'.encode(),
            json.dumps(bad_name).encode(), json.dumps(wrong_type).encode()]


def _g(group: str, **configs: str) -> dict[str, Any]:
    return push({"group.id": group, "auto.offset.reset": "earliest", **configs})


def rule_pushes() -> list[dict[str, Any]]:
    """Pushes that make every rule of the catalog fire at least once."""
    range_ = "org.apache.kafka.clients.consumer.RangeAssignor"
    pushes = [
        push([entry("acks", "all"), entry("ssl.key.password", "hunter2x", "PASSWORD"),
              entry("sasl.mechanism", "PLAIN"), entry("producer.ssl.protocol", "TLSv1.3"),
              entry("metric.reporters.class", "com.acme.Reporter"), entry("app.feature", "on"),
              entry("sasl.jaas.config", None, "PASSWORD", redacted=True, fingerprint="0123456789abcdef")]),
        push([entry("acks", "all"), entry("app.key", "-----BEGIN RSA PRIVATE KEY-----"),
              entry("app.aws", "AKIAIOSFODNN7EXAMPLE"),
              entry("app.gh", "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
              entry("app.slack", "xoxb-123456789012-123456789012-AbCdEfGhIjKlMnOpQrStUvWx"),
              entry("app.jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"),
              entry("app.url", "https://u:pw12345@h.example.com/"), entry("app.dsn", "user=a password=pw12345"),
              entry("app.token", "Zx9Kq2Lm8Pw4Rt7Yb3Nc")], client_id="AKIAIOSFODNN7EXAMPLE"),
        push({"enable.idempotence": "true", "acks": "1"}),
        push({"enable.idempotence": "true", "max.in.flight.requests.per.connection": "6"}),
        push({"enable.idempotence": "true", "retries": "0"}),
        push({"max.in.flight.requests.per.connection": "10"}),
        push({"transactional.id": "tx-1", "enable.idempotence": "false"}),
        push({"acks": "0", "enable.idempotence": "false"}),
        push({"delivery.timeout.ms": "1000", "request.timeout.ms": "30000"}),
        push({"buffer.memory": "1000", "batch.size": "16384"}),
        push({"reconnect.backoff.ms": "500", "reconnect.backoff.max.ms": "100"}),
        push({"retry.backoff.ms": "5000"}),
        push({"socket.connection.setup.timeout.ms": "60000"}),
        push({"acks": "all", "batch.sise": "32768"}),
        _g("hb", **{"heartbeat.interval.ms": "50000"}),
        _g("third", **{"heartbeat.interval.ms": "20000"}),
        _g("bounds", **{"session.timeout.ms": "2000000"}),
        _g("fetch", **{"fetch.max.wait.ms": "30000"}),
        _g("proto", **{"group.protocol": "consumer", "session.timeout.ms": "30000"}),
        _g("drift"), _g("drift", **{"partition.assignment.strategy": range_}),
        _g("mixed"), _g("mixed", **{"group.protocol": "consumer"}),
        _g("no-common", **{"partition.assignment.strategy": "org.apache.kafka.clients.consumer.RoundRobinAssignor"}),
        _g("no-common", **{"partition.assignment.strategy": "cooperative-sticky"}),
        _g("streams-mix"), _g("streams-mix", **{"group.protocol": "streams"}),
        push({"batch.size": "0"}),
        push({"max.block.ms": "9223372036854775807"}),
        push({"delivery.timeout.ms": "2147483647"}),
        push({"retries": "3", "acks": "all"}),
        push({"bootstrap.servers": "3.34.130.109:9092"}),
        push({"buffer.memory": "10000", "batch.size": "1000"}),
        push({"acks": "all", "retries": "0"}),
        push({"bootstrap.servers": "SSL://b1:9093,b2:9093"}),
        _g("poll", **{"max.poll.records": "2147483647"}),
        _g("fetch-size", **{"max.partition.fetch.bytes": "2147483647"}),
        push({"application.id": "eos-app", "processing.guarantee": "exactly_once_v2", "replication.factor": "1"}),
        push({"acks": "all", "request.timeout.ms": "2000"}),
        push({"socket.timeout.ms": "5000", "request.timeout.ms": "10000"}, RDKAFKA),
        push({"transactional.id": "orders-3f2b8c1e-9a4d-4e1f-8b2a-0c6d5e7f9a11", "enable.idempotence": "true"}),
        push({"batch.size": "2097152"}),
        push({"acks": "all", "linger.ms": "5", "group.id": "copied-from-consumer"}, RDKAFKA),
        push({"acks": "1"}, RDKAFKA),
        push({"max.block.ms": "2000"}),
        push({"enable.idempotence": "false", "acks": "all", "retries": "5"}, RDKAFKA),
        push({"group.id": "tiny-queue", "queued.min.messages": "5"}, RDKAFKA),
    ]
    fleet = [push({"acks": "all", "linger.ms": "5", "batch.size": "16384"}, RDKAFKA) for _ in range(MIN_PEERS)]
    return [*pushes, *fleet, push({"acks": "all", "linger.ms": "50000", "batch.size": "16384"}, RDKAFKA)]


def to_event_json(p: dict[str, Any]) -> str:
    """A push dict (``tests.rules_helpers.push``) as a contract ``config_push`` record."""
    event = {"schema_version": 1, "event": "config_push",
             **{k: v for k, v in p.items() if v is not None and k != "configs"}}
    event["configs"] = [{k: v for k, v in e.items() if v is not None} for e in p["configs"]]
    return json.dumps(event, separators=(",", ":"))


def posture_events() -> list[dict[str, Any]]:
    """``connection_opened`` events of weak security posture, one per posture rule (``udfs.rules.posture``)."""
    common = {"schema_version": 1, "event": "connection_opened", "client_software_name": "apache-kafka-java",
              "client_software_version": "3.9.0"}
    return [
        {**common, "timestamp_ms": 1_790_000_000_001, "connection_id": "10.0.0.1:9092-10.0.0.21:50001-1",
         "client_id": "posture-plain", "principal": "User:alice", "security_protocol": "SASL_PLAINTEXT",
         "sasl_mechanism": "PLAIN"},
        {**common, "timestamp_ms": 1_790_000_000_002, "connection_id": "10.0.0.1:9092-10.0.0.22:50002-2",
         "client_id": "posture-scram", "principal": "User:bob", "security_protocol": "SASL_PLAINTEXT",
         "sasl_mechanism": "SCRAM-SHA-512"},
        {**common, "timestamp_ms": 1_790_000_000_003, "connection_id": "10.0.0.1:9092-10.0.0.23:50003-3",
         "client_id": "posture-tls11", "principal": "User:CN=carol", "security_protocol": "SSL",
         "tls_version": "TLSv1.1", "tls_cipher": "ECDHE-RSA-AES128-SHA", "client_certificate": True},
        {**common, "timestamp_ms": 1_790_000_000_004, "connection_id": "10.0.0.1:9092-10.0.0.24:50004-4",
         "client_id": "posture-anonymous", "principal": "User:ANONYMOUS", "security_protocol": "PLAINTEXT",
         "tls_offered_at": "kafka.example:9093"},
    ]

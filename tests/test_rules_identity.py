"""Client-id and principal conventions: conventional ids are left alone, secrets placed in ids are still found."""

from __future__ import annotations

import base64
import random
import string

import pyarrow as pa
import pytest

from udfs.rules.identity import split_identity, strip_structure
from udfs.rules.secretscan import HIGH_ENTROPY, scan_identity, scan_strings

UUID = "f7c89e69-381d-4b11-aac3-c708b5e527bd"
STREAMS = f"inventory-join-app-{UUID}"
SHA = "3f786850e387550fdab836ed7e6dc881de23001b"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
JWT = ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvcmRlcnMiLCJleHAiOjE4MDAwMDAwMDB9."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
TOKEN = "Zx9Kq2Lm8Pw4Rt7Yb3NcV5hJ"            # 24 random base62 characters
TOKEN_B64URL = "kR7vQ2xN9mB4tL8w_Z3yH6cJ1dF5-pS0gT2uW4eA9qX"

BENIGN = [
    # Kafka Streams (KafkaStreams / StreamThread naming), process UUID in lower and upper case
    f"{STREAMS}-StreamThread-1-consumer",
    f"{STREAMS}-StreamThread-1-restore-consumer",
    f"{STREAMS}-StreamThread-12-producer",
    f"{STREAMS}-StreamThread-3-0_1-producer",           # EOS-alpha: a producer per task
    f"{STREAMS}-StreamThread-3-12_7-producer",
    f"{STREAMS}-admin",
    f"{STREAMS}-GlobalStreamThread-global-consumer",
    "OrderEnricherV2-5F0B6A4C-1D2E-4F3A-8B9C-0D1E2F3A4B5C-StreamThread-4-consumer",
    "fraud_scoring_v3-0c9e2b1a-7f4d-4e2a-9b6c-3d8f1a2b4c6e-StreamThread-2-restore-consumer",
    "Payments2024-0c9e2b1a-7f4d-4e2a-9b6c-3d8f1a2b4c6e-StreamThread-16-producer",
    "orders-streams-6c9f7b8d4-qx7zt-StreamThread-1-consumer",  # client.id set to the pod name
    # Kafka Connect task clients
    "connector-consumer-jdbc-sink-orders-0",
    "connector-producer-debezium-postgres-inventory-2",
    "connector-dlq-producer-S3SinkConnector-7",
    "connector-consumer-MySqlSink2Postgres-0",
    "connector-adminclient-MySqlSink2Postgres-11",
    # Spark Structured Streaming (group id spark-kafka-source-<uuid>-<hash>-driver-0, negative hashes too)
    "consumer-spark-kafka-source-0f3b1c2e-5a4d-4c1e-9f3a-7d2b6c1e8a90--1288403939-driver-0-1",
    "consumer-spark-kafka-source-0f3b1c2e-5a4d-4c1e-9f3a-7d2b6c1e8a90-1288403939-executor-2",
    "spark-kafka-relation-0f3b1c2e-5a4d-4c1e-9f3a-7d2b6c1e8a90-driver-0",
    # client defaults
    "rdkafka", "producer-1", "consumer-mygroup-3", "consumer-orders.enricher-12", "adminclient-7",
    "kafka-python-producer-1", "kafka-python-2.0.2", "producer-orders-tx-0", "sarama", "kafkajs",
    # Kubernetes pod names
    "payments-api-7d9f8b6c5d-x2k4p", "ledger-writer-0", "kafka-consumer-12",
    "Payments-7d9f8b6c5d-x2k4p-StreamThread-1-consumer",
    # hosts
    "ip-10-0-12-34.eu-west-1.compute.internal", "worker-7.kafka.svc.cluster.local",
    "WIN-SRV2019-KAFKA01.corp.example.com", "DESKTOP-7Q2M9KD",
    # builds, commit shas, versions
    f"billing-{SHA}", f"OrderService2-{SHA}-worker-7", "MyApp-build-3f9a2c1d4e5b", "build-20240611-3f78685",
    "orders-service-1.14.2-SNAPSHOT-20240611.101530-7", "release-v2.3.1+g3f78685", "AuditLogger-v12-RC3-build-4711",
    # UUID- and hash-suffixed ids
    "orders-consumer-123e4567-e89b-12d3-a456-426614174000",
    "OrdersConsumer-123E4567-E89B-12D3-A456-426614174000",
    "svc_billing_6f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e",
    "NotificationWorker-6f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e-EU1",
    # principals
    f"User:CN={STREAMS},OU=Streams,O=Acme", "User:sa-7k2p9q", "User:svc-orders-prod-eu-west-1",
    "User:spiffe://acme.io/ns/payments/sa/payments-api-7d9f8b6c5d",
    "User:arn:aws:iam::123456789012:role/KafkaClient-OrdersStreams2",
]

SECRETS = [
    ("svc-" + GITHUB, "secret-github-token"),
    (f"{STREAMS}-{GITHUB}-StreamThread-1-consumer", "secret-github-token"),
    ("orders-AKIAIOSFODNN7EXAMPLE-1", "secret-aws-access-key"),
    ("User:" + "AKIAIOSFODNN7EXAMPLE", "secret-aws-access-key"),
    ("app-" + JWT, "secret-jwt"),
    ("billing-sk_live_4eC39HqLyjWDarjtT1zdp7dc-1", "secret-api-token"),
    ("payments-api-7d9f8b6c5d-x2k4p-password=hunter22", "secret-password-fragment"),
    ("client-token:Q2x9Vb7Nm4Lk8Jh3", "secret-password-fragment"),
    ("svc-" + TOKEN, HIGH_ENTROPY),
    (f"svc-{TOKEN}-consumer", HIGH_ENTROPY),
    (f"inventory-join-app-{TOKEN}-StreamThread-1-consumer", HIGH_ENTROPY),   # a token where the UUID goes
    (f"{STREAMS}-{TOKEN}-StreamThread-1-consumer", HIGH_ENTROPY),
    (f"{STREAMS}-StreamThread-1-{TOKEN}", HIGH_ENTROPY),
    (f"connector-producer-{TOKEN}-0", HIGH_ENTROPY),
    (f"consumer-spark-kafka-source-{TOKEN_B64URL}-driver-0-1", HIGH_ENTROPY),
    (f"payments-api-7d9f8b6c5d-x2k4p-{TOKEN_B64URL}", HIGH_ENTROPY),
    ("svc-wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY-consumer", HIGH_ENTROPY),  # an AWS secret access key
    ("app-F7c89E69-381d-4B11-aAc3-C708b5E527bd-StreamThread-1-consumer", HIGH_ENTROPY),  # mixed case: no UUID
]


@pytest.mark.parametrize("client_id", BENIGN)
def test_conventional_ids_are_not_secrets(client_id: str) -> None:
    assert scan_strings([client_id]) == [None]


@pytest.mark.parametrize(("client_id", "rule"), SECRETS, ids=[f"{r}-{i}" for i, (_, r) in enumerate(SECRETS)])
def test_secrets_placed_in_ids_are_found(client_id: str, rule: str) -> None:
    assert scan_strings([client_id]) == [rule]


def test_one_call_over_every_id_matches_id_by_id() -> None:
    values = BENIGN + [v for v, _ in SECRETS]
    assert scan_strings(values) == [None] * len(BENIGN) + [r for _, r in SECRETS]


CONVENTIONS = [
    "{}-StreamThread-1-consumer", "inventory-join-app-{}-StreamThread-2-restore-consumer",
    f"{STREAMS}-{{}}-StreamThread-3-0_1-producer", "connector-consumer-{}-4", "svc-{}",
    "payments-api-7d9f8b6c5d-x2k4p-{}", f"{{}}-{SHA}",
]


def test_a_random_token_is_judged_the_same_inside_a_conventional_id() -> None:
    rng = random.Random(13)
    alphabet = string.ascii_letters + string.digits
    tokens = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(24, 41))) for _ in range(200)]
    bare = scan_strings(tokens)
    assert bare.count(HIGH_ENTROPY) >= 0.97 * len(tokens)
    for convention in CONVENTIONS:
        assert scan_strings([convention.format(t) for t in tokens]) == bare, convention


def test_a_long_base64url_token_keeps_its_verdict_inside_a_conventional_id() -> None:
    rng = random.Random(17)
    tokens = [base64.urlsafe_b64encode(rng.randbytes(32)).decode().rstrip("=") for _ in range(300)]
    bare = scan_strings(tokens)
    for convention in CONVENTIONS:
        embedded = scan_strings([convention.format(t) for t in tokens])
        assert sum(1 for b, e in zip(bare, embedded, strict=True) if b != e) <= 3, convention


@pytest.mark.parametrize(("token", "rest"), [
    (f"{STREAMS}-StreamThread-1-restore-consumer", ""),
    (f"OrderEnricherV2-{UUID}-StreamThread-3-0_1-producer", "OrderEnricherV2"),
    (f"app-{TOKEN}-StreamThread-1-consumer", TOKEN),
    (f"aB1_{UUID}_{TOKEN}-xY2", f"aB1-{TOKEN}-xY2"),    # the rest joined by "-"
    ("payments-api-7d9f8b6c5d-x2k4p", ""),
    ("AuditLogger-v12-RC3-build-4711", ""),
    # not compound ids (no UUID, hash, pod hash or convention segment): left whole
    (TOKEN, TOKEN),
    (TOKEN_B64URL, TOKEN_B64URL),
    ("5jcFKzg5ZZx4_fkdCqpifg", "5jcFKzg5ZZx4_fkdCqpifg"),  # base64url whose pieces look like words by chance
    ("orders-app-x2k4p", "orders-app-x2k4p"),
    ("", ""),
])
def test_strip_structure(token: str, rest: str) -> None:
    assert strip_structure(pa.array([token])).to_pylist() == [rest]


def test_random_base64url_tokens_are_not_compound_ids() -> None:
    rng = random.Random(29)
    tokens = pa.array([base64.urlsafe_b64encode(rng.randbytes(rng.choice([16, 24, 32]))).decode().rstrip("=")
                       for _ in range(5000)])
    assert strip_structure(tokens).equals(tokens)


def test_strip_structure_keeps_nulls_and_empty_input() -> None:
    assert strip_structure(pa.array([None, f"{STREAMS}-admin", None], pa.string())).to_pylist() == [None, "", None]
    assert strip_structure(pa.array([], pa.string())).to_pylist() == []


# --- principals: a TLS principal's distinguished name is judged part by part ---------------------------------

DN_PRINCIPALS = [
    "User:CN=orders-join-app-7.prod.svc,OU=platform,O=Example Corp,C=DE",
    "User:CN=recommendations-aggregator-12.prod.svc,OU=platform,O=Example Corp,C=DE",
    "User:CN=fraud-sink-3.prod.svc,OU=Platform Engineering,O=Example Corp,L=Berlin,ST=Berlin,C=DE",
    "User:CN=payments-api-7d9f8b6c5d-x2k4p,OU=Payments2024,DC=corp,DC=example,DC=com",
    "User:CN=kafka-client-3+UID=svc-orders,OU=Kafka,O=Acme",               # a multi-valued RDN
    "User:/C=DE/O=Example Corp/OU=platform/CN=orders-join-app-7.prod.svc",  # OpenSSL's form
    "User:1.2.840.113549.1.9.1=ops@example.com,CN=billing-worker-2,O=Acme",  # an attribute by OID
    "User:CN=audit-exporter-4.prod.svc, OU=platform, O=Example Corp, C=DE",  # spaces after commas
]

DN_SECRETS = [
    ("User:CN=Zx9Kq2Lm8Pw4Rt7Yb3NcV5hJ,OU=platform,O=Example Corp", HIGH_ENTROPY),
    ("User:CN=svc-Zx9Kq2Lm8Pw4Rt7Yb3NcV5hJ,OU=platform", HIGH_ENTROPY),
    (f"User:CN=orders-join-app-7.prod.svc,OU={TOKEN_B64URL}", HIGH_ENTROPY),
    (f"User:CN=orders,OU={GITHUB}", "secret-github-token"),
    ("User:CN=orders,OU=platform,password=hunter22", "secret-password-fragment"),
]


@pytest.mark.parametrize("principal", DN_PRINCIPALS)
def test_a_distinguished_name_is_split_into_its_attribute_values(principal: str) -> None:
    assert scan_identity(pa.array([principal])).to_pylist() == [None]


def test_the_value_scanner_alone_reads_a_dn_as_one_token() -> None:
    # Why identity fields need scan_identity: "CN=orders-join-app-7" is one mixed-class token of 20 characters.
    assert scan_strings([DN_PRINCIPALS[0]]) == [HIGH_ENTROPY]
    assert split_identity(pa.array([DN_PRINCIPALS[0], "/CN=a/OU=b", None])).to_pylist() == [
        "User:CN orders-join-app-7.prod.svc,OU platform,O Example Corp,C DE", "/CN a/OU b", None]


@pytest.mark.parametrize(("principal", "rule"), DN_SECRETS, ids=[f"{r}-{i}" for i, (_, r) in enumerate(DN_SECRETS)])
def test_a_token_in_a_distinguished_name_is_still_found(principal: str, rule: str) -> None:
    assert scan_identity(pa.array([principal])).to_pylist() == [rule]


def test_identity_scan_judges_client_ids_like_the_value_scan() -> None:
    values = BENIGN + [v for v, _ in SECRETS]
    assert scan_identity(pa.array(values)).to_pylist() == scan_strings(values)

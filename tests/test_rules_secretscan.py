"""The value scanner: each secret kind found, look-alikes left alone, vectorized over whole arrays."""

from __future__ import annotations

import random
import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from udfs.rules.entropy import token_stats
from udfs.rules.secretscan import (
    HIGH_ENTROPY,
    KINDS,
    UUID,
    UUID_CHARS,
    _high_entropy,
    mask_secrets,
    scan,
    scan_identity,
    scan_strings,
)

GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
JWT = ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvcmRlcnMiLCJleHAiOjE4MDAwMDAwMDB9."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")

POSITIVES = [
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1b2c\n-----END RSA PRIVATE KEY-----", "secret-private-key"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "secret-private-key"),
    ("-----BEGIN PRIVATE KEY-----", "secret-private-key"),
    ("AKIAIOSFODNN7EXAMPLE", "secret-aws-access-key"),
    ("aws.key=ASIAY34FZKBOKMUTVV7A;region=eu-west-1", "secret-aws-access-key"),
    (GITHUB, "secret-github-token"),
    ("token " + "github_pat_" + "A" * 22 + "_" + "b" * 59, "secret-github-token"),
    ("xoxb-123456789012-123456789012-AbCdEfGhIjKlMnOpQrStUvWx", "secret-api-token"),
    ("AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "secret-api-token"),
    ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "secret-api-token"),
    (JWT, "secret-jwt"),
    ("Bearer " + JWT, "secret-jwt"),
    ("https://bob:hunter22@registry.example.com/", "secret-url-credentials"),
    ("postgres://svc:S3cr3t#pw@db.example.com:5432/app", "secret-url-credentials"),
    ("alice:pw1234@broker1:9092,broker2:9092", "secret-url-credentials"),
    ('org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="a-secret";',
     "secret-password-fragment"),
    ("Server=db;User Id=svc;Password=Tr0ub4dor&3;", "secret-password-fragment"),
    ("api_key=q8w7e6r5t4y3u2i1", "secret-password-fragment"),
    # a quoted value runs to its closing quote, whatever its first character
    ('org.apache.kafka.common.security.scram.ScramLoginModule required username="svc" password="&gepK9!x#2";',
     "secret-password-fragment"),
    ("password='&&x7-Kq'", "secret-password-fragment"),
    ('sasl.jaas.config=... password="p w;&,x";', "secret-password-fragment"),
    ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", HIGH_ENTROPY),
    ("Zx9Kq2Lm8Pw4Rt7Yb3Nc", HIGH_ENTROPY),
    ("token value: 3kF9zQ2mX7pL4vB8nR1tY6wC5hJ0gD", HIGH_ENTROPY),
    ("orders-app-3kF9zQ2mX7pL4vB8nR1tY6wC-StreamThread-1-consumer", HIGH_ENTROPY),  # a token in a compound id
    ("checkout-aggregator-511-SqieLR8SbbKeaCqJAqkwgtkccImGJULM", HIGH_ENTROPY),  # a token after a long name
]

NEGATIVES = [
    "123e4567-e89b-12d3-a456-426614174000",            # UUID
    "123E4567-E89B-12D3-A456-426614174000",            # upper-case UUID
    "3f786850e387550fdab836ed7e6dc881de23001b",        # git sha
    "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",  # sha256, upper case
    "build-3f786850e387",                              # build id
    "broker1.example.com:9092,broker2.example.com:9092,10.0.0.7:9093",  # host list
    "[2001:db8::7]:9092",
    "OrderServiceConsumer2024",                        # camelCase identifier
    "payments-consumer-group-prod-eu-west-1",          # kebab identifier
    "orders-7d9f8b6c5-x2x7k",                          # pod name
    "orders-app-f7c89e69-381d-4b11-aac3-c708b5e527bd-StreamThread-1-consumer",  # Kafka Streams client id
    "orders-app-f7c89e69-381d-4b11-aac3-c708b5e527bd-StreamThread-2-0_1-producer",
    "org.apache.kafka.common.serialization.StringSerializer",
    "org.apache.kafka.common.security.plain.PlainLoginModule required;",
    "https://schema-registry.example.com:8081/subjects?deleted=true",
    "/var/lib/kafka/data/orders-events-0",
    "30000", "all", "true", "lz4", "SASL_SSL", "SCRAM-SHA-512", "User:alice", "User:alice@EXAMPLE.COM",
    "password=${file:/etc/kafka/secrets.properties:sasl.password}",  # KIP-297 reference, not a value
    'username="svc" password="${env:KAFKA_PASSWORD}";',
    "https://user:****@host.example.com/",
    "password=[hidden]",
    'username="svc" password="";',                     # nothing set
    "https://registry.example.com/login?password=&user=svc",  # an empty query parameter
    'password="${file:/etc/kafka/jaas.properties:pw}"',
    "2.6.0-rdkafka-2.6.0",
    "2026-11-21T01:00:00Z",
    "ops@example.com",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEbZ4u6DANBgkqhkiG9w0BAQsFADBsMRAwDgYDVQQGEwdVbmtub3du\n"
    "-----END CERTIFICATE-----",                      # a certificate is public
]


@pytest.mark.parametrize(("value", "rule"), POSITIVES, ids=[p[1] + f"-{i}" for i, p in enumerate(POSITIVES)])
def test_finds_each_kind(value: str, rule: str) -> None:
    assert scan_strings([value]) == [rule]


@pytest.mark.parametrize("value", NEGATIVES)
def test_leaves_lookalikes_alone(value: str) -> None:
    assert scan_strings([value]) == [None]


def test_every_kind_has_a_positive_case() -> None:
    assert {k.rule for k in KINDS} | {HIGH_ENTROPY} == {rule for _, rule in POSITIVES}


def test_one_call_over_a_mixed_array_matches_value_by_value() -> None:
    values = [v for v, _ in POSITIVES] + NEGATIVES + [None, ""]
    assert scan(pa.array(values)).to_pylist() == [r for _, r in POSITIVES] + [None] * (len(NEGATIVES) + 2)


def test_chunked_and_empty_inputs() -> None:
    chunked = pa.chunked_array([["AKIAIOSFODNN7EXAMPLE"], ["all", None]])
    assert scan(chunked).to_pylist() == ["secret-aws-access-key", None, None]
    assert scan(pa.array([], pa.string())).to_pylist() == []
    assert scan(pa.array(["1", "2"])).to_pylist() == [None, None]


def test_mask_secrets_swaps_only_flagged_values_once_each() -> None:
    calls: list[str] = []

    def swap(value: str) -> str:
        calls.append(value)
        return "masked"

    values = ["3.9.1", GITHUB, "unknown", GITHUB]
    assert mask_secrets(values, swap) == ["3.9.1", "masked", "unknown", "masked"]
    assert calls == [GITHUB]
    assert mask_secrets(["1.0", "2.0"], swap) == ["1.0", "2.0"] and mask_secrets([], swap) == []


def test_uuids_passed_over_are_what_the_full_scan_would_leave_alone() -> None:
    """``UUID``'s premise: no kind matches a one-case canonical UUID and the entropy test passes it."""
    rng = random.Random(8)
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(2000)]
    ids += [str(uuid.UUID(int=0)), str(uuid.UUID(int=(1 << 128) - 1)), "acca" * 8]
    uuids = pa.array(ids + [i.upper() for i in ids], pa.string())
    assert pc.all(pc.match_substring_regex(uuids, UUID)).as_py() is False  # "acca" * 8 is no UUID
    uuids = uuids.filter(pc.match_substring_regex(uuids, UUID))
    assert len(uuids) == 2 * (len(ids) - 1) and {len(u) for u in uuids.to_pylist()} == {UUID_CHARS}
    for kind in KINDS:  # the full path, as scan would take it without the shortcut
        assert not pc.any(pc.match_substring_regex(uuids, kind.pattern)).as_py(), kind.rule
    assert not _high_entropy(uuids).any()
    assert scan(uuids).null_count == scan_identity(uuids).null_count == len(uuids)


def test_uuid_shaped_values_that_are_not_one_case_uuids_are_scanned() -> None:
    token = "Zx9Kq2Lm8Pw4Rt7Yb3Nc"
    values = [f"{token}-{uuid.UUID(int=5)}", f"password={uuid.UUID(int=6)}", "3F2a9C1e-8B4d-4E6f-A1b2-C3d4E5f60718"]
    assert pc.match_substring_regex(pa.array(values), UUID).to_pylist() == [False, False, False]
    assert scan_strings(values)[:2] == [HIGH_ENTROPY, "secret-password-fragment"]


def test_token_stats_entropy_and_switch_rate() -> None:
    stats = token_stats(pa.array(["aaaa", "abcd", "aAbB", ""]))
    assert stats.entropy.round(6).tolist() == [0.0, 2.0, 2.0, 0.0]
    assert stats.switch_rate.tolist() == [0.0, 0.0, 1.0, 0.0]
    assert stats.classes.tolist() == [1, 1, 3, 0]

"""The one sensitivity decision: KIP rules on normalised keys, secret words in any style, custom keys, values."""

from __future__ import annotations

import pyarrow as pa
import pytest

from udfs.sensitivity import (
    RULE_CUSTOM,
    RULE_INFIX,
    RULE_NAME,
    RULE_PREFIX,
    RULE_SUFFIX,
    RULE_TYPE,
    key_words,
    normalize_key,
    sensitive_first,
    sensitive_reason,
)

# (key, type, value, expected first reason); values are harmless unless the case is about the value.
CASES = [
    # the KIP's own rules (Java dotted keys)
    ("sasl.jaas.config", "PASSWORD", "x", RULE_TYPE),
    ("key.serializer", "CLASS", "x", RULE_TYPE),
    ("sasl.mechanism", "STRING", "PLAIN", RULE_PREFIX),
    ("security.protocol", "STRING", "SSL", RULE_PREFIX),
    ("ssl.truststore.location", "STRING", "/x", RULE_PREFIX),
    ("producer.ssl.keystore.location", "STRING", "/x", RULE_INFIX),
    ("admin.sasl.kerberos.service.name", "STRING", "kafka", RULE_INFIX),
    ("partitioner.class", "STRING", "x", RULE_SUFFIX),
    ("interceptor.classes", "LIST", "x", RULE_SUFFIX),
    # key variants that must not slip past them
    ("SASL.JAAS.CONFIG", "STRING", "x", RULE_PREFIX),
    (" sasl.jaas.config", "STRING", "x", RULE_PREFIX),
    ("sasl\u200b.jaas.config", "STRING", "x", RULE_PREFIX),
    ("\uff53\uff53\uff4c.key.password", "STRING", "x", RULE_PREFIX),  # fullwidth "ssl"
    ("Ssl.Key.Password\t", "STRING", "x", RULE_PREFIX),
    # secret words in every client family's naming style
    ("sasl_plain_password", "STRING", "x", RULE_NAME),          # kafka-python
    ("ssl_password", "STRING", "x", RULE_NAME),                 # kafka-python
    ("sasl_oauth_token_provider", "STRING", "x", RULE_NAME),    # kafka-python
    ("Net.SASL.Password", "STRING", "x", RULE_INFIX),           # sarama struct path (.sasl. infix)
    ("Net.SASL.User", "STRING", "x", RULE_INFIX),
    ("SASLPlainPassword", "STRING", "x", RULE_NAME),            # franz-go option
    ("database.password", "STRING", "x", RULE_NAME),            # application key
    ("basic.auth.user.info", "STRING", "x", RULE_NAME),         # Confluent SerDes
    ("schema.registry.basic.auth.user.info", "STRING", "x", RULE_NAME),
    ("datadog.api.key", "STRING", "x", RULE_NAME),
    ("DATADOG_API_KEY", "STRING", "x", RULE_NAME),
    ("awsSecretAccessKey", "STRING", "x", RULE_NAME),
    ("oauth.client.secret", "STRING", "x", RULE_NAME),
    ("keyStorePassphrase", "STRING", "x", RULE_NAME),
    ("app.credentials.file", "STRING", "x", RULE_NAME),
    ("java.security.auth.login.config", "STRING", "x", RULE_INFIX),
    ("jaasConfig", "STRING", "x", RULE_NAME),
    # plain keys stay plain
    ("acks", "STRING", "all", None),
    ("linger.ms", "LONG", "5", None),
    ("bootstrap_servers", "LIST", "k:9092", None),
    ("ssl_check_hostname", "BOOLEAN", "true", None),
    ("Producer.RequiredAcks", "INT", "1", None),
    ("ProducerLinger", "LONG", "5", None),
    ("classic.setting", "STRING", "x", None),
    ("myssl.thing", "STRING", "x", None),
    ("max.poll.records", "INT", "500", None),
    ("key.deserializer.encoding", "STRING", "utf8", None),
    ("tokenizer.mode", "STRING", "x", None),
    # a secret in the value, whatever the key
    ("notes", "STRING", "AKIAABCDEFGHIJKLMNOP", "secret-aws-access-key"),
    ("connection.string", "STRING", "postgres://app:hunter2hunter2@db:5432/x", "secret-url-credentials"),
]


@pytest.mark.parametrize(("key", "type_name", "value", "reason"), CASES)
def test_one_entry(key: str, type_name: str, value: str, reason: str | None) -> None:
    assert sensitive_reason(key, type_name, value) == reason


def test_vectorized_agrees_with_scalar_and_nulls_are_never_sensitive() -> None:
    keys = pa.array([c[0] for c in CASES] + [None])
    types = pa.array([c[1] for c in CASES] + [None])
    values = pa.array([c[2] for c in CASES] + [None])
    assert sensitive_first(keys, types, values).to_pylist() == [c[3] for c in CASES] + [None]


def test_custom_keys_come_after_the_key_rules_and_before_values() -> None:
    keys = pa.array(["app.owner.email", "ssl.custom", "acks", "notes"])
    types = pa.array(["STRING"] * 4)
    values = pa.array(["a@example.com", "x", "all", "AKIAABCDEFGHIJKLMNOP"])
    custom = [True, True, False, True]
    assert sensitive_first(keys, types, values, custom).to_pylist() == [
        RULE_CUSTOM, RULE_PREFIX, None, RULE_CUSTOM]


def test_normalisation_and_words() -> None:
    assert normalize_key("  SASL\u200d.JAAS.Config\u00a0") == "sasl.jaas.config"
    assert key_words("SASLPlainPassword") == ("sasl", "plain", "password")
    assert key_words("Net.SASL.Password") == ("net", "sasl", "password")
    assert key_words("sasl_plain_password") == ("sasl", "plain", "password")
    assert key_words("basic.auth.user.info") == ("basic", "auth", "user", "info")


def test_identity_fields_holding_a_secret_leave_as_their_marker() -> None:
    from configwatch.records import Event
    from configwatch.secrets import SecretStr
    from udfs.sensitivity import mask_identity

    key = SecretStr("k")
    jwt = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
           "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
    streams = "inventory-join-app-f7c89e69-381d-4b11-aac3-c708b5e527bd-StreamThread-1-consumer"
    leaked = mask_identity(Event(event="connection_opened", timestamp_ms=1, connection_id="c", client_id=jwt), key)
    assert leaked.client_id is not None and leaked.client_id.startswith("redacted:") and jwt not in leaked.to_json()
    clean = Event(event="connection_opened", timestamp_ms=1, connection_id="c", client_id=streams)
    assert mask_identity(clean, key) is clean
    # A TLS principal's distinguished name is judged part by part; a token in it is still masked.
    tls = Event(event="connection_opened", timestamp_ms=1, connection_id="c",
                principal="User:CN=orders-join-app-7.prod.svc,OU=platform,O=Example Corp,C=DE")
    assert mask_identity(tls, key) is tls
    token = Event(event="connection_opened", timestamp_ms=1, connection_id="c",
                  principal="User:CN=Zx9Kq2Lm8Pw4Rt7Yb3NcV5hJ,OU=platform")
    assert str(mask_identity(token, key).principal).startswith("redacted:")

"""Planted problems with their ground truth: leaks and misconfigurations, per client family.

Each fault edits a :class:`Draft` (an instance's push and identity before it is
frozen) and records the rule ids that must fire (``expected``) and those that may
(``allowed``, not scored), or returns False when it does not apply to that client
(family, role or release). Labels follow the rule catalog (``docs/rules.md``): for
an entry the key rules decide in the order type, prefix, infix, suffix, secret
words, custom key; a secret found in a value is a finding of its own.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.eval import tokens
from tests.eval.clients import PushBuilder, Software
from tests.eval.families import App

__all__ = ["ENTROPY", "LEAKS", "OUTLIER", "Draft", "Fault", "java_yields"]

ENTROPY = "secret-high-entropy"
OUTLIER = "fleet-outlier"


@dataclass
class Draft:
    """An instance being built: its push, identity and labels."""

    rng: random.Random
    app: App
    push: PushBuilder
    client_id: str
    software: Software | None
    expected: set[str] = field(default_factory=set)
    allowed: set[str] = field(default_factory=set)
    secrets: list[str] = field(default_factory=list)
    scenarios: list[str] = field(default_factory=list)

    @property
    def family(self) -> str:
        return self.app.family

    @property
    def release(self) -> tuple[int, ...]:
        return self.app.software.release

    @property
    def producer(self) -> bool:
        return self.app.role == "producer"

    @property
    def consumer(self) -> bool:
        return self.app.role == "consumer"

    def explicit(self, key: str) -> bool:
        """Whether the push sets ``key`` to a value of the user's (not at its default)."""
        entry = self.push.entries.get(key)
        return entry is not None and not entry.is_default

    def custom(self, key: str, value: str, rules: set[str], allowed: frozenset[str] = frozenset(),
               secret: str | None = None) -> None:
        self.push.set(key, value, "STRING")
        self.expected |= rules
        self.allowed |= allowed
        if secret is not None:
            self.secrets.append(secret)

    def id_key(self) -> str:
        return {"java": "client.id", "librdkafka": "client.id", "kafka-python": "client_id"}.get(self.family,
                                                                                               "ClientID")


Fault = tuple[str, int, Callable[[Draft], bool]]


def java_yields(release: tuple[int, ...]) -> bool:
    """Whether a Java producer's default idempotence silently gives way (3.0.1-3.0.x, 3.1.1 on; KAFKA-13598)."""
    return (3, 0, 1) <= release < (3, 1) or release >= (3, 1, 1)


# --- leaks -------------------------------------------------------------------------------------------------------

def _datadog(dr: Draft) -> bool:
    key = tokens.api_hex(dr.rng)
    dr.custom("datadog.api.key", key, {"sensitive-key-name"}, frozenset({ENTROPY}), key)
    return True


def _owner_email(dr: Draft) -> bool:
    dr.custom("app.owner.email", tokens.email(dr.rng, "example.com"), {"kip-sensitive-custom"})
    return True


def _registry_url_creds(dr: Draft) -> bool:
    user, secret = tokens.mixed_token(dr.rng, 16).upper(), tokens.mixed_token(dr.rng, 64)
    url = f"https://{user}:{secret}@psrc-{dr.rng.getrandbits(20):05x}.europe-west3.gcp.confluent.cloud"
    dr.custom("schema.registry.url", url, {"kip-sensitive-custom", "secret-url-credentials"},
              frozenset({ENTROPY, "secret-password-fragment"}), secret)
    return True


def _registry_url_plain(dr: Draft) -> bool:
    dr.custom("schema.registry.url", f"http://schema-registry.{dr.app.name}.svc:8081", {"kip-sensitive-custom"})
    return True


def _registry_basic_auth(dr: Draft) -> bool:
    secret = tokens.mixed_token(dr.rng, 64)
    dr.custom("basic.auth.credentials.source", "USER_INFO", {"sensitive-key-name"})
    dr.custom("basic.auth.user.info", f"{tokens.mixed_token(dr.rng, 16).upper()}:{secret}", {"sensitive-key-name"},
              frozenset({ENTROPY}), secret)
    return True


def _database_password(dr: Draft) -> bool:
    secret = tokens.password(dr.rng)
    dr.custom("database.password", secret, {"sensitive-key-name"}, frozenset({ENTROPY}), secret)
    return True


def _aws_keys(dr: Draft) -> bool:
    key_id, secret = tokens.aws_access_key(dr.rng), tokens.aws_secret(dr.rng)
    dr.custom("aws.access.key.id", key_id, {"sensitive-key-name", "secret-aws-access-key"}, frozenset({ENTROPY}),
              key_id)
    dr.custom("aws.secret.access.key", secret, {"sensitive-key-name"}, frozenset({ENTROPY}), secret)
    return True


def _slack_token(dr: Draft) -> bool:
    secret = tokens.slack_token(dr.rng)
    dr.custom("alerts.slack.token", secret, {"sensitive-key-name", "secret-api-token"}, frozenset({ENTROPY}), secret)
    return True


def _bearer_header(dr: Draft) -> bool:
    secret = tokens.jwt(dr.rng, f"svc-{dr.app.name}")
    dr.custom("http.auth.header", f"Bearer {secret}", {"kip-sensitive-custom", "secret-jwt"}, frozenset({ENTROPY}),
              secret)
    return True


def _private_key(dr: Draft) -> bool:
    body = "".join(dr.rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") for _ in range(64))
    pem = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----"
    dr.custom("app.signing.key", pem, {"kip-sensitive-custom", "secret-private-key"}, frozenset({ENTROPY}), body)
    return True


def _bootstrap_creds(dr: Draft) -> bool:
    key = {"java": "bootstrap.servers", "librdkafka": "bootstrap.servers", "kafka-python": "bootstrap_servers",
           "sarama": "Addrs"}.get(dr.family, "SeedBrokers")
    secret = tokens.password(dr.rng).replace("@", "#").replace(":", "!")
    first = dr.app.bootstrap.split(",")[0]
    dr.push.set(key, f"svc-{dr.app.name}:{secret}@{first}", "LIST")
    dr.expected.add("secret-url-credentials")
    dr.allowed |= {ENTROPY, "secret-password-fragment"}
    dr.secrets.append(secret)
    return True


def _token_in_client_id(dr: Draft) -> bool:
    if dr.app.role == "streams":
        return False
    kind = dr.rng.choice(("github", "aws", "mixed", "mixed"))
    secret = {"github": tokens.github_token, "aws": tokens.aws_access_key,
              "mixed": lambda r: tokens.mixed_token(r, 32)}[kind](dr.rng)
    dr.client_id = f"{dr.app.name}-{secret}" if kind == "mixed" else secret
    dr.push.set(dr.id_key(), dr.client_id, "STRING")
    value_rule = {"github": "secret-github-token", "aws": "secret-aws-access-key", "mixed": ENTROPY}[kind]
    dr.expected |= {"secret-in-identity", value_rule}
    dr.allowed.add(ENTROPY)
    dr.secrets.append(secret)
    return True


def _client_sasl_password(dr: Draft) -> bool:
    """A client family's own credential key, typed STRING (the client's KIP check does not know it)."""
    secret = tokens.password(dr.rng)
    if dr.family == "kafka-python":
        dr.custom("sasl_plain_password", secret, {"sensitive-key-name"}, frozenset({ENTROPY}), secret)
    elif dr.family == "sarama":
        dr.push.set("Net.SASL.Enable", "true", "BOOLEAN").set("Net.SASL.Mechanism", "PLAIN")
        dr.push.set("Net.SASL.User", f"svc-{dr.app.name}")
        dr.custom("Net.SASL.Password", secret, {"kip-sensitive-infix"}, frozenset({ENTROPY, "sensitive-key-name"}),
                  secret)
    elif dr.family == "franz-go":
        dr.push.set("SASLPlainUser", f"svc-{dr.app.name}")
        dr.custom("SASLPlainPassword", secret, {"sensitive-key-name"},
                  frozenset({ENTROPY, "kip-sensitive-custom"}), secret)
    elif dr.family == "librdkafka":
        dr.push.set("sasl.username", f"svc-{dr.app.name}")
        dr.custom("sasl.password", secret, {"kip-sensitive-prefix"}, frozenset({ENTROPY}), secret)
    else:
        variant = dr.rng.choice(("SASL.JAAS.CONFIG", " sasl.jaas.config", "sasl\u200b.jaas.config"))
        jaas = (f'org.apache.kafka.common.security.plain.PlainLoginModule required username="svc-{dr.app.name}" '
                f'password="{secret}";')
        # The Java client ignores such a key, so a typo finding on it is true as well.
        dr.custom(variant, jaas, {"kip-sensitive-prefix", "secret-password-fragment"},
                  frozenset({ENTROPY, "unknown-key-typo"}), secret)
    return True


def _no_software_name(dr: Draft) -> bool:
    """A client below ApiVersions v3 (no software name) pushing its credentials under its own key names."""
    if dr.app.role == "streams":
        return False
    dr.software = None
    secret = tokens.password(dr.rng)
    key = dr.rng.choice(("sasl_plain_password", "database.password", "SASLPlainPassword"))
    dr.custom(key, secret, {"sensitive-key-name"}, frozenset({ENTROPY, "kip-sensitive-custom"}), secret)
    return True


LEAKS: tuple[Fault, ...] = (
    ("leak/datadog-api-key", 4, _datadog),
    ("leak/owner-email", 3, _owner_email),
    ("leak/schema-registry-url-credentials", 3, _registry_url_creds),
    ("leak/schema-registry-url", 2, _registry_url_plain),
    ("leak/schema-registry-basic-auth", 3, _registry_basic_auth),
    ("leak/database-password", 2, _database_password),
    ("leak/aws-keys", 2, _aws_keys),
    ("leak/slack-token", 1, _slack_token),
    ("leak/bearer-jwt", 1, _bearer_header),
    ("leak/private-key", 1, _private_key),
    ("leak/bootstrap-credentials", 2, _bootstrap_creds),
    ("leak/token-in-client-id", 4, _token_in_client_id),
    ("leak/client-sasl-password", 5, _client_sasl_password),
    ("leak/no-software-name", 2, _no_software_name),
)

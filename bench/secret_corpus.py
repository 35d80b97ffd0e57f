"""A labelled set of config values for the secret-scan benchmark (deterministic, seeded).

``labelled_values(seed)`` returns ``(value, is_secret, category)`` triples: real-looking
secrets of every kind the issue names, generated synthetically (nothing here is a
live credential), and the negatives a Kafka client configuration is full of: UUIDs,
hex build ids and hashes, host lists, identifiers, class names, numbers, paths,
URLs without credentials, config-provider references, pod names, versions.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid

__all__ = ["labelled_values"]

_B62 = string.ascii_letters + string.digits
_B64 = _B62 + "+/"
_B64URL = _B62 + "-_"
_UP_DIGITS = string.ascii_uppercase + "234567"
_WORDS = ("orders", "payments", "billing", "inventory", "audit", "events", "clicks", "users", "metrics", "search",
          "checkout", "ledger", "shipping", "fraud", "catalog", "profile", "session", "notify", "report", "stream")
_ENVS = ("prod", "staging", "dev", "qa", "eu-west-1", "us-east-1", "ap-south-1")
_DOMAINS = ("example.com", "corp.internal", "kafka.svc.cluster.local", "acme.io")


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _password(rng: random.Random) -> str:
    style = rng.randrange(4)
    if style == 0:
        return rng.choice(_WORDS).capitalize() + str(rng.randrange(10, 9999)) + rng.choice("!#%*")
    if style == 1:
        return _rand(rng, _B62, rng.randrange(10, 24))
    if style == 2:
        return f"{rng.choice(_WORDS)}-{rng.choice(_WORDS)}-{rng.randrange(100)}"
    return _rand(rng, _B62 + "!@#%^*", rng.randrange(12, 20))


def _aws_key_id(rng: random.Random) -> str:
    return rng.choice(("AKIA", "ASIA")) + _rand(rng, _UP_DIGITS, 16)


def _jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}).encode())
    claims = {"sub": rng.choice(_WORDS) + str(rng.randrange(1000)), "iat": 1_700_000_000 + rng.randrange(10**7),
              "exp": 1_800_000_000 + rng.randrange(10**7), "scope": rng.choice(["kafka", "read write", "admin"])}
    payload = _b64url(json.dumps(claims).encode())
    return f"{header}.{payload}.{_b64url(rng.randbytes(rng.choice([32, 64, 256])))}"


def _github(rng: random.Random) -> str:
    if rng.random() < 0.25:
        return "github_pat_" + _rand(rng, _B62, 22) + "_" + _rand(rng, _B62, 59)
    return rng.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + _rand(rng, _B62, 36)


def _pem(rng: random.Random) -> str:
    kind = rng.choice(["RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED "])
    body = base64.encodebytes(rng.randbytes(rng.choice([121, 256, 600]))).decode().strip()
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


def _host(rng: random.Random) -> str:
    return f"{rng.choice(['broker', 'kafka', 'b'])}{rng.randrange(1, 30)}.{rng.choice(_ENVS)}.{rng.choice(_DOMAINS)}"


def _url_credentials(rng: random.Random) -> str:
    user, pw = rng.choice(_WORDS) + str(rng.randrange(100)), _password(rng).replace("@", "").replace("/", "")
    style = rng.randrange(4)
    if style == 0:
        return f"https://{user}:{pw}@{_host(rng)}/api/v{rng.randrange(1, 4)}"
    if style == 1:
        return f"postgres://{user}:{pw}@db.{rng.choice(_DOMAINS)}:5432/{rng.choice(_WORDS)}"
    if style == 2:
        return ",".join(f"{user}:{pw}@{_host(rng)}:9092" for _ in range(rng.randrange(1, 4)))
    return f"SASL_SSL://{user}:{pw}@{_host(rng)}:9093"


def _password_fragment(rng: random.Random) -> str:
    user, pw = rng.choice(_WORDS), _password(rng).replace('"', "").replace(";", "")
    style = rng.randrange(5)
    if style == 0:
        return f'org.apache.kafka.common.security.plain.PlainLoginModule required username="{user}" password="{pw}";'
    if style == 1:
        return f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{user}" password="{pw}";'
    if style == 2:
        return f"Server=db.{rng.choice(_DOMAINS)};Database={user};User Id={user};Password={pw};"
    if style == 3:
        return f"user={user} password={pw}"
    return f"api_key={_rand(rng, _B62, rng.randrange(16, 40))}"


def _high_entropy(rng: random.Random) -> str:
    style = rng.randrange(6)
    if style == 0:
        return _rand(rng, _B62, rng.randrange(20, 48))
    if style == 1:
        return base64.b64encode(rng.randbytes(rng.choice([24, 30, 32, 48, 64]))).decode()
    if style == 2:
        return _b64url(rng.randbytes(32))
    if style == 3:  # an AWS secret access key: 40 base64 characters
        return _rand(rng, _B64, 40)
    if style == 4:  # vendor tokens with documented prefixes
        return rng.choice([
            "xoxb-" + "-".join(_rand(rng, string.digits, 12) for _ in range(2)) + "-" + _rand(rng, _B62, 24),
            "AIza" + _rand(rng, _B62 + "-_", 35),
            "sk_live_" + _rand(rng, _B62, 24),
        ])
    return f"{_rand(rng, _UP_DIGITS, 16)}:{_rand(rng, _B64, 64)}"  # Confluent Cloud style key:secret


def _identifier(rng: random.Random) -> str:
    a, b = rng.choice(_WORDS), rng.choice(_WORDS)
    style = rng.randrange(7)
    if style == 0:
        return f"{a}-{b}-consumer-{rng.choice(_ENVS)}"
    if style == 1:
        return f"{a}_{b}_v{rng.randrange(1, 5)}"
    if style == 2:
        return f"{a.capitalize()}{b.capitalize()}Consumer{rng.randrange(2000, 2030)}"
    if style == 3:
        return f"{a}-service-{uuid.UUID(int=rng.getrandbits(128)).hex[:4]}"
    if style == 4:
        return f"{a}.{b}.{rng.choice(['events', 'commands', 'dlq', 'retry'])}.v{rng.randrange(1, 4)}"
    if style == 5:
        pod = _rand(rng, string.ascii_lowercase + string.digits, 5)
        return f"{a}-{rng.choice(['7d9f8b6c5', '5c8d7f9b4', '6f4b9c8d7'])}-{pod}"
    return f"User:{a}{rng.randrange(100)}"


def _number_or_enum(rng: random.Random) -> str:
    return rng.choice([
        str(rng.randrange(0, 10**rng.randrange(1, 10))), "all", "-1", "0", "1", "true", "false", "lz4", "zstd",
        "snappy", "gzip", "none", "read_committed", "read_uncommitted", "earliest", "latest", "SASL_SSL", "PLAIN",
        "SCRAM-SHA-512", "OAUTHBEARER", "use_all_dns_ips", "classic", "consumer", "PT30S", "0.8", "1.0E-4",
        f"{rng.randrange(1, 1000)}ms", "2147483647", "9223372036854775807",
    ])


def _class_name(rng: random.Random) -> str:
    return rng.choice([
        "org.apache.kafka.common.serialization.StringSerializer",
        "org.apache.kafka.common.serialization.ByteArrayDeserializer",
        "io.confluent.kafka.serializers.KafkaAvroSerializer",
        "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
        "org.apache.kafka.clients.producer.internals.DefaultPartitioner",
        "org.apache.kafka.common.security.plain.PlainLoginModule required;",
        f"com.acme.{rng.choice(_WORDS)}.kafka.{rng.choice(_WORDS).capitalize()}Interceptor",
        "org.apache.kafka.common.metrics.JmxReporter,io.micrometer.core.instrument.binder.kafka.KafkaMetrics",
    ])


def _path(rng: random.Random) -> str:
    return rng.choice([
        f"/var/lib/kafka/{rng.choice(_WORDS)}/data", f"/etc/kafka/secrets/{rng.choice(_WORDS)}.truststore.jks",
        f"/opt/app/config/{rng.choice(_WORDS)}-client.properties", f"C:\\kafka\\config\\{rng.choice(_WORDS)}.jks",
        f"/tmp/kafka-streams/{rng.choice(_WORDS)}-app-{rng.randrange(100)}", "/usr/bin/kinit",
    ])


def _url(rng: random.Random) -> str:
    return rng.choice([
        f"https://schema-registry.{rng.choice(_DOMAINS)}:8081",
        f"https://login.{rng.choice(_DOMAINS)}/oauth2/v2.0/token?client=kafka&scope={rng.choice(_WORDS)}",
        f"http://{_host(rng)}:8083/connectors/{rng.choice(_WORDS)}/status",
        f"https://{rng.choice(_DOMAINS)}/.well-known/jwks.json",
        f"file:///etc/kafka/{rng.choice(_WORDS)}.json",
    ])


def _host_list(rng: random.Random) -> str:
    style = rng.randrange(3)
    if style == 0:
        return ",".join(f"{_host(rng)}:{rng.choice([9092, 9093, 9094])}" for _ in range(rng.randrange(1, 6)))
    if style == 1:
        return ",".join(f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}:9092"
                        for _ in range(rng.randrange(1, 4)))
    return f"[2001:db8::{rng.randrange(1, 9999):x}]:9092"


def _hex_id(rng: random.Random) -> str:
    n = rng.choice([7, 12, 16, 32, 40, 64])
    value = rng.randbytes(32).hex()[:n]
    return rng.choice([value, value.upper(), f"build-{value}", f"sha256:{rng.randbytes(32).hex()}"])


def _uuid(rng: random.Random) -> str:
    u = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    return rng.choice([u, u.upper(), u.replace("-", "")])


def _provider_reference(rng: random.Random) -> str:
    return rng.choice([
        "${file:/etc/kafka/secrets.properties:sasl.password}",
        "${env:KAFKA_SASL_PASSWORD}",
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="svc" '
        'password="${file:/run/secrets/kafka:password}";',
        "password=${vault:secret/data/kafka:password}",
        "https://user:****@" + _host(rng) + "/",
        "[hidden]",
    ])


def _version_or_time(rng: random.Random) -> str:
    return rng.choice([
        f"{rng.randrange(1, 5)}.{rng.randrange(10)}.{rng.randrange(10)}",
        f"2.{rng.randrange(15)}.0-rdkafka-2.{rng.randrange(15)}.0",
        f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:00:00Z",
        f"{rng.randrange(1, 5)}.{rng.randrange(10)}.{rng.randrange(10)}-SNAPSHOT",
        f"{rng.choice(_WORDS)}@{rng.choice(_DOMAINS)}",
    ])


POSITIVES = {
    "aws_access_key_id": (_aws_key_id, 150),
    "jwt": (_jwt, 150),
    "github_token": (_github, 150),
    "pem_private_key": (_pem, 100),
    "url_credentials": (_url_credentials, 200),
    "password_fragment": (_password_fragment, 250),
    "high_entropy": (_high_entropy, 300),
}
NEGATIVES = {
    "uuid": (_uuid, 300),
    "hex_id": (_hex_id, 300),
    "host_list": (_host_list, 250),
    "identifier": (_identifier, 350),
    "class_name": (_class_name, 150),
    "number_or_enum": (_number_or_enum, 300),
    "path": (_path, 150),
    "url_without_credentials": (_url, 150),
    "provider_reference": (_provider_reference, 100),
    "version_or_time": (_version_or_time, 150),
}


def labelled_values(seed: int = 5) -> list[tuple[str, bool, str]]:
    """The labelled set, shuffled: (value, is_secret, category)."""
    rng = random.Random(seed)
    out: list[tuple[str, bool, str]] = []
    for table, label in ((POSITIVES, True), (NEGATIVES, False)):
        for category, (make, count) in table.items():
            out += [(make(rng), label, category) for _ in range(count)]
    rng.shuffle(out)
    return out

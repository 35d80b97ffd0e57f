"""Random strings for the evaluation fleet: planted secrets and the identifiers that only look random.

Secrets follow their issuers' documented formats (AWS access key ids, GitHub
``ghp_`` tokens, RFC 7519 JWTs, Slack ``xoxb-`` tokens, Datadog's 32-hex API keys);
identifiers follow their frameworks' naming (Kafka Streams process UUIDs,
Kubernetes ReplicaSet hashes and pod suffixes, Spark's Kafka source group ids,
Confluent Cloud and MSK bootstrap host names). Everything is drawn from one
``random.Random``, so a seed gives the same fleet.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid

__all__ = [
    "api_hex",
    "aws_access_key",
    "aws_secret",
    "email",
    "github_token",
    "jwt",
    "mixed_token",
    "password",
    "pod_name",
    "slack_token",
    "spark_group",
    "uuid4",
]

_ALNUM = string.ascii_letters + string.digits
_K8S = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' SafeEncodeString alphabet
_PUNCT = "!#%&*+-=?@^_"
_FIRST = ("maria", "li", "omar", "anna", "raj", "chen", "sofia", "lukas", "amara", "jonas")
_LAST = ("garcia", "wang", "haddad", "novak", "patel", "kim", "rossi", "weber", "okafor", "berg")


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _mixed(rng: random.Random, alphabet: str, n: int) -> str:
    """``n`` characters with at least one lower case letter, upper case letter and digit."""
    while True:
        out = _pick(rng, alphabet, n)
        if any(c.islower() for c in out) and any(c.isupper() for c in out) and any(c.isdigit() for c in out):
            return out


def uuid4(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def password(rng: random.Random) -> str:
    """A human-made password: mixed case, digits and punctuation, 14 to 22 characters."""
    return _mixed(rng, _ALNUM + _PUNCT, rng.randint(14, 22))


def mixed_token(rng: random.Random, n: int = 32) -> str:
    """A random API secret of ``n`` letters and digits."""
    return _mixed(rng, _ALNUM, n)


def aws_access_key(rng: random.Random) -> str:
    return rng.choice(("AKIA", "ASIA")) + _pick(rng, string.ascii_uppercase + "234567", 16)


def aws_secret(rng: random.Random) -> str:
    return _mixed(rng, _ALNUM + "/+", 40)


def github_token(rng: random.Random) -> str:
    return "ghp_" + _mixed(rng, _ALNUM, 36)


def slack_token(rng: random.Random) -> str:
    return f"xoxb-{rng.randint(10**10, 10**11)}-{rng.randint(10**11, 10**12)}-{_mixed(rng, _ALNUM, 24)}"


def api_hex(rng: random.Random) -> str:
    """A Datadog-style API key: 32 lower-case hex characters."""
    return _pick(rng, "0123456789abcdef", 32)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(rng: random.Random, subject: str) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    iat = rng.randint(1_700_000_000, 1_780_000_000)
    payload = _b64url(json.dumps({"sub": subject, "iat": iat, "exp": iat + 3600}).encode())
    return f"{header}.{payload}.{_b64url(rng.randbytes(32))}"


def email(rng: random.Random, domain: str) -> str:
    return f"{rng.choice(_FIRST)}.{rng.choice(_LAST)}@{domain}"


def pod_name(rng: random.Random, deployment: str) -> str:
    """A Deployment pod: ``<deployment>-<pod-template-hash>-<suffix>``."""
    return f"{deployment}-{_pick(rng, _K8S, rng.choice((9, 10)))}-{_pick(rng, _K8S, 5)}"


def spark_group(rng: random.Random) -> str:
    """Spark's Kafka source group id: ``spark-kafka-source-<UUID>-<metadata path hashCode>``."""
    return f"spark-kafka-source-{uuid4(rng)}-{rng.randint(-2**31, 2**31 - 1)}"

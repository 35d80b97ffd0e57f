"""The local broker's secured listeners: SASL_SSL, SSL with client certificates, SASL_PLAINTEXT.

Beside its PLAINTEXT listener, a broker started with a :class:`BrokerSecurity` serves

- ``SASL_SSL``: SCRAM-SHA-512 (users created when the storage is formatted) and PLAIN;
- ``SSL``: TLS with a client certificate required (the principal is the certificate's subject);
- ``SASL_PLAINTEXT``: PLAIN and SCRAM-SHA-512 without TLS.

Certificates come from a :class:`configwatch.localkafka.certs.LocalCA`. PLAIN users live in the
listener's JAAS configuration, so their passwords are in the broker's ``server.properties``:
for a local broker only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from configwatch.localkafka.certs import LocalCA, Pem
from configwatch.secrets import SecretStr

__all__ = ["MECHANISMS", "SECURE_PROTOCOLS", "BrokerSecurity"]

SECURE_PROTOCOLS = ("SASL_SSL", "SSL", "SASL_PLAINTEXT")  # each a listener of that name
MECHANISMS = ("SCRAM-SHA-512", "PLAIN")
_SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
_PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"


@dataclass(frozen=True)
class BrokerSecurity:
    """The CA that signs the broker's certificate and the users the SASL listeners know."""

    ca: LocalCA
    users: Mapping[str, SecretStr] = field(default_factory=dict)
    # KIP-368: the longest SCRAM session on the SASL_PLAINTEXT listener before a client re-authenticates (None:
    # no limit, Kafka's default).
    scram_reauth_ms: int | None = None

    @property
    def broker_pem(self) -> Pem:
        return self.ca.issue("broker", "/O=configwatch/CN=localhost", server=True)

    def properties(self, plaintext_port: int, controller_port: int, ports: Mapping[str, int]) -> dict[str, str]:
        """server.properties entries for every listener (``ports``: a port per secure protocol)."""
        listeners = {"PLAINTEXT": plaintext_port, **{p: ports[p] for p in SECURE_PROTOCOLS}}
        props = {
            "listeners": ",".join([*(f"{p}://127.0.0.1:{port}" for p, port in listeners.items()),
                                   f"CONTROLLER://127.0.0.1:{controller_port}"]),
            "advertised.listeners": ",".join(f"{p}://127.0.0.1:{port}" for p, port in listeners.items()),
            "listener.security.protocol.map": ",".join([*(f"{p}:{p}" for p in listeners), "CONTROLLER:PLAINTEXT"]),
            "sasl.enabled.mechanisms": ",".join(MECHANISMS),
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(self.broker_pem.bundle()),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.ca.cert),
            "ssl.endpoint.identification.algorithm": "",
            "listener.name.ssl.ssl.client.auth": "required",
        }
        plain_users = " ".join(f'user_{name}="{pw.get_secret_value()}"' for name, pw in self.users.items())
        for listener in ("sasl_ssl", "sasl_plaintext"):
            props[f"listener.name.{listener}.scram-sha-512.sasl.jaas.config"] = f"{_SCRAM_MODULE} required;"
            props[f"listener.name.{listener}.plain.sasl.jaas.config"] = f"{_PLAIN_MODULE} required {plain_users};"
        if self.scram_reauth_ms is not None:
            props["listener.name.sasl_plaintext.scram-sha-512.connections.max.reauth.ms"] = str(self.scram_reauth_ms)
        return props

    def format_args(self) -> list[str]:
        """``kafka-storage format`` arguments creating the SCRAM-SHA-512 users."""
        return [f"--add-scram=SCRAM-SHA-512=[name={name},password={pw.get_secret_value()}]"
                for name, pw in self.users.items()]

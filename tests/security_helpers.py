"""Helpers for the TLS and SASL tests: the broker's secured listeners, and each client's settings for them."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from configwatch.localkafka import BrokerInfo
from configwatch.localkafka.certs import Pem
from configwatch.localkafka.security import BrokerSecurity
from configwatch.secrets import SecretStr

__all__ = ["MECHANISM", "REAUTH_MS", "USER", "SecureBroker", "planted_users"]

USER = "alice"
# SCRAM sessions on the broker's SASL_PLAINTEXT listener last this long: clients re-authenticate (KIP-368).
# The other tests use PLAIN there and SCRAM over SASL_SSL, which keep Kafka's default (no limit).
REAUTH_MS = 2000
# The mechanism each secured protocol is tested with (SSL authenticates by client certificate).
MECHANISM = {"SASL_SSL": "SCRAM-SHA-512", "SSL": None, "SASL_PLAINTEXT": "PLAIN", "PLAINTEXT": None}


def planted_users() -> dict[str, SecretStr]:
    """The broker's SASL users; the passwords are random per run, so scans can look for them."""
    return {USER: SecretStr(f"planted-password-{secrets.token_hex(12)}")}


@dataclass(frozen=True)
class SecureBroker:
    """The test broker and what its secured listeners need: the CA, the certificates it issues, the users."""

    info: BrokerInfo
    security: BrokerSecurity

    @property
    def ca_file(self) -> Path:
        return self.security.ca.cert

    @property
    def password(self) -> str:
        return self.security.users[USER].get_secret_value()

    def pem(self, name: str, subject: str, *, server: bool = False) -> Pem:
        return self.security.ca.issue(name, subject, server=server)

    def gateway_settings(self, protocol: str) -> dict[str, Any]:
        """Settings of a gateway that speaks ``protocol`` to clients and stands before the listener speaking it."""
        tls = protocol in ("SSL", "SASL_SSL")
        server = self.pem("gateway", "/O=configwatch/CN=gateway", server=True)
        upstream_client = self.pem("gateway-upstream", "/O=configwatch/CN=configwatch-gateway")
        settings: dict[str, Any] = {
            "upstream": self.info.bootstrap_for(protocol), "upstream_security_protocol": protocol,
            "gateway_security_protocol": protocol, "gateway_broker_port_base": 0,
        }
        if tls:
            settings.update(gateway_ssl_certfile=server.cert, gateway_ssl_keyfile=server.key,
                            upstream_ssl_cafile=self.ca_file)
        if protocol == "SSL":  # both hops authenticate by certificate
            settings.update(gateway_ssl_cafile=self.ca_file, upstream_ssl_certfile=upstream_client.cert,
                            upstream_ssl_keyfile=upstream_client.key)
        return settings

    def client_pem(self) -> Pem:
        return self.pem("client-carol", "/O=configwatch/OU=apps/CN=carol")

    def kafka_python(self, protocol: str, password: str | None = None) -> dict[str, Any]:
        """kafka-python's settings for a client of the gateway speaking ``protocol``."""
        out: dict[str, Any] = {"security_protocol": protocol}
        if protocol in ("SSL", "SASL_SSL"):
            out["ssl_cafile"] = str(self.ca_file)
        if protocol == "SSL":
            out.update(ssl_certfile=str(self.client_pem().cert), ssl_keyfile=str(self.client_pem().key))
        if MECHANISM[protocol]:
            out.update(sasl_mechanism=MECHANISM[protocol], sasl_plain_username=USER,
                       sasl_plain_password=password or self.password)
        return out

    def librdkafka(self, protocol: str, password: str | None = None) -> dict[str, Any]:
        """confluent-kafka's (librdkafka's) settings."""
        out: dict[str, Any] = {"security.protocol": protocol}
        if protocol in ("SSL", "SASL_SSL"):
            out["ssl.ca.location"] = str(self.ca_file)
        if protocol == "SSL":
            out.update({"ssl.certificate.location": str(self.client_pem().cert),
                        "ssl.key.location": str(self.client_pem().key)})
        if MECHANISM[protocol]:
            out.update({"sasl.mechanism": MECHANISM[protocol], "sasl.username": USER,
                        "sasl.password": password or self.password})
        return out

    def java(self, protocol: str) -> dict[str, str]:
        """The Java client's settings (a properties file's lines)."""
        out = {"security.protocol": protocol}
        if protocol in ("SSL", "SASL_SSL"):
            out.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": str(self.ca_file)})
        if protocol == "SSL":
            out.update({"ssl.keystore.type": "PEM", "ssl.keystore.location": str(self.client_pem().bundle())})
        mechanism = MECHANISM[protocol]
        if mechanism:
            module = ("org.apache.kafka.common.security.scram.ScramLoginModule" if mechanism.startswith("SCRAM")
                      else "org.apache.kafka.common.security.plain.PlainLoginModule")
            out.update({"sasl.mechanism": mechanism,
                        "sasl.jaas.config": f'{module} required username="{USER}" password="{self.password}";'})
        return out

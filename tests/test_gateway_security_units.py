"""What the gateway reads of TLS and SASL, and the security settings it refuses, without a broker."""

from __future__ import annotations

import struct
from dataclasses import replace
from pathlib import Path

import pytest

from configwatch.errors import UsageError
from configwatch.localkafka.certs import LocalCA
from configwatch.settings import Settings
from policy.gateway.config import GatewayConfig
from policy.gateway.sasl import SaslExchange, authenticate_bytes, identity_of, response_error
from policy.gateway.tls import principal_of


def _settings(**overrides: object) -> Settings:
    return replace(Settings.load(environ={}), **overrides)


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> LocalCA:
    return LocalCA(tmp_path_factory.mktemp("ca"))


def test_plain_and_scram_identities_are_read_and_nothing_else() -> None:
    assert identity_of("PLAIN", b"\0alice\0s3cret") == "alice"
    assert identity_of("PLAIN", b"admin\0alice\0s3cret") == "alice"
    assert identity_of("PLAIN", b"alice-only") is None
    assert identity_of("SCRAM-SHA-512", b"n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL") == "alice"
    assert identity_of("SCRAM-SHA-256", b"n,a=bob,n=b=2Cob=3D,r=abc") == "b,ob="
    assert identity_of("SCRAM-SHA-256", b"c=biws,r=abc,p=proof") is None  # a client-final message names no one
    assert identity_of("OAUTHBEARER", b"n,,\x01auth=Bearer eyJ.token\x01\x01") is None
    assert identity_of("PLAIN", b"\xff\xfe") is None


def _authenticate_request(auth: bytes, version: int) -> bytes:
    client_id = b"cid"
    header = struct.pack(">hhih", 36, version, 7, len(client_id)) + client_id
    if version >= 2:
        return header + b"\0" + bytes([len(auth) + 1]) + auth + b"\0"
    return header + struct.pack(">i", len(auth)) + auth


@pytest.mark.parametrize("version", [0, 1, 2])
def test_authenticate_bytes_are_found_in_every_version(version: int) -> None:
    assert authenticate_bytes(_authenticate_request(b"\0alice\0pw", version), version) == b"\0alice\0pw"


def test_a_response_error_code_is_read_after_the_header() -> None:
    assert response_error(struct.pack(">ih", 7, 58), 36, 1) == 58
    assert response_error(struct.pack(">i", 7) + b"\0" + struct.pack(">h", 58), 36, 2) == 58
    assert response_error(struct.pack(">ih", 7, 0), 17, 1) == 0


def test_scram_authenticates_after_two_accepted_rounds_and_keeps_its_first_identity() -> None:
    exchange = SaslExchange()
    exchange.handshake(struct.pack(">hhih", 17, 1, 1, -1) + struct.pack(">h", 13) + b"SCRAM-SHA-512")
    assert exchange.mechanism == "SCRAM-SHA-512"
    exchange.authenticate(_authenticate_request(b"n,,n=alice,r=nonce", 2), 2)
    assert not exchange.accepted() and exchange.principal is None
    assert exchange.accepted() and exchange.principal == "User:alice"
    exchange.handshake(struct.pack(">hhih", 17, 1, 1, -1) + struct.pack(">h", 13) + b"SCRAM-SHA-512")
    exchange.authenticate(_authenticate_request(b"n,,n=mallory,r=n2", 2), 2)  # KIP-368: the broker checks it
    assert exchange.principal == "User:alice"


def test_a_certificate_subject_is_named_as_kafkas_default_principal_builder_does() -> None:
    cert = {"subject": ((("countryName", "DE"),), (("organizationName", "Acme, Inc"),),
                        (("organizationalUnitName", "apps"),), (("commonName", "carol"),))}
    assert principal_of(cert) == "User:CN=carol,OU=apps,O=Acme\\, Inc,C=DE"
    assert principal_of({}) is None


def test_tls_settings_that_cannot_work_are_refused_with_one_line(ca: LocalCA, tmp_path: Path) -> None:
    server = ca.issue("gw", "/CN=gw", server=True)
    other = ca.issue("other", "/CN=other", server=True)
    cases = {
        "needs --gateway-ssl-certfile": _settings(gateway_security_protocol="SSL"),
        "no such file": _settings(gateway_security_protocol="SSL", gateway_ssl_certfile=tmp_path / "missing.pem",
                                  gateway_ssl_keyfile=server.key),
        "does not fit": _settings(gateway_security_protocol="SSL", gateway_ssl_certfile=server.cert,
                                  gateway_ssl_keyfile=other.key),
        "applies to an SSL or SASL_SSL --gateway": _settings(gateway_ssl_certfile=server.cert),
        "proxy mode": _settings(gateway_security_protocol="SASL_PLAINTEXT"),
        "both sides use it": _settings(gateway_security_protocol="SASL_PLAINTEXT", upstream="127.0.0.1:9092"),
        "applies to an SSL or SASL_SSL upstream": _settings(upstream="127.0.0.1:9092",
                                                            upstream_ssl_cafile=ca.cert),
        "different security protocols": _settings(upstream="SSL://127.0.0.1:9092,SASL_SSL://127.0.0.1:9093"),
        "name versions among": _settings(gateway_security_protocol="SSL", gateway_ssl_certfile=server.cert,
                                         gateway_ssl_keyfile=server.key, gateway_ssl_enabled_protocols="TLSv9"),
        "this one speaks SSL itself": _settings(gateway_security_protocol="SSL", gateway_ssl_certfile=server.cert,
                                                gateway_ssl_keyfile=server.key,
                                                gateway_tls_offered_at="kafka.example:9093"),
        "give HOST:PORT": _settings(gateway_tls_offered_at="kafka.example"),
    }
    for expected, settings in cases.items():
        with pytest.raises(UsageError, match=expected) as caught:
            GatewayConfig.from_settings(settings)
        assert "\n" not in str(caught.value)


def test_tls_settings_that_work_build_both_contexts(ca: LocalCA) -> None:
    server = ca.issue("gw", "/CN=gw", server=True)
    config = GatewayConfig.from_settings(_settings(
        gateway_security_protocol="SASL_SSL", gateway_ssl_certfile=server.cert, gateway_ssl_keyfile=server.key,
        upstream="SASL_SSL://127.0.0.1:9093", upstream_ssl_cafile=ca.cert, gateway_advertised_host="kafka.example"))
    assert config.server_ssl is not None and config.upstream_ssl is not None
    assert config.upstream_protocol == "SASL_SSL" and config.sasl
    assert config.upstream_ssl.check_hostname
    assert config.advertised == "kafka.example"
    plaintext = GatewayConfig.from_settings(_settings(gateway_tls_offered_at="kafka.example:9093"))
    assert plaintext.tls_offered_at == "kafka.example:9093"

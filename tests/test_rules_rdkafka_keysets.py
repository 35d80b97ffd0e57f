"""The librdkafka key-set generator's reading of CONFIGURATION.md, and what the checked-in sets say."""

from __future__ import annotations

from udfs.rules.generate_rdkafka_keysets import document, parse
from udfs.rules.keysets import key_set_file, profile

MARKDOWN = r"""# Configuration properties
## Global configuration properties

Property | C/P | Range | Default | Importance | Description
---|---|---|--:|---|---
metadata.broker.list | * | | | high | Initial list of brokers. <br>*Type: string*
bootstrap.servers | * | | | high | Alias for `metadata.broker.list`: Initial list of brokers. <br>*Type: string*
sasl.kerberos.kinit.cmd | * | | kinit -R \|\| kinit -t | low | Shell command. <br>*Type: string*
enable.auto.commit | C | true, false | true | high | Automatically commit offsets. <br>*Type: boolean*
queue.buffering.max.ms | P | 0 .. 900000 | 5 | high | Delay. <br>*Type: float*
linger.ms | P | 0 .. 900000 | 5 | high | Alias for `queue.buffering.max.ms`: Delay. <br>*Type: float*
socket.blocking.max.ms | * | 1 .. 60000 | 1000 | low | **DEPRECATED** No longer used. <br>*Type: integer*
oauthbearer_token_refresh_cb | * | | | low | Callback. <br>*Type: see dedicated API*

## Topic configuration properties

Property | C/P | Range | Default | Importance | Description
---|---|---|--:|---|---
request.required.acks | P | -1 .. 1000 | -1 | high | Acks. <br>*Type: integer*
acks | P | -1 .. 1000 | -1 | high | Alias for `request.required.acks`: Acks. <br>*Type: integer*
auto.commit.enable | C | true, false | true | low | **DEPRECATED** Legacy. <br>*Type: boolean*
enable.auto.commit | C | true, false | true | low | **DEPRECATED** Alias for `auto.commit.enable`: L.<br>*Type: boolean*
"""


def test_parse_reads_roles_types_defaults_and_aliases() -> None:
    roles, aliases = parse(MARKDOWN)
    assert set(roles["admin"]) == {"metadata.broker.list", "bootstrap.servers", "sasl.kerberos.kinit.cmd",
                                   "socket.blocking.max.ms", "oauthbearer_token_refresh_cb"}  # the * properties
    assert roles["producer"]["linger.ms"] == {"type": "DOUBLE", "default": "5"}
    assert roles["producer"]["acks"] == {"type": "INT", "default": "-1"}
    assert "acks" not in roles["consumer"] and "enable.auto.commit" not in roles["producer"]
    assert roles["consumer"]["socket.blocking.max.ms"]["deprecated"] is True
    assert roles["consumer"]["metadata.broker.list"]["default"] is None
    assert roles["consumer"]["oauthbearer_token_refresh_cb"]["type"] == "UNKNOWN"
    assert roles["consumer"]["sasl.kerberos.kinit.cmd"]["default"] == "kinit -R || kinit -t"  # escaped pipes
    # The consumer's global enable.auto.commit wins over the topic alias of the same name, and is no alias.
    assert roles["consumer"]["enable.auto.commit"] == {"type": "BOOLEAN", "default": "true"}
    assert aliases == {"acks": "request.required.acks", "bootstrap.servers": "metadata.broker.list",
                       "linger.ms": "queue.buffering.max.ms"}


def test_document_adds_the_kip_511_properties() -> None:
    doc = document("2.15", "v2.15.0", MARKDOWN)
    assert doc["version"] == "2.15.0"
    for role in ("producer", "consumer", "admin"):
        keys = doc["roles"][role]["keys"]
        assert keys["client.software.name"]["default"] == "librdkafka"
        assert keys["client.software.version"]["default"] == "2.15.0"


def test_each_release_judges_with_its_own_properties_and_defaults() -> None:
    old = profile(str(key_set_file("librdkafka", "1.5.0")), "producer")
    new = profile(str(key_set_file("librdkafka", "1.5.2")), "producer")
    assert (old.default("retries"), new.default("retries")) == ("2", "2147483647")  # changed in 1.5.2
    assert "ssl.ca.pem" not in profile(str(key_set_file("librdkafka", "1.7.0")), "consumer").keys
    assert "ssl.ca.pem" in profile(str(key_set_file("librdkafka", "2.0.2")), "consumer").keys

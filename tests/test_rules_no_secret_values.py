"""Fingerprints only: no planted secret value appears in any finding field, the stateful rules' state, or logs."""

from __future__ import annotations

import json
import logging

import pytest

from configwatch.secrets import fingerprint
from tests.rules_helpers import JAVA, KEY, RDKAFKA, entry, push, rules_of, stateful_findings

JWT = ("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIiwic2NvcGUiOiJrYWZrYSJ9."
       "c2lnbmF0dXJlLW9mLWEtcGxhbnRlZC1qd3QtdmFsdWU")
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7plantedKeyBody"
SECRETS = {
    "password_value": "Planted-Passw0rd-1",
    "jaas_password": "planted-jaas-pw-2",
    "custom_value": "Planted.Custom.Secret.3",
    "aws_value": "AKIAPLANTED4VALUE5XY",
    "jwt_value": JWT,
    "github_key": "ghp_" + "Planted6KeyNameToken7abcdefghijklmno",
    "aws_key": "AKIAPLANTED8KEYNAME9",
    "client_id": "ghp_" + "Planted0ClientIdTokenabcdefghijklmnop",
    "principal": "AKIAPLANTEDPRINCIPAL",
    "url_password": "planted-url-pw-10",
    "pem_body": PEM_BODY,
    "entropy_value": "Zq8Xw2Lk9Pm3Nb7Vc4Rt6Yh1",
    "group_id": "Gx7Hq2Lm9Pw4Rt8Yb3Nc5Kd",
    "strategy": "com.acme.PlantedAssignor11",
    "software_version": "AKIAPLANTED12VERSION",
    "txn_id": "Tq9Wm2Lx8Pn4Rb7Yc3Kd6Fh",
    "fragment": "planted-fragment-pw-13",
    "connection_id": "conn-Kq2Lm9Pw4Rt8Yb3Nc5Xd7",
    "rdkafka_secret": "planted-rdkafka-pw-14",
    "redacted_key_value": "PlantedButRedacted15",
}


def planted_pushes() -> list[dict[str, object]]:
    s = SECRETS
    return [
        push([entry("acks", "all"), entry("ssl.key.password", s["password_value"], "PASSWORD"),
              entry("sasl.jaas.config", 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                    f'username="app" password="{s["jaas_password"]}";', "PASSWORD"),
              entry("app.db.secret", s["custom_value"]), entry("app.s3.id", s["aws_value"]),
              entry("sasl.oauthbearer.token", s["jwt_value"]), entry(s["github_key"], "1"),
              entry(s["aws_key"], "x"), entry("bootstrap.servers", f"app:{s['url_password']}@b1:9092", "LIST"),
              entry("ssl.keystore.key", f"-----BEGIN PRIVATE KEY-----\n{s['pem_body']}\n-----END PRIVATE KEY-----",
                    "PASSWORD"),
              entry("client.id", s["entropy_value"]), entry("transactional.id", s["txn_id"]),
              entry("enable.idempotence", "false", "BOOLEAN"),
              entry("app.dsn", f"host=db user=app password={s['fragment']}"),
              entry("sasl.jaas.config.extra", None, redacted=True, fingerprint=fingerprint(
                  s["redacted_key_value"], KEY))],
             JAVA, client_id=s["client_id"], principal=f"User:{s['principal']}",
             connection_id=s["connection_id"], client_instance_id=None),
        push([entry("group.id", s["group_id"]), entry("auto.offset.reset", "earliest"),
              entry("partition.assignment.strategy", s["strategy"], "LIST")], JAVA,
             client_software_version=s["software_version"]),
        push([entry("group.id", s["group_id"]), entry("auto.offset.reset", "earliest")], JAVA),
        push([entry("group.id", "g"), entry("sasl.password", s["rdkafka_secret"])], RDKAFKA),
    ]


def test_no_planted_secret_in_any_output_or_state(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    rows, state = stateful_findings(*planted_pushes())
    found = rules_of(rows)
    # The secrets were seen (else the test proves nothing) ...
    assert {"kip-sensitive-type", "kip-sensitive-custom", "secret-aws-access-key", "secret-github-token",
            "secret-jwt", "secret-url-credentials", "secret-password-fragment", "secret-private-key",
            "secret-high-entropy", "secret-in-identity", "policy-redacted", "group-assignment-drift",
            "transactional-without-idempotence", "kip-sensitive-prefix"} <= found
    # ... and none of them travels: not in any field, not in the state Spark would checkpoint, not in logs.
    text = json.dumps(rows) + repr(state) + "".join(s.to_json() for s in state.groups.values()) + \
        "".join(s.to_json() for s in state.fleet.values()) + caplog.text
    leaked = [name for name, value in SECRETS.items() if value in text]
    assert leaked == []
    # Where a secret had to be named, its fingerprint stands in.
    assert fingerprint(SECRETS["password_value"], KEY) in text
    assert f"redacted:{fingerprint(SECRETS['client_id'], KEY)}" in text

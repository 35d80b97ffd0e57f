"""Fingerprints only: no planted secret value appears in any finding field, the stateful rules' state, or logs."""

from __future__ import annotations

import json
import logging

import pytest

from configwatch.secrets import fingerprint
from tests.detection_scenarios import SECRETS, planted_pushes
from tests.rules_helpers import KEY, rules_of, stateful_findings


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

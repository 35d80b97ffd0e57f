"""The JVM detection engine's foundations against Python: float repr, JSON text, fingerprints, alert ids."""

from __future__ import annotations

import json
import random

from configwatch.secrets import SecretStr, fingerprint
from tests.jvmprobe import PROBE_KEY, probe
from udfs.rules.findings import alert_id

KEY = SecretStr(PROBE_KEY)


def _floats() -> list[float]:
    rng = random.Random(7)
    fixed = [0.5, 1.0, -2.5, 1e-05, 0.0001, 1e16, 1e15, 123456789012345678.0, 0.1 + 0.2, 1 / 3, 2.0**63 - 1,
             1.5e300, 5e-324, -0.0, 12.345, 1000000.0, 0.001, 2.25, 9.999999999999999e22]
    return fixed + [rng.uniform(-1e6, 1e6) for _ in range(300)] + [10 ** rng.uniform(-30, 30) for _ in range(300)]


def test_float_repr_is_pythons() -> None:
    values = _floats()
    answers = probe("BasicsProbe", [{"repr": v} for v in values])
    assert answers == [repr(v) for v in values]


def test_json_text_is_pythons() -> None:
    docs = [{"b": [1, 2.5, None, True], "a": "x\"y\\z\n\t\u0001\u00e9\u2028", "c": {"z": 1, "y": -3.0}},
            ["\u00ff", "\U0001F600", 1e-07, 10**15], {"k\u00e9": "v", "k": "w", "K": 0}]
    for sort in (False, True):
        answers = probe("BasicsProbe", [{"dumps": d, "sort": sort} for d in docs])
        assert answers == [json.dumps(d, separators=(",", ":"), ensure_ascii=False, sort_keys=sort) for d in docs]


def test_fingerprints_and_alert_ids_are_pythons() -> None:
    values = ["", "secret", "s\u00e9cr\u00e8t", "\U0001F600 emoji", "x" * 1000]
    assert probe("BasicsProbe", [{"fingerprint": v} for v in values]) == [fingerprint(v, KEY) for v in values]
    cases = [("anomaly", "acks-zero", "abc", ["acks"]), ("sensitive_leak", "kip-sensitive-prefix", "s",
             ["ssl.key.password", "sasl.jaas.config", "\u00e9", "a"]), ("anomaly", "fleet-outlier", "", [])]
    assert probe("BasicsProbe", [{"alert_id": list(c)} for c in cases]) == [alert_id(*c, KEY) for c in cases]

"""Profiles, effective values, stateless anomalies and typos in the JVM against ``udfs.rules``.

``KeySets``, ``Profile``, ``Defaults``, ``Effective``, ``GoDurations``, ``Anomalies`` and ``Typos``
(``io.configwatch.detect``) twin ``udfs.rules.keysets``, ``udfs.rules.defaults``, ``udfs.sensitivity.custom_mask``,
``udfs.rules.effective``, ``udfs.rules.durations``, ``udfs.rules.anomalies.evaluate`` and ``udfs.rules.typos``.
Every push (realistic fleets, the rule tests' cases, fuzzed pushes) goes through both: its profile, custom mask,
effective values, anomaly and typo findings must be the same, messages and evidence JSON byte for byte.
"""

from __future__ import annotations

import json
import math
import random
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tests import rules_helpers as rh
from tests.jvm_pushes import KEY, eval_pushes, simulator_pushes, table
from tests.jvmprobe import probe
from udfs.rules import effective as eff_module
from udfs.rules.anomalies import evaluate
from udfs.rules.batch import PushBatch
from udfs.rules.defaults import band, behaviours, behaviours_at, defaults_at, version_tuple
from udfs.rules.durations import go_duration_ms
from udfs.rules.effective import BOOL_KEYS, NUMERIC_KEYS, RULE_KEYS, STRING_KEYS, effective
from udfs.rules.keysets import UNKNOWN_ROLE, Profile, family_of, key_set_file, known_anywhere, profile
from udfs.rules.typos import edit_distance, nearest_known, typo_findings
from udfs.sensitivity import custom_mask

DATA_FILES = ("apache-kafka-java-3.9.json", "apache-kafka-java-4.3.json", "librdkafka-2.15.json",
              "kafka-python-2.0.json", "kafka-python-2.2.json", "kafka-python-3.0.json", "sarama-1.60.json",
              "franz-go-1.21.json")
NAMES = ("apache-kafka-java", "librdkafka", "confluent-kafka-python", "confluent-kafka-rust", "confluent-kafka-",
         "karafka", "kafka-python", "sarama", "kgo", "franz-go", "mystery", "", None, "Apache-Kafka-Java",
         "apache-kafka-java ", "redacted:0123456789abcdef")
VERSIONS = ("3.9.0", "4.3.1", "2.8.2", "2.0.1", "2.1", "2", "3", "3.0", "3.0.0", "3.0.1", "3.0.2", "3.1", "3.1.0",
            "3.1.1", "3.7", "3.6.9", "4", "4.0", "4.0.0", "4.0.0-SNAPSHOT", "4.3.1-SNAPSHOT", "v1.2", "v3.1.1",
            "V3.1.1", "2.6.0-rdkafka-2.6.0", "1.45.1", "v1.18.1", "trunk", "", None, " 3.0.1", "3.0.1 ", "\t4.0\n",
            "\u0663.\u0660.\u0661", "\uff13.\uff11", "03.01.01", "3..1", "3.", ".3", "99999999999999999999999.1",
            "0", "0.0.0", "2.2", "2.2.15", "3.0.12", "1.60.1", "\u00a03.1.1", "-1", "v", "vv3")


def _null(value: Any) -> Any:
    return "\0null" if value is None else value


def _describe(p: Profile, rule_keys: list[str], probe_keys: list[str]) -> dict[str, Any]:
    mask = p.known_mask(pa.array(probe_keys, pa.string())).to_pylist()
    return {
        "id": p.id, "family": p.family, "version": p.version, "role": p.role, "judge": p.judge,
        "unknown_keys": p.unknown_keys, "durations": p.durations,
        "keys": [[k, s.type, _null(s.default), s.required] for k, s in p.keys.items()],
        "prefixes": {k: sorted(v) for k, v in sorted(p.prefixes.items())},
        "aliases": dict(p.aliases), "equivalents": dict(p.equivalents), "behaviours": sorted(p.behaviours),
        "rules": {rk: [list(p.sources(rk)), _null(p.default(rk)), _null(p.type_of(rk)), p.canonical(rk)]
                  for rk in rule_keys},
        "known": mask,
    }


def _file_doc(file: str) -> dict[str, Any]:
    from udfs.rules.keysets import _key_set  # the parsed data file, as the rules read it

    return _key_set(file)


@cache
def _all_keys() -> tuple[str, ...]:
    names: set[str] = set()
    for file in DATA_FILES:
        for body in _file_doc(file)["roles"].values():
            names.update(body["keys"])
    return tuple(sorted(names))


def _mutations(rng: random.Random, key: str) -> str:
    """A near miss of ``key``: one or two edits (delete, insert, substitute, transpose)."""
    chars = list(key)
    for _ in range(rng.choice((1, 1, 2, 3))):
        op = rng.randrange(4)
        i = rng.randrange(max(1, len(chars)))
        if op == 0 and len(chars) > 1:
            del chars[i]
        elif op == 1:
            chars.insert(i, rng.choice("abcdefgimnorst.-_\u00e9\U0001f600"))
        elif op == 2 and chars:
            chars[i] = rng.choice("abcdefgimnorst.")
        elif len(chars) > 1:
            j = min(i + 1, len(chars) - 1)
            chars[i], chars[j] = chars[j], chars[i]
    return "".join(chars)


# --- families, key-set files, versions, bands, defaults, profiles ---


def test_families_files_versions_and_bands() -> None:
    families = [*sorted({d["family"] for d in map(_file_doc, DATA_FILES)}), "unknown-family"]
    inputs: list[dict[str, Any]] = [{"op": "family", "name": n} for n in NAMES]
    expected: list[Any] = [(f or {}).get("family") for f in map(family_of, NAMES)]
    for n in NAMES:
        for v in VERSIONS:
            inputs.append({"op": "file", "name": n, "version": v})
            expected.append(key_set_file(n, v))
    for fam in families:
        for v in VERSIONS:
            inputs.append({"op": "band", "family": fam, "version": v})
            expected.append(band(fam, v))
    for v in VERSIONS:
        inputs.append({"op": "version_tuple", "version": v})
        parsed = version_tuple(v)
        expected.append(None if parsed is None else ".".join(map(str, parsed)))
    assert probe("KeySetsProbe", inputs) == expected
    assert set(DATA_FILES) <= {e for e in expected if isinstance(e, str)}  # every key set is chosen somewhere


def test_release_defaults_and_behaviours() -> None:
    families = [*sorted({d["family"] for d in map(_file_doc, DATA_FILES)}), "unknown-family"]
    releases = ["0", "2.1", "2.7", "3.0", "3.0.1", "3.1", "3.1.1", "3.7", "4.0", "4", "3.0.0.1", "99", "v3.1.1"]
    inputs: list[dict[str, Any]] = []
    expected: list[Any] = []
    for fam in families:
        for release in releases:
            for role in ("producer", "consumer", "admin", "streams", "unknown"):
                inputs.append({"op": "defaults_at", "family": fam, "role": role, "release": release})
                expected.append(dict(defaults_at(fam, role, release)))
            inputs.append({"op": "behaviours_at", "family": fam, "release": release})
            expected.append(sorted(behaviours_at(fam, release)))
    answers = probe("KeySetsProbe", inputs)
    assert answers == expected
    assert any(a for a in answers if isinstance(a, list)) and any(a for a in answers if isinstance(a, dict))
    assert behaviours("apache-kafka-java")  # the yielding behaviour is exercised


def test_every_profile_is_pythons() -> None:
    rng = random.Random(3)
    probe_keys = list(_all_keys()) + [_mutations(rng, k) for k in rng.sample(_all_keys(), 200)] + [
        "producer.linger.ms", "producer.lingr.ms", "consumer.max.poll.records", "main.consumer.group.id",
        "restore.consumer.x", "admin.retries", "topic.anything", "topic.", "topic", "producer.", "global.consumer.",
        "", "\u00e9", "my.app.url", "Linger.ms"]
    rule_keys = [*RULE_KEYS, "bootstrap.servers", "compression.type", "linger.ms", "no.such.key", "RequiredAcks"]
    inputs: list[dict[str, Any]] = []
    expected: list[Any] = []
    for file in DATA_FILES:
        doc = _file_doc(file)
        for role in [*doc["roles"], UNKNOWN_ROLE]:
            if role == "client":
                continue
            fam = doc["family"]
            for release in ["", band(fam, doc["version"]), "0", "2.7", "3.0.1", "3.1", "4.0", "3.0"]:
                inputs.append({"op": "profile", "file": file, "role": role, "release": release,
                               "rule_keys": rule_keys, "probe_keys": probe_keys})
                expected.append(_describe(profile(file, role, release or None), rule_keys, probe_keys))
    inputs.append({"op": "known_anywhere", "keys": probe_keys})
    expected.append(known_anywhere(pa.array(probe_keys, pa.string())).to_pylist())
    answers = probe("KeySetsProbe", inputs)
    for a, e in zip(answers, expected, strict=True):
        assert a == e, (e.get("id") if isinstance(e, dict) else "known_anywhere")


# --- per push: profile, custom mask, effective values, anomalies, typos ---


def _findings(frame: pd.DataFrame, row: int) -> list[list[Any]]:
    from udfs.rules.findings import _plain  # how evidence becomes JSON

    rows = frame[frame["row"] == row]
    return [[r.rule, list(r.keys), r.message,
             json.dumps(r.evidence, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_plain)]
            for r in rows.itertuples(index=False)]


def _repr(value: Any) -> str:
    return repr(float(value))


def _python(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The probe's inputs and Python's answers for each push of one batch."""
    batch = PushBatch.from_pushes(table(rows), KEY)
    custom = custom_mask(batch)
    eff = effective(batch)
    anomalies = evaluate(eff)
    keys = batch.keys.to_numpy(zero_copy_only=False)
    typos = typo_findings(batch.entry_row, keys, batch.safe_keys, custom, batch.entry_profile_ids())
    inputs, expected = [], []
    for i, row in enumerate(rows):
        mine = np.flatnonzero(batch.entry_row == i)
        inputs.append({"push": row, "name": batch.context["client_software_name"].iloc[i],
                       "version": batch.context["client_software_version"].iloc[i],
                       "safe": [bool(keys[j] == batch.safe_keys[j]) for j in mine]})
        values: dict[str, Any] = {k: _repr(eff.values.at[i, k]) for k in NUMERIC_KEYS}
        for k in BOOL_KEYS:
            v = eff.values.at[i, k]
            values[k] = v if isinstance(v, bool) else None
            assert isinstance(v, bool) or (isinstance(v, float) and math.isnan(v)), v
        for k in STRING_KEYS:
            values[k] = eff.values.at[i, k]
        expected.append({
            "profile": batch.profile_ids[i], "custom": [bool(c) for c in custom[mine]],
            "effective": {"values": values, "sent": [bool(eff.sent.at[i, k]) for k in RULE_KEYS],
                          "explicit": [bool(eff.explicit.at[i, k]) for k in RULE_KEYS],
                          "role": eff.role.iloc[i], "judge": eff.judge.iloc[i], "yields": bool(eff.yields.iloc[i])},
            "anomalies": _findings(anomalies, i), "typos": _findings(typos, i)})
    return inputs, expected


def _same(rows: list[dict[str, Any]], *, serialized: bool = False) -> list[dict[str, Any]]:
    inputs, expected = _python(rows)
    answers = probe("AnomaliesProbe", [{**i, "serialized": serialized} for i in inputs])
    for i, (a, e) in enumerate(zip(answers, expected, strict=True)):
        if a != e:
            diff = {k: (e[k], a[k]) for k in e if a.get(k) != e[k]}
            raise AssertionError(f"push {i} ({json.dumps(rows[i], ensure_ascii=False)[:1500]}): "
                                 f"Python, Java: {json.dumps(diff, ensure_ascii=False)[:4000]}")
    return expected


def _fired(expected: list[dict[str, Any]]) -> set[str]:
    return {f[0] for e in expected for f in e["anomalies"] + e["typos"]}


FLEETS = (("simulator", 300, 5), ("simulator", 150, 11), ("raw", 400, 13), ("edge", 200, 13), ("raw", 300, 29),
          ("edge", 150, 41))


@cache
def _fleet(which: int) -> tuple[dict[str, Any], ...]:
    """One realistic fleet's pushes, checked: Python's answers for them (the same as the JVM's)."""
    kind, size, seed = FLEETS[which]
    rows = simulator_pushes(size, seed) if kind == "simulator" else eval_pushes(size, seed, kind)
    return tuple(_same(rows))


@pytest.mark.parametrize("which", range(len(FLEETS)), ids=[f"{k}-{n}-{s}" for k, n, s in FLEETS])
def test_realistic_fleets(which: int) -> None:
    expected = _fleet(which)
    assert any(e["profile"] for e in expected) and any(e["effective"]["values"]["acks"] != "nan" for e in expected)


def test_realistic_fleets_cover_the_families_and_rules() -> None:
    expected = [e for which in range(len(FLEETS)) for e in _fleet(which)]
    families = {e["profile"].split("/")[0] for e in expected if e["profile"]}
    assert families >= {"apache-kafka-java-3.9", "apache-kafka-java-4.3", "librdkafka-2.15", "kafka-python-2.0",
                        "kafka-python-3.0", "sarama-1.60", "franz-go-1.21"}, families
    roles = {e["effective"]["role"] for e in expected}
    assert roles >= {"producer", "consumer", "admin", "streams", "unknown"}, roles
    assert len(_fired(expected)) >= 8, _fired(expected)


def _case_pushes() -> list[dict[str, Any]]:
    from tests.test_rules_anomalies import CASES
    from tests.test_rules_defaults import CONFLICTS, JAVA_RELEASES

    pushes = [rh.push(configs, software) for _, software, configs, _ in CASES]
    for release in JAVA_RELEASES:
        for conflict in CONFLICTS:
            key, value = conflict.split("=")
            pushes.append(rh.push([rh.entry(key, value, "INT" if key != "acks" else "STRING"),
                                   rh.entry("key.serializer", "x.StringSerializer", "CLASS")],
                                  ("apache-kafka-java", release)))
    pushes += [
        rh.push([rh.entry("application.id", "inventory-join-app"), rh.entry("retries", "0", "INT", default=True),
                 rh.entry("default.key.serde", "x.Serdes$StringSerde", "CLASS")], ("apache-kafka-java", "3.9.0")),
        rh.push({"acks": "all", "batch.sise": "32768"}), rh.push({"acks": "all", "my.app.url": "u"}),
        rh.push({"acks": "all", "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8": "1"}),
        rh.push({"application.id": "a", "producer.lingr.ms": "5", "topic.x": "1", "consumer.max.pol.records": "1"}),
        rh.push({"ack": "1", "aXks9": "1", "lingr.ms": "1"}), rh.push({}), rh.push({}, (None, None)),
        rh.push([rh.entry("group.id", "g"), rh.entry("session.timeout.ms", None, "INT", redacted=True,
                                                      fingerprint="f"), rh.entry("heartbeat.interval.ms", "50000")]),
        rh.push({"delivery.timeout.ms": "30004"}, rh.JAVA_3), rh.push({"delivery.timeout.ms": "30004"}, rh.JAVA),
        rh.push({"Consumer.Group.Session.Timeout": "9s", "Consumer.Group.Heartbeat.Interval": "4s",
                 "Producer.RequiredAcks": "0"}, rh.SARAMA),
        rh.push({"Consumer.Group.Heartbeat.Interval": "5s"}, rh.SARAMA),
        rh.push({"linger.ms": "1", "queue.buffering.max.ms": "100000", "message.timeout.ms": "1000"}, rh.RDKAFKA),
        rh.push({"acks": "0", "batch.size": "100"}, rh.PY_RDKAFKA),
        rh.push({"acks": "1", "max_in_flight_requests_per_connection": "9", "enable_idempotence": "True"},
                ("kafka-python", "3.0.12")),
    ]
    return pushes


@pytest.mark.parametrize("serialized", [False, True], ids=["built", "serialized"])
def test_the_rule_tests_cases(serialized: bool) -> None:
    expected = _same(_case_pushes(), serialized=serialized)
    from udfs.rules.anomalies import STATELESS_ANOMALIES

    assert _fired(expected) >= {r.id for r in STATELESS_ANOMALIES} | {"unknown-key-typo"}


# --- fuzzed pushes ---

VALUES = ("1e3", " 5 ", "0x10", "-1", ".5", "5.", "9223372036854775807", "\u0665", "\uff15", "1m30s", "1.5h",
          "500\u00b5s", "500\u03bcs", "-0", "+0", "10", "0", "all", "ALL", " All ", "sarama.WaitForAll",
          "kgo.AllISRAcks()", "kgo.NoAck()", "NoResponse", "WaitForLocal", "LeaderAck", "AllISRAcks()", "kgo.()", "()",
          "sarama.kgo.noack", "noack()()", "kgo.noack ()", "true", " TRUE ", "False", "yes", "", " ",
          "\u00a0true\u00a0", "\u2028 5", "5\n", "\n5", "5\u0085", "1e400", "-1e400", "1" * 30, "classic",
          " CONSUMER ", "consumer",
          "Consumer\u00a0", "tx-1", " ", "range", None, "1e-400", "0.1", "2.5", "-5", "+5", "1E5", "1e", "e5", "--1",
          "1.2.3", "Infinity", "nan", "inf", "\u212ago.noack()", "WA\u0130TFORALL", "\u0130", "30000", "45000", "3000",
          "6000", "1800000", "1800001", "5999", "20000", "50000", "100", "1000", "16384", "33554432", "6", "5", "1",
          "2147483647", "30m", "1h", "9s", "4s", "3s", "45s", "500ms", "1.5e3", "2h0m0s", "1h1m1.5s", "0s", "s",
          "10S", "1d", "5 s", "-1.5h", "\u00a045s", "0.30000000000000004", "123456789.123456789", "1e16", "1e22",
          "12345678901234567890123", "-9223372036854775809", "99999999999999999999", "0.5", "15000.5", "1.0000001",
          "\u0663\u0660\u0660\u0660", "\U0001d7d3", "\x1c5\x1f", "\x0b5", "\u00b5s", "1\u00b5s", "9" * 400 + "h",
          "0.000001ns", "1.5ns", ".5h", "5.s", "+5s", "1m 30s", "sarama.", "kgo.", "SARAMA.WAITFORALL")


@cache
def _fuzz_keys() -> tuple[str, ...]:
    keys: set[str] = set(RULE_KEYS)
    for file in DATA_FILES:
        doc = _file_doc(file)
        prof = profile(file, UNKNOWN_ROLE)
        for rk in RULE_KEYS:
            keys.update(prof.sources(rk))
        keys.update(doc.get("aliases", {}))
    keys.update({"group.id", "auto.offset.reset", "application.id", "bootstrap.controllers", "key.serializer",
                 "client.id", "transactional.id", "enable.auto.commit", "producer.linger.ms", "topic.x",
                 "main.consumer.max.poll.records", "my.app.url", "ack", "aXks9", "Linger.ms", "l\u00efnger.ms",
                 "process.roles", "max.poll.records", "compression.type", "statistics.interval.ms",
                 "bootstrap_servers", "Net.SASL.Password", "SeedBrokers", "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"})
    return tuple(sorted(keys))


def _fuzz_pushes(seed: int, n: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    keys, known = _fuzz_keys(), _all_keys()
    software = [(name, v) for name in NAMES for v in ("4.3.1", "3.0.1", "2.8.2", "1.45.1", "v1.18.1")]
    software += [(rng.choice(NAMES[:10]), v) for v in VERSIONS]
    pushes = []
    for _ in range(n):
        entries = []
        for _ in range(rng.randrange(14)):
            r = rng.random()
            key = rng.choice(keys) if r < 0.75 else _mutations(rng, rng.choice(known)) if r < 0.92 else \
                rng.choice(known)
            value = rng.choice(VALUES) if rng.random() < 0.8 else str(rng.choice((0, 1, 5, 100, 3000, 45000, 1 << 40)))
            redacted = rng.random() < 0.07
            entries.append(rh.entry(key, None if redacted else value, rng.choice(("STRING", "INT", "LONG")),
                                    default=rng.random() < 0.3, redacted=redacted,
                                    fingerprint="0123456789abcdef" if redacted else None))
        pushes.append(rh.push(entries, rng.choice(software)))
    return pushes


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzzed_pushes(seed: int) -> None:
    expected = _same(_fuzz_pushes(seed, 700))
    assert len(_fired(expected)) >= 10, _fired(expected)
    assert any(e["profile"] is None for e in expected) and any(e["typos"] for e in expected)


def test_duplicate_keys_and_aliases_take_the_last_entry() -> None:
    pushes = [rh.push([rh.entry("acks", "0"), rh.entry("acks", "all")]),
              rh.push([rh.entry("acks", "all"), rh.entry("acks", "0")]),
              rh.push([rh.entry("linger.ms", "7"), rh.entry("queue.buffering.max.ms", "9")], rh.RDKAFKA),
              rh.push([rh.entry("queue.buffering.max.ms", "9"), rh.entry("linger.ms", "7", default=True)],
                      rh.RDKAFKA),
              rh.push([rh.entry("acks", "1"), rh.entry("acks", None, redacted=True, fingerprint="f")], rh.JAVA_2)]
    expected = _same(pushes)
    assert [e["effective"]["values"]["acks"] for e in expected[:2]] == ["-1.0", "0.0"]
    assert expected[2]["effective"]["values"]["linger.ms"] == "9.0"


def test_edge_values_in_messages_and_evidence() -> None:
    """Huge, infinite, fractional and unknown values as messages and evidence show them; signed zeros."""
    idem = {"enable.idempotence": "true"}
    pushes = [
        rh.push({**idem, "acks": "-0"}),
        rh.push({"Producer.Idempotent": "true", "Producer.RequiredAcks": "-0"}, rh.SARAMA),
        rh.push({"buffer.memory": "1e22", "batch.size": "1e400"}),
        rh.push({"buffer.memory": "-1e400", "batch.size": ".5"}),
        rh.push({"buffer.memory": "12345678901234567890123", "batch.size": "1e30"}),
        rh.push({"buffer.memory": "-9223372036854775808", "batch.size": "1"}),
        rh.push({"buffer.memory": "-9223372036854775809", "batch.size": "9223372036854775807"}),
        rh.push([rh.entry("acks", "1"), rh.entry("max.in.flight.requests.per.connection", None, redacted=True,
                                                 fingerprint="f")]),
        rh.push({"acks": "1", "retries": "2.5"}), rh.push({"acks": "sarama.WaitForLocal", "retries": "0.0"}),
        rh.push({"SessionTimeout": "9" * 400 + "h", "HeartbeatInterval": "1h"}, rh.FRANZ_GO),
        rh.push({"SessionTimeout": "-0", "HeartbeatInterval": "-1h"}, rh.FRANZ_GO),
        rh.push({"group.id": "g", "group.protocol": " CLASSIC ", "session.timeout.ms": "100"}),
        rh.push({"group.id": "g", "group.protocol": " Consumer\u00a0", "session.timeout.ms": "100",
                 "partition.assignment.strategy": "x"}),
        rh.push({"transactional.id": " \u2028", "enable.idempotence": "false"}),
        rh.push({"transactional.id": "\u00a0x", "enable.idempotence": " FALSE "}),
    ]
    expected = _same(pushes)
    text = json.dumps(expected)
    for shown in ("acks=0:", "=inf", "=-inf", "Infinity", "12345678901234567741440", "9223372036854775808",
                  "max.in.flight.requests.per.connection=None", "retries=2.5", '\\"consumer\\"', '\\"set\\"'):
        assert shown in text, shown


# --- pieces: numbers, acks words, Go durations, edit distance, nearest known key, Unicode ---


def test_numbers_and_acks_words() -> None:
    texts = [*VALUES, *(_mutations(random.Random(i), "kgo.AllISRAcks()") for i in range(200))]
    normalised = eff_module._normalised(np.array(texts, dtype=object))  # what the rules parse
    numbers = [_repr(v) for v in eff_module._floats(normalised)]
    acks = [_repr(v) for v in eff_module._acks(np.array(texts, dtype=object))]
    assert probe("EffectiveProbe", [{"numbers": texts}, {"acks": texts}]) == [numbers, acks]
    assert "-1.0" in acks and "0.0" in acks and "inf" in numbers


def test_go_durations() -> None:
    from tests.test_rules_durations import DURATIONS, NOT_DURATIONS

    rng = random.Random(5)
    texts = [t for t, _ in DURATIONS] + NOT_DURATIONS + [v for v in VALUES if v is not None]
    texts += ["".join(rng.choice("0123456789.smhnu\u00b5\u03bc+- ") for _ in range(rng.randrange(1, 9)))
              for _ in range(400)]
    expected = [None if (ms := go_duration_ms(t)) is None else _repr(ms) for t in texts]
    assert probe("TyposProbe", [{"go": t} for t in texts]) == expected
    assert sum(e is not None for e in expected) > 40


def test_edit_distance_and_nearest_known_key() -> None:
    rng = random.Random(9)
    alphabet = "ab\u00e9\U0001f600c."
    pairs = [("linger.ms", "lingre.ms", 2), ("batch.sise", "batch.size", 2), ("abc", "abcdef", 2),
             ("a" * 10, "b" * 10, 2), ("", "", 2), ("", "ab", 2), ("ca", "abc", 2), ("ab", "ba", 0)]
    for _ in range(1500):
        a = "".join(rng.choice(alphabet) for _ in range(rng.randrange(7)))
        b = "".join(rng.choice(alphabet) for _ in range(rng.randrange(7)))
        pairs.append((a, b, rng.randrange(4)))
    assert probe("TyposProbe", [{"edit": list(p)} for p in pairs]) == [edit_distance(*p) for p in pairs]
    queries = []
    for file in DATA_FILES:
        doc = _file_doc(file)
        roles = [r for r in doc["roles"] if r != "client"] + [UNKNOWN_ROLE]
        for role in roles:
            names = sorted(profile(file, role).keys)
            for key in [_mutations(rng, rng.choice(names)) for _ in range(40)] + [
                    "producer.lingr.ms", "ack", "aXks9", "lingr.ms", rng.choice(names)]:
                queries.append([file, role, "", key])
    expected = [None if (m := nearest_known(f"{q[0].removesuffix('.json')}/{q[1]}", q[3])) is None else list(m)
                for q in queries]
    assert probe("TyposProbe", [{"nearest": q} for q in queries]) == expected
    assert sum(e is not None for e in expected) > 100


def test_unicode_white_space_and_lower_case_are_arrows() -> None:
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    text = pa.array([chr(c) for c in cps], pa.string())
    space = [c for c, s in zip(cps, pc.utf8_trim_whitespace(pa.array(["a" + chr(c) for c in cps])).to_pylist(),
                               strict=True) if s == "a"]
    assert space == [c for c in cps if chr(c).isspace()]  # Arrow trims what Python strips
    lower = [[c, low] for c, low in zip(cps, pc.utf8_lower(text).to_pylist(), strict=True) if low != chr(c)]
    java_space, java_lower = probe("EffectiveProbe", [{"space": True}, {"lower": True}])
    assert java_space == space
    arrow, java = {c: low for c, low in lower}, {c: low for c, low in java_lower}
    # JDK 17 reads Unicode 13, Arrow's utf8proc a later version: letters assigned since are lowered by Arrow only.
    # They lower to letters outside ASCII, which no number or acks word holds, so no value reads differently.
    assert all(arrow.get(c) == low for c, low in java.items())
    assert {c for c, low in arrow.items() if low.isascii()} == {c for c, low in java.items() if low.isascii()}
    assert {c: low for c, low in arrow.items() if c > 127 and low.isascii()} == {0x130: "i", 0x212A: "k"}
    assert len(set(arrow) - set(java)) < 200

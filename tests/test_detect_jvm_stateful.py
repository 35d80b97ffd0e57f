"""The stateful rules' JVM twins (``Fleet``, ``Groups``) against Python's ``udfs.rules.stateful.step``.

Each state key's rows go through a chain of micro-batches on both sides, each side threading its
own state: the findings (contract JSON text, alert ids included) and the state JSON text must be
the same byte for byte after every batch. Inputs: the realistic fleets (``tests.jvm_pushes``, raw and
behind the edge, split into micro-batches so that young peer groups keep waiting values and large ones
score), the cases of ``tests/test_rules_stateful.py`` and ``tests/test_rules_groups.py``, and random
observation sequences (sentinel and extreme values, coarsening past 512 buckets, repeated and missing
subjects, missing times, members past their TTL and past ``MAX_MEMBERS``, protocol and strategy mixes,
Unicode everywhere).
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
import warnings
from collections import defaultdict
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from configwatch.secrets import fingerprint
from tests.jvm_pushes import KEY, eval_pushes, simulator_pushes, table
from tests.jvmprobe import probe
from udfs.rules.batch import CONTEXT_COLUMNS, IDENTITY_FIELDS, SUBJECT
from udfs.rules.effective import Effective
from udfs.rules.findings import contract_json
from udfs.rules.fleet import MIN_PEERS, UNBOUNDED, is_sentinel, peer_states_from_json, peer_states_to_json
from udfs.rules.groups import MAX_MEMBERS, MEMBER, MEMBER_TTL_MS, canonical_strategy, group_observations
from udfs.rules.secretscan import scan
from udfs.rules.stateful import OBSERVATION_SCHEMA, prepare, step

NOW = 1_700_000_000_000  # FleetProbe.NOW: both sides stamp detected_at_ms with it
Chain = list[list[dict[str, Any]]]  # one state key's rows, batch by batch


# --- both sides --------------------------------------------------------------------------------------

def _python(state_key: str, batches: Chain) -> list[dict[str, Any]]:
    """Python's step over the batches, threading its state; an exception ends the chain.

    An OverflowError (``_unlog`` of a quartile past 1e308) is what the JVM answers with an
    ArithmeticException.
    """
    state, out = None, []
    for rows in batches:
        frame = pa.Table.from_pylist(rows, schema=OBSERVATION_SCHEMA).to_pandas()  # as Spark hands it over
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # numpy's cast of NaN and inf bucket ids
                found, state = step(state_key, frame, state, KEY, NOW)
        except OverflowError:
            out.append({"error": "ArithmeticException"})
            break
        out.append({"findings": contract_json(found), "state": state})
    return out


def _same(key: str, want: list[dict[str, Any]], got: list[dict[str, Any]]) -> None:
    for i, (w, g) in enumerate(zip(want, got, strict=False)):
        assert g == w, f"{key}, batch {i}:\nJVM    {g}\nPython {w}"
    assert len(got) == len(want), key


def _fleet_input(peer_group: str, batches: Chain) -> dict[str, Any]:
    return {"peer_group": peer_group, "state": None, "batches": [[{
        "peer_group": r["peer_group"], "keys": r["config_keys"], "values": [repr(float(v)) for v in r["config_values"]],
        "context": {n: r.get(n) for n in (*IDENTITY_FIELDS, "timestamp_ms", SUBJECT)}} for r in rows]
        for rows in batches]}


def _group_input(batches: Chain) -> dict[str, Any]:
    names = ("group_fp", "group", "protocol", "strategy", MEMBER, "timestamp_ms")
    return {"groups": True, "state": None,
            "batches": [[{n: r.get(n) for n in names} for r in rows] for rows in batches]}


def _compare(chains: dict[str, Chain]) -> list[list[dict[str, Any]]]:
    """Every chain through Python and the JVM; asserts equality and returns Python's answers."""
    keys = sorted(chains)
    inputs = [_fleet_input(k.split("|", 1)[1], chains[k]) if k.startswith("fleet|") else _group_input(chains[k])
              for k in keys]
    java = dict(zip(keys, probe("FleetProbe", inputs), strict=True))  # one JVM: FleetProbe passes groups on
    answers = []
    for k in keys:
        expected = _python(k, chains[k])
        _same(k, expected, java[k])
        answers.append(expected)
    return answers


def _chains(batches: list[list[dict[str, Any]]]) -> dict[str, Chain]:
    """The fleet and group rows of each batch of pushes (``prepare``), per state key, batch by batch."""
    chains: dict[str, Chain] = defaultdict(list)
    for pushes in batches:
        rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in prepare(table(pushes), KEY, NOW).to_pylist():
            if not r["state_key"].startswith("pass|"):
                rows[r["state_key"]].append(r)
        for k, part in rows.items():
            chains[k].append(part)
    return dict(chains)


def _stats(answers: list[list[dict[str, Any]]]) -> dict[str, int]:
    rules: dict[str, int] = defaultdict(int)
    for chain in answers:
        for a in chain:
            for f in a.get("findings", []):
                rules[json.loads(f)["rule"]] += 1
            if a.get("state") and '"pending"' in a["state"]:
                rules["pending"] += 1
            if a.get("state") and re.search(r'"width":(?!0\.001[,}])', a["state"]):
                rules["coarse"] += 1  # a summary past MAX_BUCKETS buckets, coarsened
            if a.get("state") and re.search(r',null,(null|"[^"]*")\]', a["state"]):
                rules["untimed"] += 1  # a value waits without a time (its push had none)
    return dict(rules)


# --- realistic fleets --------------------------------------------------------------------------------

def _split(pushes: list[dict[str, Any]], sizes: tuple[int, ...] = (12, 60)) -> list[list[dict[str, Any]]]:
    out, at = [], 0
    for n in sizes:
        out.append(pushes[at:at + n])
        at += n
    rest = pushes[at:]
    return [b for b in [*out, rest[:len(rest) // 2], rest[len(rest) // 2:]] if b]


@pytest.mark.parametrize("fleet", ["raw-3-900", "raw-4-400", "edge-5-120", "simulator-7-150"])
def test_realistic_fleets_in_micro_batches_give_pythons_findings_and_state(fleet: str) -> None:
    kind, seed, size = fleet.split("-")
    pushes = (simulator_pushes(int(size), int(seed)) if kind == "simulator"
              else eval_pushes(int(size), int(seed), kind))
    stats = _stats(_compare(_chains(_split(pushes))))
    assert stats.get("pending", 0) > 0, stats  # young peer groups kept waiting values
    if kind == "raw":
        assert stats.get("fleet-outlier", 0) > 0 and stats.get("group-protocol-migration", 0) > 0, stats


def test_the_stateful_rules_cases_give_pythons_findings_and_state() -> None:
    from tests.rules_helpers import RDKAFKA, consumer, push
    from tests.test_rules_groups import COOP, RANGE
    from tests.test_rules_stateful import producers

    early = push({"acks": "all", "linger.ms": "5000", "batch.size": "16384"}, client_id="early-client")
    odd = {"acks": "all", "linger.ms": "9000", "batch.size": "900000000"}
    batches = [
        [early, *producers(5), push(odd, client_id="early"), *[consumer("orders", **{
            "partition.assignment.strategy": RANGE}) for _ in range(3)]],
        [*producers(MIN_PEERS - 6), consumer("orders"), consumer("orders"),
         consumer("pay", **{"partition.assignment.strategy": COOP}),
         push({"group.id": "pay", "partition.assignment.strategy": "roundrobin"}, RDKAFKA)],
        [*producers(3), consumer("orders", **{"partition.assignment.strategy": f"{COOP},{RANGE}"}),
         consumer("pay", **{"partition.assignment.strategy": "sticky"}), consumer("m"),
         consumer("m", **{"group.protocol": "consumer"}), consumer("s", **{"group.protocol": "streams"}), consumer("s"),
         push({**odd, "linger.ms": "5", "batch.size": "1"}, client_id="late"), *producers(5, linger="10"),
         *[push({"acks": "all", "receive.buffer.bytes": "65536" if i else "67108864"}) for i in range(100)]],
    ]
    stats = _stats(_compare(_chains(batches)))
    for rule in ("fleet-outlier", "group-assignment-transition", "group-assignment-drift", "group-protocol-migration",
                 "group-protocol-drift"):
        assert stats.get(rule, 0) > 0, (rule, stats)


# --- random observation sequences: fleets ------------------------------------------------------------

_TEXTS = ["", "c", "client-1", "Ünïcödé", "\u00e9\u0301", "\U0001F600 x", "tab\there", "quote\"back\\slash",
          "\x00\x1f\x7f", "\u2028line", "redacted:0123456789abcdef", "\uff5e"]
_KEYS = ["linger.ms", "batch.size", "Z.key", "\u00e9.key", "\uff5e.key", "\U0001F600.key"]
_EDGE_VALUES = [0.0, -0.0, -1.0, -5e-324, float(2**31 - 1), float(2**63 - 1), float(2**31 - 2), 5e-324, 1e-300,
                1e300, 1.7976931348623157e308, -1e300, 9.0, 99.0, 999.0, 9999.0, 0.5, 1.5, 65535.5, 1e15 + 0.3]


def _value(rng: random.Random, mode: str, default: float) -> float:
    if mode == "overflow":  # quartiles whose 10 ** q overflows: Python's OverflowError, the JVM's ArithmeticException
        return rng.choice([math.inf, math.nan, 1.7976931348623157e308, default])
    if mode == "edge" and rng.random() < 0.3:
        return rng.choice(_EDGE_VALUES + ([math.nan, math.inf, -math.inf] if rng.random() < 0.2 else []))
    if mode == "wide":
        return 10 ** rng.uniform(-6, 300) * rng.choice([1, 1, 1, -1])
    if rng.random() < 0.04:  # a slip: far from the crowd
        return default * rng.choice([1000.0, 1e-4, 1e6])
    if rng.random() < 0.2:  # a tuning a share of the fleet uses
        return default * rng.choice([2.0, 4.0, 32.0])
    return default if rng.random() < 0.6 else round(default * rng.lognormvariate(0, 0.3), rng.choice([0, 2]))


def _fleet_rows(rng: random.Random, n: int, mode: str, group: str, subjects: list[str | None],
                null_times: bool) -> list[dict[str, Any]]:
    defaults = {k: rng.choice([5.0, 16384.0, 30000.0, 0.25, 1e9]) for k in _KEYS}
    rows = []
    for _ in range(n):
        keys = rng.sample(_KEYS, len(_KEYS) if mode == "wide" else rng.randint(0, len(_KEYS)))
        context: dict[str, Any] = {name: rng.choice([None, *_TEXTS]) for name in CONTEXT_COLUMNS}
        context["timestamp_ms"] = None if null_times and rng.random() < 0.2 else NOW - rng.randint(0, 10**9) * (
            rng.choice([1, 1, 1000]))
        values = [_value(rng, mode, defaults[k]) for k in keys]
        rows.append({"state_key": f"fleet|{group}", "peer_group": group, "config_keys": keys,
                     "config_values": values, **context, SUBJECT: rng.choice(subjects)})
    return rows


def _fleet_chain(seed: int) -> Chain:
    rng = random.Random(seed)
    mode = rng.choice(["crowd", "crowd", "edge", "wide", "crowd", "crowd", "edge", "wide", "overflow"])
    group = rng.choice(["apache-kafka-java/producer/v4", "libr\u00e9/consumer/v2", "g"])
    subjects: list[str | None] = [None, *[f"s{i:02d}" for i in range(rng.choice([3, 40, 400]))]]
    null_times = rng.random() < 0.3
    sizes = [rng.choice([1, 3, 8, 20]) for _ in range(rng.randint(1, 3))] + [rng.choice([30, 80, 200])] + [
        rng.choice([1, 5, 60]) for _ in range(rng.randint(0, 2))]
    if mode == "wide":
        sizes = [rng.choice([300, 800]), *sizes[:2]]  # past MAX_BUCKETS buckets (300 decades of values)
    return [_fleet_rows(rng, n, mode, group, subjects, null_times) for n in sizes]


def test_random_fleet_sequences_give_pythons_findings_and_state() -> None:
    chains = {f"fleet|{chain[0][0]['peer_group']}#{seed}": chain for seed in range(40) if (chain := _fleet_chain(seed))}
    expected_keys = {k: k.split("#")[0] for k in chains}
    fleet_inputs = [_fleet_input(expected_keys[k].split("|", 1)[1], chains[k]) for k in sorted(chains)]
    java = probe("FleetProbe", fleet_inputs)
    stats: dict[str, int] = defaultdict(int)
    for k, got in zip(sorted(chains), java, strict=True):
        want = _python(expected_keys[k], chains[k])
        _same(k, want, got)
        for s, n in _stats([want]).items():
            stats[s] += n
        for a in want:
            stats[a.get("error", "ok")] += 1
    # the sequences reach what they are for: outliers, waiting values, coarse summaries, Python's overflow
    assert stats["fleet-outlier"] > 20 and stats["pending"] > 20 and stats["coarse"] > 0, dict(stats)
    assert stats["untimed"] > 0 and stats["ArithmeticException"] > 0, dict(stats)


def test_waiting_times_are_ints_or_null_whatever_pandas_holds() -> None:
    """Every sequence of batches whose times are all ints, mixed with nulls, or all null: pandas holds the
    waiting values' times as int64, float64 or objects, and the state keeps each as an int or null."""
    chains: dict[str, Chain] = {}
    value = 1.0
    for kinds in itertools.product("IFN", repeat=3):
        chain = []
        for batch, kind in enumerate(kinds):
            rows = []
            for i in range(2):
                value *= 7.3  # far from every other value: each waits
                timed = kind == "I" or (kind == "F" and i == 0)
                rows.append({"state_key": "fleet|g", "peer_group": "g", "config_keys": ["k"], "config_values": [value],
                             "timestamp_ms": NOW + batch * 10 + i if timed else None, SUBJECT: f"s{batch}{i}"})
            chain.append(rows)
        chains[f"fleet|g#{''.join(kinds)}"] = chain
    java = probe("FleetProbe", [_fleet_input("g", chains[k]) for k in sorted(chains)])
    shapes = set()
    for k, got in zip(sorted(chains), java, strict=True):
        want = _python("fleet|g", chains[k])
        _same(k, want, got)
        pending = peer_states_from_json(want[-1]["state"])["k"].pending
        shapes.add(tuple(sorted({type(p[-2]).__name__ for p in pending})))
    assert shapes == {("int",), ("NoneType",), ("NoneType", "int")}


def test_fleet_state_text_round_trips_and_sentinels_are_pythons() -> None:
    rng = random.Random(3)
    texts = []
    for seed in range(8):
        chain = _fleet_chain(seed)
        answers = _python(f"fleet|{chain[0][0]['peer_group']}", chain)
        texts += [a["state"] for a in answers if "state" in a]
    texts.append(json.dumps({"linger.ms": {"width": 0.001, "buckets": {"7": 3, "-2": 1}}}))  # bare, unsorted
    texts.append(json.dumps({"k": {"width": 0.004, "buckets": {}, "pending": [[5.0, "\u00e9", None, None, None, None,
                                                                                None, "1700000000000.0", "s"]]}}))
    rng.shuffle(texts)
    values = [*_EDGE_VALUES, *UNBOUNDED, math.nan, math.inf, -math.inf, 2.0**31, 2.0**63, 1.0]
    *got, sentinels = probe("FleetProbe", [*({"round_trip": t} for t in texts),
                                            {"sentinel": [repr(v) for v in values]}])
    assert got == [peer_states_to_json(peer_states_from_json(t)) for t in texts]
    assert sentinels == is_sentinel(pd.Series(values).to_numpy()).tolist()
    assert sentinels.count(True) >= 6 and sentinels.count(False) >= 6


# --- random observation sequences: consumer groups ---------------------------------------------------

_PROTOCOLS = ["classic", "classic", "consumer", "streams", "", "cl\u00e4ssic", "\u01c5x", None]
_STRATEGIES = ["range", "range", "cooperative-sticky", "range,cooperative-sticky", "cooperative-sticky,range",
               "roundrobin", "sticky", "range,roundrobin", f"custom:{'0' * 16}", "", ",range", "range,,sticky",
               "range,", "\u00e9,range", None]


def _group_chain(seed: int) -> Chain:
    rng = random.Random(seed)
    fp = f"{seed:016x}"
    label = rng.choice(["orders", "p\u00e4y \U0001F600", "redacted:0123456789abcdef", "", "{label}", None])
    protocols = rng.sample(_PROTOCOLS, rng.randint(1, 3))
    strategies = rng.sample(_STRATEGIES, rng.randint(1, 4))
    members: list[str | None] = [f"m{i:03d}" for i in range(rng.choice([2, 6, 30]))] + [None]
    null_times = rng.random() < 0.2
    chain, clock = [], NOW - 30 * 24 * 3600 * 1000
    for _ in range(rng.randint(1, 6)):
        clock += rng.choice([0, 1, 1000, MEMBER_TTL_MS // 2, MEMBER_TTL_MS + 1])
        rows = []
        for _ in range(rng.randint(1, 12)):
            at = clock + rng.choice([0, 0, 5, -MEMBER_TTL_MS - 1, -MEMBER_TTL_MS])
            rows.append({"state_key": f"group|{fp}", "group_fp": fp, "group": label, "protocol": rng.choice(protocols),
                         "strategy": rng.choice(strategies), MEMBER: rng.choice(members),
                         "timestamp_ms": None if null_times and rng.random() < 0.3 else at,
                         SUBJECT: f"group:{fp}"})
        chain.append(rows)
    return chain


def _crowd(n: int, at: int) -> list[dict[str, Any]]:
    """``n`` members of one group, many at the same time (who stays past MAX_MEMBERS is decided by order)."""
    return [{"state_key": "group|big", "group_fp": "big", "group": "big", "protocol": "classic",
             "strategy": "range" if i % 7 else "roundrobin", MEMBER: f"m{(i * 7919) % (n + 50):05d}",
             "timestamp_ms": at + (i // 1000), SUBJECT: "group:big"} for i in range(n)]


def test_random_group_sequences_give_pythons_findings_and_state() -> None:
    chains = {f"group|{seed:016x}": _group_chain(seed) for seed in range(80)}
    chains["group|big"] = [_crowd(MAX_MEMBERS + 300, NOW), _crowd(40, NOW + 3)]
    stats = _stats(_compare(chains))
    for rule in ("group-assignment-transition", "group-assignment-drift", "group-protocol-migration",
                 "group-protocol-drift"):
        assert stats.get(rule, 0) > 3, (rule, stats)


def test_group_observations_and_canonical_strategies_are_pythons() -> None:
    rng = random.Random(11)
    spaces = [chr(c) for c in range(0x3001) if chr(c).isspace()] + ["\u200b", "\u180e", "\ufeff"]
    protocols = [None, "", " ", "CONSUMER", " Classic\t", "\u03a3", "A\u03a3", "\u0130", "\u00dfE",
                 *[rng.choice(spaces) + "Cl\u00c4ssic" + rng.choice(spaces) for _ in range(40)]]
    groups = [None, "", " ", "orders", "AKIAIOSFODNN7EXAMPLE", "password=hunter2xyz", "\U0001F600 g"]
    strategies = [None, "", " , ", "org.apache.kafka.clients.consumer.RangeAssignor, cooperative-sticky",
                  "com.acme.SecretAssignor,range", "\u3000range\u00a0,\u2003sticky ,", "Range", "range,,x"]
    roles = ["consumer", "producer", "admin", "streams", "none"]
    n = 300
    values = pd.DataFrame({"group.id": [rng.choice(groups) for _ in range(n)],
                           "group.protocol": [rng.choice(protocols) for _ in range(n)],
                           "partition.assignment.strategy": [rng.choice(strategies) for _ in range(n)]}, dtype=object)
    role = pd.Series([rng.choice(roles) for _ in range(n)])
    eff = Effective(values=values, sent=values, explicit=values, role=role, judge=role,
                    yields=role)  # group_observations reads values and role only
    times = [rng.choice([None, NOW, NOW + 1]) for _ in range(n)]
    subjects = [rng.choice([None, "s1", "s2"]) for _ in range(n)]
    context = pd.DataFrame({**{c: [None] * n for c in CONTEXT_COLUMNS}, "timestamp_ms": times, SUBJECT: subjects},
                           dtype=object)  # as PushBatch.context holds it
    rows = group_observations(SimpleNamespace(context=context), eff, KEY)  # type: ignore[arg-type]
    secrets = [g for g, s in zip(groups, scan(pa.array(groups, pa.string())).to_pylist(), strict=True) if s]
    assert len(secrets) == 2
    inputs = [{"observe": {"role": eff.role[i], "group_id": values["group.id"][i],
                           "protocol": values["group.protocol"][i],
                           "strategy": values["partition.assignment.strategy"][i], "timestamp_ms": times[i],
                           "subject_fp": subjects[i], "secrets": secrets}} for i in range(n)]
    lists = [None, "", ",", " , ,", "range", "Range", "org.apache.kafka.clients.consumer.StickyAssignor",
             "\u00a0roundrobin\u2029,\x1ccooperative-sticky\x1f", "com.acme.\U0001F600Assignor, range",
             "a,\u200bb", "range ,range"]
    answers = probe("GroupsProbe", [*inputs, *({"canonical": v} for v in lists)])
    got, canonical = answers[:n], answers[n:]
    assert canonical == [canonical_strategy(v, KEY) for v in lists]
    consumer = [i for i in range(n) if role[i] not in ("producer", "admin") and values["group.id"][i] not in (None, "")]
    assert len(rows) == len(consumer) > 100
    expected: list[list[Any] | None] = [None] * n
    for i, rec in zip(consumer, rows.to_dict("records"), strict=True):
        strategy = rec["strategy"]
        expected[i] = [rec["group_fp"], rec["group"], rec["protocol"], None if pd.isna(strategy) else strategy,
                       rec[MEMBER], None if pd.isna(rec["timestamp_ms"]) else int(rec["timestamp_ms"])]
    assert got == expected
    assert {r[1] for r in got if r} >= {f"redacted:{fingerprint(s, KEY)}" for s in secrets}



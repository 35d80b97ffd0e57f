"""The stateful rules' pure parts: fleet outliers (mergeable summaries), and the Spark-facing pair."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from tests.rules_helpers import JAVA_3, KEY, RDKAFKA, by_rule, consumer, push, rules_of, stateful_findings
from udfs.rules.fleet import MIN_PEERS, NumericSummary, PeerState, score_group


def producers(n: int, linger: str = "5") -> list[dict[str, object]]:
    return [push({"acks": "all", "linger.ms": linger, "batch.size": "16384"}) for _ in range(n)]


# --- fleet outliers ---------------------------------------------------------------------------------

def test_summary_is_mergeable_and_serializable() -> None:
    rng = np.random.default_rng(5)
    a, b, c = (rng.lognormal(3, 1, 200) for _ in range(3))
    left = NumericSummary().add(a).merge(NumericSummary().add(b)).merge(NumericSummary().add(c))
    right = NumericSummary().add(a).merge(NumericSummary().add(b).merge(NumericSummary().add(c)))
    assert left == right == NumericSummary().add(np.concatenate([a, b, c]))
    assert NumericSummary.from_json(left.to_json()) == left
    assert left.count == 600
    assert abs(left.median_log() - np.median(np.log10(1 + np.concatenate([a, b, c])))) < 0.02


def test_summary_stays_small() -> None:
    summary = NumericSummary().add(np.random.default_rng(1).uniform(1, 1e12, 20_000))
    assert len(summary.buckets) <= 512 and summary.count == 20_000
    assert len(summary.to_json()) < 10_000


def test_outlier_needs_distance_and_enough_peers() -> None:
    obs = pd.DataFrame({"value": [5.0] * 50 + [7.0] * 5 + [1000.0]})
    raw, state, _ = score_group("apache-kafka-java/producer/v4", "linger.ms", obs, PeerState())
    assert state.count == 56
    assert raw["row"].tolist() == [55]  # 7 is close to 5; 1000 is two orders of magnitude away
    assert raw["evidence"][0]["peers"] == 56 and raw["evidence"][0]["peer_median"] == 5
    few = pd.DataFrame({"value": [5.0] * (MIN_PEERS - 2) + [1000.0]})
    raw, state, _ = score_group("apache-kafka-java/producer/v4", "linger.ms", few, PeerState())
    assert raw.empty and [p[0] for p in state.pending] == [1000.0]  # not judged yet: it waits


def test_spread_fleet_tolerates_a_wide_but_ordinary_value() -> None:
    rng = np.random.default_rng(3)
    obs = pd.DataFrame({"value": np.concatenate([rng.lognormal(np.log(1000), 1.5, 200), [30_000.0]])})
    raw, _, _ = score_group("librdkafka/consumer/v2", "fetch.wait.max.ms", obs, PeerState())
    assert 200 not in raw["row"].tolist()


def test_fleet_outlier_end_to_end_with_state_across_batches() -> None:
    rows, state = stateful_findings(*producers(MIN_PEERS))
    assert "fleet-outlier" not in rules_of(rows)
    rows, state = stateful_findings(push({"acks": "all", "linger.ms": "5000", "batch.size": "16384"}), state=state)
    [hit] = by_rule(rows, "fleet-outlier")
    assert hit["keys"] == ["linger.ms"] and hit["evidence"]["peer_group"] == "apache-kafka-java/producer/v4"
    assert hit["evidence"]["peers"] == MIN_PEERS + 1 and hit["evidence"]["value"] == 5000
    assert state.fleet[("apache-kafka-java/producer/v4", "linger.ms")].count == MIN_PEERS + 1


def test_a_value_that_arrives_before_the_group_is_large_enough_is_scored_when_it_is() -> None:
    early = push({"acks": "all", "linger.ms": "5000", "batch.size": "16384"}, client_id="early-client")
    rows, state = stateful_findings(early, *producers(5))
    assert "fleet-outlier" not in rules_of(rows)  # 6 values: too few to call anything rare
    peers = state.fleet[("apache-kafka-java/producer/v4", "linger.ms")]
    assert [p[0] for p in peers.pending] == [5000.0]  # the lone value waits; the crowd on 5 does not
    rows, state = stateful_findings(*producers(MIN_PEERS - 6), state=state)
    [hit] = by_rule(rows, "fleet-outlier")
    assert hit["client_instance_id"] == early["client_instance_id"] and hit["client_id"] == "early-client"
    assert hit["event_timestamp_ms"] == early["timestamp_ms"] and hit["evidence"]["peers"] == MIN_PEERS
    assert state.fleet[("apache-kafka-java/producer/v4", "linger.ms")].pending == ()  # scored once, then dropped
    rows, _ = stateful_findings(*producers(3), state=state)
    assert "fleet-outlier" not in rules_of(rows)


def test_the_first_instance_of_a_common_tuning_is_not_judged_among_a_dozen() -> None:
    # One producer in ten raises linger.ms to 500; among the first dozen values only one does.
    first = [*producers(11), push({"acks": "all", "linger.ms": "500", "batch.size": "16384"})]
    rows, state = stateful_findings(*first)
    assert "fleet-outlier" not in rules_of(rows)
    rest = [push({"acks": "all", "linger.ms": "500" if i % 10 == 0 else "5", "batch.size": "16384"})
            for i in range(MIN_PEERS)]
    rows, state = stateful_findings(*rest, state=state)
    assert "fleet-outlier" not in rules_of(rows)  # by then 6 of 62 use it: a tuning
    assert state.fleet[("apache-kafka-java/producer/v4", "linger.ms")].pending == ()


def test_waiting_values_are_few_latest_per_client_and_scored_once() -> None:
    obs = pd.DataFrame({"value": [5.0] * 20 + [700.0, 700.0, 9000.0, 20000.0, 4000.0],
                        "subject_fp": [f"s{i}" for i in range(22)] + ["s22", "s22", "s23"],
                        "client_id": [f"c{i}" for i in range(25)], "timestamp_ms": list(range(25))})
    _, state, _ = score_group("g", "linger.ms", obs, PeerState())
    # 5 is the crowd and 700 has company: neither can be rare once the group is large enough. The lone
    # values wait, one per client: the value it sent last.
    assert [(p[0], p[-1]) for p in state.pending] == [(20000.0, "s22"), (4000.0, "s23")]
    assert PeerState.from_json(state.to_json()) == state and len(state.to_json()) < 2_000
    again = pd.DataFrame({"value": [5.0] * MIN_PEERS + [30000.0], "subject_fp": [f"t{i}" for i in range(MIN_PEERS)]
                          + ["s22"], "client_id": "x", "timestamp_ms": 99})
    raw, state, context = score_group("g", "linger.ms", again, state)
    assert state.pending == () and len(context) == MIN_PEERS + 2  # s22 pushed again: its new row stands
    assert sorted(context.loc[raw["row"], "subject_fp"]) == ["s22", "s23"]


def test_waiting_times_are_kept_as_int_milliseconds() -> None:
    # A batch with a push without a time: pandas holds the column as float64. An earlier release stored
    # such a time as float text; read back, it waits on as an int too.
    earlier = PeerState.from_json('{"width": 0.004, "buckets": {}, "pending": [[70000.0, null, null, null, null, '
                                  'null, null, "1700000000000.0", "old"]]}')
    obs = pd.DataFrame({"value": [900.0, 3.0], "subject_fp": ["a", "b"], "timestamp_ms": [1_700_000_000_123, None]})
    _, state, _ = score_group("g", "linger.ms", obs, earlier)
    times = {p[-1]: p[-2] for p in state.pending}
    assert times == {"old": 1_700_000_000_000, "a": 1_700_000_000_123, "b": None}
    assert all(type(t) is int for t in times.values() if t is not None)
    assert '"1700000000000.0"' not in state.to_json()


@pytest.mark.parametrize("waiting_time", [None, 1_700_000_000_000])
@pytest.mark.parametrize("enough_peers", [False, True])
def test_waiting_values_join_new_ones_without_pandas_guessing_a_dtype(waiting_time: int | None,
                                                                      enough_peers: bool) -> None:
    # Waiting values with no time (an all-null column) beside observations' times: pandas warns that a future
    # release types such a concatenation differently; the rule gives both sides one dtype first.
    waiting = PeerState.from_obj({"width": 0.004, "buckets": {}, "pending": [
        [70000.0, None, None, None, None, None, None, waiting_time, "old"]]})
    n = MIN_PEERS if enough_peers else 2
    times = [1_700_000_000_001 + i for i in range(n - 1)] + [None]  # float64 to pandas, as a batch with an untimed push
    obs = pd.DataFrame({"value": [5.0] * n, "subject_fp": [f"s{i}" for i in range(n)], "timestamp_ms": times})
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        raw, state, context = score_group("g", "linger.ms", obs, waiting)
    if enough_peers:  # the waiting value is scored now, at its own time, beside the observations
        assert str(context["timestamp_ms"].dtype) == "Int64"
        last = context["timestamp_ms"].iloc[-1]
        assert list(raw["rule"]) == ["fleet-outlier"]
        assert pd.isna(last) if waiting_time is None else last == waiting_time
    else:
        assert {p[-1]: p[-2] for p in state.pending}["old"] == waiting_time


def test_a_bare_summary_from_an_earlier_release_reads_as_a_state_with_nothing_waiting() -> None:
    summary = NumericSummary().add(np.array([5.0, 7.0]))
    assert PeerState.from_json(summary.to_json()) == PeerState(summary)
    assert PeerState.from_json(None) == PeerState() and PeerState(summary).to_json() == summary.to_json()


def test_fleet_peers_are_per_family_and_role() -> None:
    rdk = [push({"linger.ms": "5000"}, RDKAFKA) for _ in range(MIN_PEERS)]
    rows, _ = stateful_findings(*producers(MIN_PEERS), *rdk)
    assert "fleet-outlier" not in rules_of(rows)  # librdkafka's peers all use 5000


def test_fleet_ignores_sentinels_and_sensitive_keys() -> None:
    pushes = [*producers(MIN_PEERS), push({"acks": "all", "metadata.max.age.ms": "-1",
                                    "sasl.login.refresh.buffer.seconds": "1"})]
    rows, state = stateful_findings(*pushes)
    assert "fleet-outlier" not in rules_of(rows)
    assert ("apache-kafka-java/producer/v4", "sasl.login.refresh.buffer.seconds") not in state.fleet


def test_a_tuning_a_sizeable_share_uses_is_not_an_outlier() -> None:
    # 80 peers on the 64 KiB default, 20 on a deliberate 1 MiB: MAD is 0, but 1 MiB is no anomaly.
    obs = pd.DataFrame({"value": [65536.0] * 80 + [1048576.0] * 20})
    raw, _, _ = score_group("apache-kafka-java/consumer/v4", "receive.buffer.bytes", obs, PeerState())
    assert raw.empty
    # The same value used by one peer in a hundred is rare, but 16x (1.2 decades) is a tuning, not a slip.
    obs = pd.DataFrame({"value": [65536.0] * 99 + [1048576.0]})
    assert score_group("apache-kafka-java/consumer/v4", "receive.buffer.bytes", obs, PeerState())[0].empty
    # 1,024x (a size in KiB typed as bytes the other way round): rare and 3 decades out, flagged.
    obs = pd.DataFrame({"value": [65536.0] * 99 + [67108864.0]})
    raw, _, _ = score_group("apache-kafka-java/consumer/v4", "receive.buffer.bytes", obs, PeerState())
    assert raw["row"].tolist() == [99]
    assert raw["evidence"][0]["peers_near_value"] == 1 and raw["evidence"][0]["peer_iqr"] == [65500, 65500]


def test_rare_but_close_is_not_an_outlier_and_spread_peers_widen_the_fences() -> None:
    close = pd.DataFrame({"value": [16384.0] * 99 + [65536.0]})  # 0.6 decades: within the 1.5-decade floor
    assert score_group("g", "batch.size", close, PeerState())[0].empty
    bimodal = pd.DataFrame({"value": [65536.0] * 60 + [1048576.0] * 40 + [1_500_000.0]})
    assert score_group("g", "receive.buffer.bytes", bimodal, PeerState())[0].empty  # next to the 1 MiB crowd


def test_rarity_is_a_share_once_the_fleet_is_large() -> None:
    # 6/300 = 2% at 64x and 4 copies at 244x: both rare and far; 6 at 16x: rare but a tuning.
    values = [16384.0] * 284 + [262144.0] * 6 + [1_048_576.0] * 6 + [4_000_000.0] * 4
    raw, _, _ = score_group("g", "batch.size", pd.DataFrame({"value": values}), PeerState())
    assert sorted(raw["row"].tolist()) == list(range(290, 300))
    values = [16384.0] * 270 + [262144.0] * 30  # 10% use 256 KiB on purpose
    raw, _, _ = score_group("g", "batch.size", pd.DataFrame({"value": values}), PeerState())
    assert raw.empty


def test_sentinels_are_neither_counted_nor_flagged() -> None:
    pushes = [push({"acks": "all", "receive.buffer.bytes": "65536"}) for _ in range(12)]
    pushes += [push({"acks": "all", "receive.buffer.bytes": "-1", "retries": str(2**31 - 1), "linger.ms": "0"})]
    rows, state = stateful_findings(*pushes)
    assert "fleet-outlier" not in rules_of(rows)
    assert state.fleet[("apache-kafka-java/producer/v4", "receive.buffer.bytes")].count == 12
    assert ("apache-kafka-java/producer/v4", "retries") not in state.fleet
    assert ("apache-kafka-java/producer/v4", "linger.ms") not in state.fleet


def test_fleet_peers_are_per_major_version() -> None:
    old = [push({"acks": "all", "linger.ms": "500"}, JAVA_3) for _ in range(MIN_PEERS)]
    rows, state = stateful_findings(*producers(MIN_PEERS), *old)
    assert "fleet-outlier" not in rules_of(rows)
    assert {g for g, _ in state.fleet} == {"apache-kafka-java/producer/v3", "apache-kafka-java/producer/v4"}


# --- the Spark-facing pair: prepare (per batch) and step (per state key) ----------------------------

def test_prepare_and_step_give_what_detect_with_state_gives() -> None:
    import json

    from tests.rules_helpers import NOW_MS, table
    from udfs.rules.stateful import prepare, step

    pushes = [*producers(MIN_PEERS), push({"acks": "all", "linger.ms": "9000", "batch.size": "16384"}),
              consumer("k"), consumer("k", **{"group.protocol": "consumer"}), push({"acks": "0"})]
    rows = prepare(table(*pushes), KEY, NOW_MS).to_pandas()
    found, states = [], {}
    for state_key, part in rows.groupby("state_key"):
        out, state = step(str(state_key), part, None, KEY, NOW_MS)
        found += out.to_pylist()
        states[state_key] = state
    expected, _ = stateful_findings(*pushes)
    assert sorted(r["alert_id"] for r in found) == sorted(r["alert_id"] for r in expected)
    assert all(v is None for k, v in states.items() if str(k).startswith("pass|"))
    assert all(json.loads(v) for k, v in states.items() if not str(k).startswith("pass|"))


def test_step_keeps_a_waiting_value_in_its_json_state_and_scores_it_later() -> None:
    from tests.rules_helpers import NOW_MS, table
    from udfs.rules.fleet import peer_states_from_json
    from udfs.rules.stateful import prepare, step

    early = push({"acks": "all", "linger.ms": "5000", "batch.size": "16384"}, client_id="early-client")
    state_key = "fleet|apache-kafka-java/producer/v4"

    def rows(*pushes: dict[str, object]) -> pd.DataFrame:
        frame = prepare(table(*pushes), KEY, NOW_MS).to_pandas()
        return frame[frame["state_key"] == state_key]

    def linger(state: str | None) -> str:  # the linger.ms part of the key's state
        assert state is not None
        return peer_states_from_json(state)["linger.ms"].to_json()

    out, state = step(state_key, rows(early, *producers(3)), None, KEY, NOW_MS)
    assert out.num_rows == 0 and "early-client" in linger(state)  # waits, with its identity
    out, state = step(state_key, rows(*producers(MIN_PEERS)), state, KEY, NOW_MS)
    hits = out.to_pylist()
    assert [(h["rule"], h["keys"], h["client_id"]) for h in hits] == [("fleet-outlier", ["linger.ms"], "early-client")]
    assert hits[0]["client_instance_id"] == early["client_instance_id"]
    assert "pending" not in linger(state) and "early-client" not in linger(state)


def test_one_fleet_key_per_peer_group_finds_each_outlying_value() -> None:
    from tests.rules_helpers import NOW_MS, table
    from udfs.rules.stateful import detect_with_state, prepare

    odd = {"acks": "all", "linger.ms": "9000", "batch.size": "900000000"}
    batches = [[*producers(20), push(odd, client_id="early")], producers(MIN_PEERS),
               [push({**odd, "linger.ms": "5", "batch.size": "1"}, client_id="late"),
                *producers(5, linger="10")]]
    state, rows = None, []
    for batch in batches:
        out, state = detect_with_state(table(*batch), KEY, NOW_MS, state)
        rows += [(r["client_id"], tuple(r["keys"])) for r in out.to_pylist() if r["rule"] == "fleet-outlier"]
    keys = {k for k in prepare(table(*batches[0]), KEY, NOW_MS).column("state_key").to_pylist()
            if k.startswith("fleet|")}
    assert len(keys) == 1  # the peer group's one key holds every config key's summary
    assert set(rows) == {("early", ("linger.ms",)), ("early", ("batch.size",)), ("late", ("batch.size",))}


def test_a_push_s_fleet_values_travel_as_one_row_with_its_context_once() -> None:
    from tests.rules_helpers import NOW_MS, table
    from udfs.rules.stateful import prepare

    pushes = [push({"acks": "all", "linger.ms": "5", "batch.size": "16384"}, client_id=f"c{i}") for i in range(3)]
    frame = prepare(table(*pushes), KEY, NOW_MS).to_pandas()
    fleet = frame[frame["state_key"].str.startswith("fleet|")]
    values = sorted((c, k, v) for c, keys, vals in zip(fleet["client_id"], fleet["config_keys"], fleet["config_values"],
                                                       strict=True) for k, v in zip(keys, vals, strict=True))
    assert values == sorted((f"c{i}", k, v) for i in range(3) for k, v in (("batch.size", 16384.0), ("linger.ms", 5.0)))
    assert len(fleet) == 3 and all(len(keys) == 2 for keys in fleet["config_keys"])  # one row per push

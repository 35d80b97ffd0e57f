"""The Bloom filter of stored connection ids (udfs.seen): never a false "no", rarely a false "maybe"."""

from __future__ import annotations

import os
import subprocess
import sys

from udfs.seen import FIRST_CAPACITY, SeenIds, Sizing

SIZING = Sizing(bits_per_id=32, probes=22)


def test_every_added_id_may_be_stored_across_growing_filters_and_a_round_trip() -> None:
    seen = SeenIds(SIZING)
    assert not seen.might_contain(["c1"]).any()  # empty: nothing stored
    added = [f"conn-{i}" for i in range(3 * FIRST_CAPACITY + 5)]
    for start in range(0, len(added), 5000):
        seen.add(added[start:start + 5000])
    assert [f.capacity for f in seen.filters] == [FIRST_CAPACITY, 2 * FIRST_CAPACITY, 4 * FIRST_CAPACITY]
    assert seen.might_contain(added).all()
    again = SeenIds.from_rows(seen.rows(), SIZING)  # what the state keeps
    assert again.might_contain(added).all() and not again.changed
    others = [f"other-{i}" for i in range(50_000)]
    assert int(again.might_contain(others).sum()) <= 2  # about 2e-7 per filter: none expected


def test_a_rebuilt_filter_holds_exactly_what_it_was_given() -> None:
    kept = [f"kept-{i}" for i in range(1000)]
    seen = SeenIds.rebuilt(kept, SIZING)
    assert seen.might_contain(kept).all()
    assert not seen.might_contain([f"gone-{i}" for i in range(1000)]).any()
    assert seen.changed and seen.filters[0].capacity == FIRST_CAPACITY
    big = SeenIds.rebuilt([f"id-{i}" for i in range(5000)], SIZING)
    assert big.filters[0].capacity == 16384  # a power of two, at least twice the ids


def test_the_filter_is_the_same_in_another_process() -> None:
    # The filter lives in the checkpoint: a restarted job (another process, another hash seed) reads it.
    code = ("from udfs.seen import SeenIds, Sizing; "
            "print(SeenIds.rebuilt(['c1', 'c2'], Sizing(32, 22)).rows()[0][3].hex())")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": "12345"})
    assert other.stdout.strip() == SeenIds.rebuilt(["c1", "c2"], SIZING).rows()[0][3].hex()

"""Go time.Duration text read as milliseconds (sarama and franz-go timeouts), the way time.ParseDuration reads it."""

from __future__ import annotations

import numpy as np
import pytest

from udfs.rules.durations import go_duration_ms, go_durations_ms

DURATIONS = [
    ("9s", 9_000.0), ("4s", 4_000.0), ("10m", 600_000.0), ("100ms", 100.0), ("1m30s", 90_000.0),
    ("1.5s", 1_500.0), ("500\u00b5s", 0.5), ("500\u03bcs", 0.5), ("500us", 0.5), ("250ns", 0.00025),
    ("2h0m0s", 7_200_000.0), ("1h1m1.5s", 3_661_500.0), ("10m0s", 600_000.0), ("0s", 0.0), ("0", 0.0),
    (".5s", 500.0), ("5.s", 5_000.0), ("+5s", 5_000.0), ("-1.5h", -5_400_000.0), (" 45s ", 45_000.0),
]
NOT_DURATIONS = ["", "s", ".s", "10000", "1.5", "-1", "5 s", "1m 30s", "5sec", "1d", "10S", "ms", "1e3s", "all"]


@pytest.mark.parametrize(("text", "ms"), DURATIONS)
def test_go_durations_read_in_milliseconds(text: str, ms: float) -> None:
    assert go_duration_ms(text) == pytest.approx(ms)


@pytest.mark.parametrize("text", NOT_DURATIONS)
def test_anything_else_is_unknown(text: str) -> None:
    # A bare number is not Go's notation: nanoseconds (encoding/json) or milliseconds, nobody can tell.
    assert go_duration_ms(text) is None


def test_a_whole_block_at_once_keeps_its_shape() -> None:
    block = np.array([["9s", None, "3s"], ["1m", 7.0, "nonsense"]], dtype=object)
    out = go_durations_ms(block)
    assert out.shape == (2, 3)
    assert out[0, 0] == 9_000.0 and out[0, 2] == 3_000.0 and out[1, 0] == 60_000.0
    assert np.isnan(out[0, 1]) and np.isnan(out[1, 1]) and np.isnan(out[1, 2])
    assert go_durations_ms(np.empty((0, 4), dtype=object)).shape == (0, 4)

"""The session factory's measured state-store defaults reach the running session (``streaming.session``)."""

from __future__ import annotations

from typing import Any

import pytest

from streaming.session import ROCKSDB_PROVIDER

pytestmark = pytest.mark.spark

_STORE = "spark.sql.streaming.stateStore"


def test_state_lives_in_rocksdb_changelogged_without_counting_rows(spark: Any) -> None:
    assert spark.conf.get(f"{_STORE}.providerClass") == ROCKSDB_PROVIDER
    assert spark.conf.get(f"{_STORE}.rocksdb.changelogCheckpointing.enabled") == "true"
    # docs/benchmarks.md: counting rows costs a lookup per state write; without it the 1M-connection run is faster.
    assert spark.conf.get(f"{_STORE}.rocksdb.trackTotalNumberOfRows") == "false"

"""The state layout a checkpoint began with is kept beside it, and a restart uses it (``streaming.job.layout``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streaming.job.exceptions import CheckpointLayoutError
from streaming.job.layout import LAYOUT_FILE, pinned_layout
from udfs.pipeline import DEFAULT_LAYOUT, LEGACY_LAYOUT, StateLayout

pytestmark = pytest.mark.spark


def test_a_new_checkpoint_begins_with_the_default_and_keeps_it(spark: Any, tmp_path: Path) -> None:
    checkpoint = tmp_path / "job"
    assert pinned_layout(spark, str(checkpoint)) == DEFAULT_LAYOUT
    assert json.loads((checkpoint / LAYOUT_FILE).read_text()) == {"connection_buckets": 8, "fleet_per_key": False,
                                                                  "markers_apart": False, "gauges_on_jvm": True,
                                                                  "detection_on_jvm": True}
    # A later release with another default reads what the checkpoint began with.
    assert pinned_layout(spark, str(checkpoint), StateLayout(connection_buckets=32)) == DEFAULT_LAYOUT


def test_a_checkpoint_from_before_the_file_keeps_the_layout_it_was_written_with(spark: Any, tmp_path: Path) -> None:
    checkpoint = tmp_path / "job"
    (checkpoint / "offsets").mkdir(parents=True)
    (checkpoint / "offsets" / "0").write_text("v1\n{}\n")
    assert pinned_layout(spark, str(checkpoint)) == LEGACY_LAYOUT == StateLayout(64, fleet_per_key=True,
                                                                                 markers_apart=True,
                                                                                 gauges_on_jvm=False,
                                                                                 detection_on_jvm=False)
    assert json.loads((checkpoint / LAYOUT_FILE).read_text())["connection_buckets"] == 64
    assert pinned_layout(spark, f"file://{checkpoint}") == LEGACY_LAYOUT  # a Hadoop URI reads the same file


@pytest.mark.parametrize(("written", "kept"), [
    # before one entry per connection: markers apart, and the Python gauge steps
    ('{"connection_buckets": 8, "fleet_per_key": false}',
     StateLayout(8, fleet_per_key=False, markers_apart=True, gauges_on_jvm=False, detection_on_jvm=False)),
    # before the JVM gauge steps: the Python steps
    ('{"connection_buckets": 8, "fleet_per_key": false, "markers_apart": false}',
     StateLayout(8, fleet_per_key=False, markers_apart=False, gauges_on_jvm=False, detection_on_jvm=False)),
    # before the JVM route and detection: the Python route stage and detection step
    ('{"connection_buckets": 8, "fleet_per_key": false, "markers_apart": false, "gauges_on_jvm": true}',
     StateLayout(8, fleet_per_key=False, markers_apart=False, gauges_on_jvm=True, detection_on_jvm=False)),
], ids=["before-entries", "before-jvm-steps", "before-jvm-detection"])
def test_a_layout_file_from_an_earlier_release_keeps_what_its_absent_fields_meant(
        spark: Any, tmp_path: Path, written: str, kept: StateLayout) -> None:
    checkpoint = tmp_path / "job"
    checkpoint.mkdir()
    (checkpoint / LAYOUT_FILE).write_text(written)
    assert pinned_layout(spark, str(checkpoint)) == kept


def test_an_unreadable_layout_file_is_one_clear_error(spark: Any, tmp_path: Path) -> None:
    checkpoint = tmp_path / "job"
    checkpoint.mkdir()
    (checkpoint / LAYOUT_FILE).write_text('{"connection_buckets": "many"}')
    with pytest.raises(CheckpointLayoutError, match=f"{LAYOUT_FILE}: not a configwatch layout file"):
        pinned_layout(spark, str(checkpoint))

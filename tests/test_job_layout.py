"""The state layout a checkpoint began with is kept beside it, and a restart uses it (``streaming.job.layout``)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from streaming.job.exceptions import CheckpointLayoutError
from streaming.job.layout import LAYOUT_FILE, pinned_layout
from udfs.pipeline import DEFAULT_LAYOUT, LEGACY_LAYOUT, StateLayout

pytestmark = pytest.mark.spark


def test_a_new_checkpoint_begins_with_the_default_and_keeps_it(spark: Any, tmp_path: Path) -> None:
    checkpoint = tmp_path / "job"
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    began = replace(DEFAULT_LAYOUT, key_partitions=partitions)  # bucket keys spread over the session's partitions
    assert pinned_layout(spark, str(checkpoint)) == began
    assert json.loads((checkpoint / LAYOUT_FILE).read_text()) == {"connection_buckets": 8, "fleet_per_key": False,
                                                                  "markers_apart": False, "gauges_on_jvm": True,
                                                                  "detection_on_jvm": True,
                                                                  "key_partitions": partitions,
                                                                  "one_keyed_step": True}
    # A later release with another default, or a session with other shuffle partitions, reads what it began with.
    assert pinned_layout(spark, str(checkpoint), StateLayout(connection_buckets=32)) == began
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions + 3))
    try:
        assert pinned_layout(spark, str(checkpoint)) == began
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", str(partitions))


def test_a_checkpoint_from_before_the_file_keeps_the_layout_it_was_written_with(spark: Any, tmp_path: Path) -> None:
    checkpoint = tmp_path / "job"
    (checkpoint / "offsets").mkdir(parents=True)
    (checkpoint / "offsets" / "0").write_text("v1\n{}\n")
    assert pinned_layout(spark, str(checkpoint)) == LEGACY_LAYOUT == StateLayout(64, fleet_per_key=True,
                                                                                 markers_apart=True,
                                                                                 gauges_on_jvm=False,
                                                                                 detection_on_jvm=False,
                                                                                 one_keyed_step=False)
    assert json.loads((checkpoint / LAYOUT_FILE).read_text())["connection_buckets"] == 64
    assert pinned_layout(spark, f"file://{checkpoint}") == LEGACY_LAYOUT  # a Hadoop URI reads the same file


@pytest.mark.parametrize(("written", "kept"), [
    # before one entry per connection: markers apart, and the Python gauge steps
    ('{"connection_buckets": 8, "fleet_per_key": false}',
     StateLayout(8, fleet_per_key=False, markers_apart=True, gauges_on_jvm=False, detection_on_jvm=False,
                 one_keyed_step=False)),
    # before the JVM gauge steps: the Python steps
    ('{"connection_buckets": 8, "fleet_per_key": false, "markers_apart": false}',
     StateLayout(8, fleet_per_key=False, markers_apart=False, gauges_on_jvm=False, detection_on_jvm=False,
                 one_keyed_step=False)),
    # before the JVM route and detection: the Python route stage and detection step
    ('{"connection_buckets": 8, "fleet_per_key": false, "markers_apart": false, "gauges_on_jvm": true}',
     StateLayout(8, fleet_per_key=False, markers_apart=False, gauges_on_jvm=True, detection_on_jvm=False,
                 one_keyed_step=False)),
    # before bucket keys spread over the shuffle partitions: plain labels
    ('{"connection_buckets": 8, "fleet_per_key": false, "markers_apart": false, "gauges_on_jvm": true, '
     '"detection_on_jvm": true}',
     StateLayout(8, fleet_per_key=False, markers_apart=False, gauges_on_jvm=True, detection_on_jvm=True,
                 key_partitions=0, one_keyed_step=False)),
    # before one keyed step: the detection step and the connection step each over the shuffle
    ('{"connection_buckets": 8, "fleet_per_key": false, "markers_apart": false, "gauges_on_jvm": true, '
     '"detection_on_jvm": true, "key_partitions": 2}',
     StateLayout(8, fleet_per_key=False, markers_apart=False, gauges_on_jvm=True, detection_on_jvm=True,
                 key_partitions=2, one_keyed_step=False)),
], ids=["before-entries", "before-jvm-steps", "before-jvm-detection", "before-key-partitions", "before-one-step"])
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


_PLAIN_CONN_KEYS = {f"conn|{i}" for i in range(8)}
# Spark's hash partitioning of these labels is part of every checkpoint begun with two shuffle partitions:
# if a Spark upgrade changed it, those checkpoints' bucket keys would change with it.
_SPREAD_CONN_KEYS_2 = {"conn|0", "conn|1.2", "conn|2.1", "conn|3", "conn|4", "conn|5.2", "conn|6", "conn|7"}


@pytest.mark.parametrize("partitions", [0, 2, 4])
def test_the_route_spreads_bucket_keys_evenly_over_the_layouts_partitions(spark: Any, partitions: int) -> None:
    from pyspark.sql import functions as F

    from bench.workload import workload_records
    from configwatch.contract import OUTPUT_KINDS
    from configwatch.secrets import SecretStr
    from streaming import jvm_pipeline
    from udfs.gauges import GaugeConfig
    from udfs.rules.stateful import PASS_BUCKETS

    key = SecretStr("layout-test")
    records = [r.value for r in workload_records(3000, key, seed=3, start_ms=1_790_000_000_000, base_clients=300)]
    raw = spark.createDataFrame([(v, "t", i % 4, i) for i, v in enumerate(records)],
                                "value binary, topic string, partition int, offset long")
    gauges = DEFAULT_LAYOUT.gauges(GaugeConfig(ttl_ms=None, fingerprint_key=key))
    routed = jvm_pipeline.route(raw, key, gauges, OUTPUT_KINDS, validate=True, key_partitions=partitions)
    shuffle = partitions or 2
    saved = {k: spark.conf.get(k) for k in ("spark.sql.shuffle.partitions", "spark.sql.adaptive.enabled")}
    spark.conf.set("spark.sql.shuffle.partitions", str(shuffle))
    spark.conf.set("spark.sql.adaptive.enabled", "false")  # else a small batch's partitions are coalesced into one
    try:
        placed = {(r.state_key, r.p) for r in routed.repartition("state_key")
                  .select("state_key", F.spark_partition_id().alias("p")).distinct().collect()}
    finally:
        for k, v in saved.items():
            spark.conf.set(k, v)
    conn = {k for k, _ in placed if k.startswith("conn|")}
    assert len(conn) == gauges.buckets
    if partitions == 0:
        assert conn == _PLAIN_CONN_KEYS
        return
    if partitions == 2:
        assert conn == _SPREAD_CONN_KEYS_2
    for prefix, buckets in (("conn|", gauges.buckets), ("pass|", PASS_BUCKETS)):
        per_partition = Counter(p for k, p in placed if k.startswith(prefix))
        assert per_partition == dict.fromkeys(range(shuffle), buckets // shuffle), prefix

"""The state layout a checkpoint began with, kept beside its state in ``configwatch-layout.json``.

State keys depend on the layout (``udfs.pipeline.StateLayout``: connection buckets,
fleet keys per peer group or per config key). A restart must form them as the
checkpoint's first run did, or closes would miss their connections and fleet
summaries would start over; so the first run writes the layout and every later
run reads it. A checkpoint from before the file existed (it has offsets but no
file) began with ``LEGACY_LAYOUT``. The file goes through Hadoop's file system, like
the checkpoint itself, so a cluster's checkpoint URI works too.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, replace
from typing import Any

from streaming.job.exceptions import CheckpointLayoutError
from udfs.pipeline import DEFAULT_LAYOUT, LEGACY_LAYOUT, StateLayout

__all__ = ["LAYOUT_FILE", "pinned_layout"]

log = logging.getLogger(__name__)

LAYOUT_FILE = "configwatch-layout.json"


def _read(spark: Any, fs: Any, path: Any) -> str:
    stream = fs.open(path)
    try:
        return str(spark.sparkContext._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
    finally:
        stream.close()


def _write(fs: Any, path: Any, layout: StateLayout) -> None:
    stream = fs.create(path, True)
    try:
        stream.write(bytearray(json.dumps(asdict(layout), sort_keys=True).encode()))
    finally:
        stream.close()


def _parse(text: str, where: str) -> StateLayout:
    try:
        obj = json.loads(text)
        layout = StateLayout(connection_buckets=int(obj["connection_buckets"]),
                             fleet_per_key=bool(obj["fleet_per_key"]),
                             # absent: written before the field, when that was the only way
                             markers_apart=bool(obj.get("markers_apart", True)),
                             gauges_on_jvm=bool(obj.get("gauges_on_jvm", False)),
                             detection_on_jvm=bool(obj.get("detection_on_jvm", False)),
                             key_partitions=int(obj.get("key_partitions", 0)),
                             one_keyed_step=bool(obj.get("one_keyed_step", False)))
    except (ValueError, TypeError, KeyError) as exc:
        raise CheckpointLayoutError(f"{where}: not a configwatch layout file ({type(exc).__name__}: {exc}); "
                                    "restore it from a backup of the checkpoint") from None
    if layout.connection_buckets <= 0:
        raise CheckpointLayoutError(f"{where}: connection_buckets must be positive")
    if layout.key_partitions < 0:
        raise CheckpointLayoutError(f"{where}: key_partitions must not be negative")
    return layout


def pinned_layout(spark: Any, checkpoint: str, fresh: StateLayout | None = None) -> StateLayout:
    """The layout of the checkpoint at ``checkpoint`` (a path or Hadoop URI); ``fresh`` for a new one, written.

    ``fresh`` defaults to ``DEFAULT_LAYOUT`` with its bucket keys spread over the session's shuffle partitions.
    """
    if fresh is None:
        fresh = replace(DEFAULT_LAYOUT, key_partitions=int(spark.conf.get("spark.sql.shuffle.partitions")))
    jvm = spark.sparkContext._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path
    root = hadoop_path(checkpoint)
    fs = root.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    path = hadoop_path(root, LAYOUT_FILE)
    if fs.exists(path):
        return _parse(_read(spark, fs, path), str(path.toString()))
    offsets = hadoop_path(root, "offsets")
    began = fs.exists(offsets) and len(fs.listStatus(offsets)) > 0
    layout = LEGACY_LAYOUT if began else fresh
    if began:
        log.info("checkpoint %s began before its layout was kept: %s connection buckets, fleet keys per "
                 "config key, as then", checkpoint, layout.connection_buckets)
    fs.mkdirs(root)
    _write(fs, path, layout)
    return layout

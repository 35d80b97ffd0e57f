"""The checkpoint's format, kept beside the query's state in ``configwatch-checkpoint.json``.

A restart must find its state where the plan looks for it: the same keyed step, state
variables and state keys (``udfs.steps``, ``udfs.pipeline``). A change to any of them is
a new ``FORMAT``. The first run writes the file; a later run reads it and refuses, in one
line naming the directory, a checkpoint of another format or one begun without the file
(an earlier release). The file goes through Hadoop's file system, like the checkpoint
itself, so a cluster's checkpoint URI works too.
"""

from __future__ import annotations

import json
from typing import Any, Final

from streaming.job.exceptions import CheckpointFormatError

__all__ = ["FORMAT", "FORMAT_FILE", "check_checkpoint"]

FORMAT: Final = 3  # 3: connections and gauge totals keep the posture (connections_by_security)
FORMAT_FILE: Final = "configwatch-checkpoint.json"
_ADVICE: Final = ("start the job with a new --checkpoint-dir or --checkpoint-uri (the state rebuilds from the input "
                  "topic's retained events)")


def _read(spark: Any, fs: Any, path: Any) -> str:
    stream = fs.open(path)
    try:
        return str(spark.sparkContext._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
    finally:
        stream.close()


def _format_of(text: str) -> object:
    try:
        return json.loads(text).get("format")
    except (ValueError, AttributeError):
        return None


def check_checkpoint(spark: Any, checkpoint: str) -> None:
    """Refuse a checkpoint at ``checkpoint`` (a path or Hadoop URI) this release cannot run; mark a new one."""
    jvm = spark.sparkContext._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path
    root = hadoop_path(checkpoint)
    fs = root.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    path = hadoop_path(root, FORMAT_FILE)
    if fs.exists(path):
        found = _format_of(_read(spark, fs, path))
        if found != FORMAT:
            raise CheckpointFormatError(f"checkpoint {checkpoint} holds state in format {found!r}, this release "
                                        f"runs format {FORMAT}: {_ADVICE}")
        return
    if fs.exists(root) and len(fs.listStatus(root)) > 0:
        raise CheckpointFormatError(f"checkpoint {checkpoint} was begun by an earlier configwatch release: {_ADVICE}")
    fs.mkdirs(root)
    stream = fs.create(path, True)
    try:
        stream.write(bytearray(json.dumps({"format": FORMAT}).encode()))
    finally:
        stream.close()

"""The Spark session factory: local by default, the Kafka connector attached, RocksDB state.

Under ``spark-submit`` (a master and jars already given), the factory leaves
those alone, so the same job runs on a cluster.
"""

from __future__ import annotations

import logging
import os
import sys
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from configwatch.jars import connector_jars
from configwatch.settings import DRIVER_MEMORY

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["SparkSettings", "build_spark_session"]

log = logging.getLogger(__name__)

_LOG4J = Path(__file__).resolve().parent / "resources" / "log4j2.properties"
ROCKSDB_PROVIDER = (
    "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
)
ROCKSDB_BLOCK_CACHE_MB = 64  # per state store instance; Spark's default is 8
_CHECKPOINT_FILES = "spark.sql.streaming.checkpointFileManagerClass"
_LOCAL_CHECKPOINT_FILES = "org.apache.spark.sql.execution.streaming.FileSystemBasedCheckpointFileManager"




@dataclass(frozen=True)
class SparkSettings:
    """What the factory needs; sizes fit a 2-core / 24 GiB machine by default."""

    master: str | None = None  # None: keep spark-submit's, else local[2]
    app_name: str = "configwatch"
    driver_memory: str = DRIVER_MEMORY  # why this size: configwatch.settings
    shuffle_partitions: int = 2
    arrow_batch_rows: int = 10_000
    ui: bool = False
    # The module Spark forks Python workers from: libraries and GX loaded once, then frozen
    # (decode + route stage 0.69x, workers' PSS 0.92x of Spark's pyspark.daemon: docs/benchmarks.md).
    python_daemon: str = "streaming.worker_daemon"
    # Where Spark's own output goes (JVM warnings, Python-worker prints); None: the console.
    log_file: Path | None = None


# The process's session as this factory last configured it, and with which settings (log file aside):
# a call with the same settings returns it as it is instead of setting every option again, which took
# 38 ms of every job start in py4j round trips (docs/benchmarks.md, 2026-11-29, afternoon).
_configured: list[tuple[SparkSession, SparkSettings]] = []
_stderr_to: list[tuple[SparkSession, Path]] = []  # where that session's driver JVM sends its stderr


def build_spark_session(settings: SparkSettings | None = None) -> SparkSession:
    """Return the (one per process) Spark session, configured for configwatch.

    A call with the settings of the call before (``log_file`` aside) returns the session as it is.
    """
    settings = settings or SparkSettings()
    same_session = replace(settings, log_file=None)  # a live session takes a new log file by a redirect
    spark = _configured_session(same_session)
    if spark is None:
        spark = _configure(settings)
        _configured[:] = [(spark, same_session)]
    if settings.log_file is not None and _stderr_to != [(spark, settings.log_file)]:
        _redirect_jvm_stderr(spark, settings.log_file)
        _stderr_to[:] = [(spark, settings.log_file)]
    return spark


def _configured_session(settings: SparkSettings) -> SparkSession | None:
    from pyspark.sql import SparkSession

    live = SparkSession._instantiatedSession
    if live is None or live._sc._jsc is None or not _configured:
        return None
    spark, applied = _configured[0]
    return spark if spark is live and applied == settings else None


def _archive_of_this_code() -> str | None:
    """The archive (a wheel or zip from ``--py-files``) this code was imported from, if it was."""
    import configwatch

    for parent in Path(configwatch.__file__).parents:
        if parent.is_file():
            return str(parent) if zipfile.is_zipfile(parent) else None
    return None


def _configure(settings: SparkSettings) -> SparkSession:
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    # Workers must run the interpreter that has configwatch installed.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

    submitted = SparkConf()  # picks up spark-submit's spark.* system properties
    conf = SparkConf().setAppName(settings.app_name)
    if settings.master or not submitted.contains("spark.master"):
        conf.setMaster(settings.master or "local[2]")
    if not submitted.contains("spark.jars") and not submitted.contains("spark.jars.packages"):
        conf.set("spark.jars", ",".join(str(j) for j in connector_jars()))
    master = conf.get("spark.master") or submitted.get("spark.master", "")
    if not submitted.contains("spark.master") and (master == "local" or master.startswith("local[")):
        # One JVM whose Python workers run this interpreter, where configwatch is installed. Elsewhere (spark-submit,
        # a cluster) executors may get the code only per task, from --py-files: Spark's own daemon then.
        conf.set("spark.python.daemon.module", settings.python_daemon)
    archive = _archive_of_this_code()
    if archive is not None and not submitted.contains("spark.executorEnv.PYTHONPATH"):
        # The Python process Spark starts on the driver to plan transformWithStateInPandas (it registers the
        # state variables) is not given --py-files (Spark 4.0.0); it is given the executors' environment, so the
        # archive goes on that path (a path that does not exist on an executor's node is skipped there).
        conf.set("spark.executorEnv.PYTHONPATH", archive)
    if master.startswith("local"):
        # Checkpoints on this machine: Hadoop's FileContext asks for a link status per rename, which without
        # Hadoop's native library spawns ``readlink`` (tens of ms each, and every state commit renames); the
        # FileSystem API renames in Java (docs/benchmarks.md). On a cluster Spark's default stays.
        conf.set(_CHECKPOINT_FILES, _LOCAL_CHECKPOINT_FILES)
    # HotSpot's defaults (G1): the parallel collector and compiling huge methods, kept for the JVM route
    # before, measured 0.98x on this job, within noise (docs/benchmarks.md), so they went.
    java_opts = f"-Dlog4j2.configurationFile=file:{_LOG4J}"
    driver_opts = java_opts
    if settings.log_file is not None:
        settings.log_file.parent.mkdir(parents=True, exist_ok=True)
        driver_opts += f" -Dconfigwatch.spark.log={settings.log_file} -Dconfigwatch.spark.console=error"
    pairs = {
        "spark.driver.memory": settings.driver_memory,
        "spark.driver.extraJavaOptions": driver_opts,
        "spark.executor.extraJavaOptions": java_opts,
        "spark.sql.shuffle.partitions": str(settings.shuffle_partitions),
        "spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER,
        # Kafka batch writes through DataSource V2 (Spark's default lists it as V1): the job's write then
        # runs in the query it is called on, so the batch's observed counts arrive (streaming.job.batches).
        "spark.sql.sources.useV1SourceList": "avro,csv,json,orc,parquet,text",
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
        # Counting the state's rows (progress events' numRowsTotal) costs a RocksDB lookup on
        # every write and remove (bench.fig_state without it: the 1M-connection run 0.79x as long).
        "spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows": "false",
        # Each state store instance (operator x shuffle partition) caches 64 MB of blocks, not 8: the
        # 1M-connection closes (bench.fig_state) take 0.85x the state-operator time; 128 MB gains no more.
        "spark.sql.streaming.stateStore.rocksdb.blockCacheSizeMB": str(ROCKSDB_BLOCK_CACHE_MB),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.execution.arrow.maxRecordsPerBatch": str(settings.arrow_batch_rows),
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": str(settings.ui).lower(),
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
        # Restart needs only the last committed batch; state is changelogged per batch.
        "spark.sql.streaming.minBatchesToRetain": "10",
        "spark.python.worker.reuse": "true",
        # Spark pools Python workers per environment, and its mapInArrow runner adds this variable where the
        # transformWithStateInPandas runner does not: two daemons and two idle pools. Set for both: one pool.
        "spark.executorEnv.SPARK_SIMPLIFIED_TRACEBACK": "1",
        # Python workers connect back to the JVM (state server, foreachBatch) within this time;
        # the 15 s default fails queries when a busy 2-core machine starts a worker slowly.
        "spark.python.authenticate.socketTimeout": "90s",
    }
    for key, value in pairs.items():
        if not submitted.contains(key):
            conf.set(key, value)
    spark = SparkSession.builder.config(conf=conf).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    log.info("Spark %s session ready (master %s)", spark.version, spark.sparkContext.master)
    return spark


def _redirect_jvm_stderr(spark: SparkSession, path: Path) -> None:
    """Send the driver JVM's stderr to ``path``: Spark copies its Python workers' output there.

    Log4j's console appender keeps the stream it opened at startup, so errors still reach the console.
    """
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    stream = jvm.java.io.PrintStream(jvm.java.io.FileOutputStream(str(path), True), True)
    jvm.java.lang.System.setErr(stream)

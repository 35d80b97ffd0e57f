"""The session factory (``streaming.session``): its measured defaults reach the session; a second build is free."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from streaming.session import ROCKSDB_BLOCK_CACHE_MB, ROCKSDB_PROVIDER, SparkSettings

pytestmark = pytest.mark.spark

_STORE = "spark.sql.streaming.stateStore"


def test_state_lives_in_rocksdb_changelogged_without_counting_rows_with_a_64_mb_block_cache(spark: Any) -> None:
    assert spark.conf.get(f"{_STORE}.providerClass") == ROCKSDB_PROVIDER
    assert spark.conf.get(f"{_STORE}.rocksdb.changelogCheckpointing.enabled") == "true"
    # docs/benchmarks.md: counting rows costs a lookup per state write; without it the 1M-connection run is faster.
    assert spark.conf.get(f"{_STORE}.rocksdb.trackTotalNumberOfRows") == "false"
    # docs/benchmarks.md: Spark's 8 MB block cache per store makes the 1M-connection closes read blocks again.
    assert spark.conf.get(f"{_STORE}.rocksdb.blockCacheSizeMB") == str(ROCKSDB_BLOCK_CACHE_MB) == "64"


def _worker_daemons(spark: Any) -> list[int]:
    """The Python worker daemons the driver JVM has started (its children running the daemon module)."""
    jvm_pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    daemons = []
    for entry in Path("/proc").iterdir():
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue  # not a process, or it ended while being read
        if parent == jvm_pid and SparkSettings.python_daemon in command:
            daemons.append(int(entry.name))
    return daemons


def test_arrow_and_state_stages_share_one_python_worker_pool(spark: Any) -> None:
    # Spark keys its worker pools by environment; the mapInArrow runner and the transformWithStateInPandas
    # runner must see the same one, or each keeps a daemon and idle workers (docs/benchmarks.md, memory).
    import pandas as pd
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    class Count(StatefulProcessor):
        def init(self, handle: Any) -> None:
            self.seen = handle.getValueState("seen", "n long")

        def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Any:  # noqa: N802, N803
            n = sum(len(frame) for frame in rows)
            yield pd.DataFrame({"k": [key[0]], "n": [n]})

        def close(self) -> None:
            pass

    frame = spark.range(40).selectExpr("CAST(id % 4 AS STRING) AS k")
    routed = frame.mapInArrow(lambda batches: batches, frame.schema)
    counted = routed.groupBy("k").transformWithStateInPandas(Count(), "k string, n long", "Append", "None")
    assert sorted(r.n for r in counted.collect()) == [10, 10, 10, 10]
    assert len(_worker_daemons(spark)) == 1


def _worker_path(batches: Any) -> Any:
    """A mapInArrow body reporting the worker's import path archives and its ``invalidate_caches`` cost."""
    import importlib
    import sys
    import time
    import zipimport

    import pyarrow as pa

    for _ in batches:
        pass
    started = time.perf_counter()
    importlib.invalidate_caches()  # what Spark's worker does at the start of every task
    seconds = time.perf_counter() - started
    archives = sorted({f.archive for f in sys.path_importer_cache.values() if isinstance(f, zipimport.zipimporter)})
    yield pa.RecordBatch.from_pylist([{"archives": "\n".join(archives), "seconds": seconds}])


def test_workers_do_not_import_from_sparks_jar_or_the_installed_pysparks_zip(spark: Any) -> None:
    # Spark puts its core jar and pyspark.zip on the workers' path; every task re-read their directories
    # (0.10-0.28 s per task, docs/benchmarks.md). The project's daemon takes them off: pyspark is pip-installed.
    rows = spark.range(2).repartition(2).mapInArrow(_worker_path, "archives string, seconds double").collect()
    assert len(rows) == 2
    for row in rows:
        archives = row.archives.split("\n") if row.archives else []
        assert not [a for a in archives if a.endswith((".jar", "pyspark.zip"))], archives


def test_local_checkpoints_are_written_through_the_file_system_api(spark: Any, tmp_path: Path) -> None:
    # FileContext's renames spawn ``readlink`` per checkpoint file without Hadoop's native library.
    jvm = spark.sparkContext._jvm
    conf = spark._jsparkSession.sessionState().newHadoopConf()
    path = jvm.org.apache.hadoop.fs.Path
    files = jvm.org.apache.spark.sql.execution.streaming.CheckpointFileManager.create(path(str(tmp_path)), conf)
    assert files.getClass().getSimpleName() == "FileSystemBasedCheckpointFileManager"
    files.mkdirs(path(str(tmp_path / "batch")))
    for attempt in (b"first attempt", b"second attempt"):  # a batch run again writes its state files again
        out = files.createAtomic(path(str(tmp_path / "batch" / "0")), True)
        out.write(attempt)
        out.close()
    # Atomic: a whole file of one attempt (Hadoop's local rename keeps the first).
    assert (tmp_path / "batch" / "0").read_bytes() in (b"first attempt", b"second attempt")


def _round_trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every py4j command the driver sends from now on (the test's view of what a call costs)."""
    from py4j.clientserver import ClientServerConnection

    sent: list[str] = []
    original = ClientServerConnection.send_command

    def counted(self: Any, command: str) -> Any:
        sent.append(command)
        return original(self, command)

    monkeypatch.setattr(ClientServerConnection, "send_command", counted)
    return sent


def test_a_second_build_with_the_same_settings_returns_the_session_without_a_round_trip(
        spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every job start builds the session: setting each option again cost 38 ms (docs/benchmarks.md).
    from streaming.session import build_spark_session

    settings = SparkSettings(app_name="configwatch-tests", driver_memory="3g")
    assert build_spark_session(settings) is spark
    sent = _round_trips(monkeypatch)
    assert build_spark_session(settings) is spark
    assert sent == []
    other = SparkSettings(app_name="configwatch-tests", driver_memory="3g", arrow_batch_rows=5_000)
    try:
        assert build_spark_session(other) is spark
        assert sent  # other settings: the session is configured again
    finally:
        build_spark_session(settings)


def test_a_new_log_file_receives_the_driver_jvms_stderr(spark: Any, tmp_path: Path) -> None:
    from streaming.session import build_spark_session

    system = spark.sparkContext._jvm.java.lang.System
    for name in ("first", "second"):
        log_file = tmp_path / name / "spark.log"
        assert build_spark_session(SparkSettings(app_name="configwatch-tests", driver_memory="3g",
                                                 log_file=log_file)) is spark
        system.err.println(f"to the {name} log")
        system.err.flush()
        assert log_file.read_text().splitlines() == [f"to the {name} log"]

"""The job's route stage and detection step in the JVM (``io.configwatch.detect.DetectionPipeline``), from PySpark.

A new checkpoint (``StateLayout.detection_on_jvm``) runs the whole job without a Python worker,
its plan built by one call (:func:`plan`, ``io.configwatch.job.JobPlan``): the route stage
(:func:`route`) decodes every raw record once, checks it against the GX suite, quarantines what
fails, detects on pushes and routes every row to its state key; after the one shuffle, one keyed
step runs the detection step (fleet and group state, finished records passed on) for detection
keys and the JVM connection step (``streaming.jvm_gauges``) for connection keys, and the totals
step passes the detection step's records on beside the gauges. The Java classes are twins of
the Python functions (``udfs.decode``, ``udfs.expectations``, ``udfs.rules``,
``udfs.pipeline.route``, ``udfs.steps.final_step``), held to the same records by
``tests/test_detect_jvm*.py`` and ``tests/test_job_jvm_twin.py``; the spec
they act on is built from the Python homes (``streaming.jvm_spec``). :class:`RouteStats` is
the route stage's accumulator, read as the Python decode's statistics are.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from configwatch.errors import SetupError
from configwatch.secrets import SecretStr
from streaming.jvm_gauges import record_exprs
from streaming.jvm_gauges import spec as gauge_spec
from streaming.jvm_spec import spec_json
from udfs.gauges import GaugeConfig

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["RouteStats", "decode", "plan", "route"]

_PIPELINE = "io.configwatch.detect.DetectionPipeline"
_PLAN = "io.configwatch.job.JobPlan"


def _operators(spark: SparkSession, name: str = _PIPELINE) -> Any:
    from py4j.java_gateway import JavaClass

    jvm: Any = spark.sparkContext._jvm
    for part in name.split("."):
        jvm = getattr(jvm, part)
    if not isinstance(jvm, JavaClass):
        raise SetupError(f"{name} is not on the Spark classpath: add the job's jar "
                         "(python -m configwatch.jars prints it) to spark.jars or spark-submit --jars")
    return jvm


def _key(key: SecretStr) -> bytearray:
    return bytearray(key.get_secret_value().encode())


class RouteStats:
    """The route stage's counts (a JVM accumulator), as ``udfs.decode.DecodeStats`` dicts."""

    def __init__(self, spark: SparkSession) -> None:
        jvm: Any = spark.sparkContext._jvm
        self.java = jvm.io.configwatch.detect.RouteStats()
        spark.sparkContext._jsc.sc().register(self.java, "configwatch-route")

    @property
    def value(self) -> dict[str, Any]:
        return self.as_stats({str(k): int(v) for k, v in dict(self.java.value()).items()})

    @staticmethod
    def as_stats(counts: Mapping[str, int]) -> dict[str, Any]:
        """The accumulator's counts (or a difference of two) as a ``DecodeStats`` dict."""
        return {
            "records": counts.get("records", 0), "valid": counts.get("valid", 0),
            "invalid": counts.get("invalid", 0), "expectation_failed": counts.get("expectation_failed", 0),
            "fast_rows": counts.get("records", 0), "decode_seconds": counts.get("decode_nanos", 0) / 1e9,
            "gx_seconds": counts.get("gx_nanos", 0) / 1e9, "gx_batches": 0, "gx_errors": 0,
            "failed_by_expectation": {k.removeprefix("failed:"): n for k, n in counts.items()
                                      if k.startswith("failed:") and n},
        }


def _route_input(raw: DataFrame) -> DataFrame:
    """``raw`` as the route stage reads it: replay files' text as the bytes read (a Java string would repair
    invalid UTF-8)."""
    from pyspark.sql import functions as F

    if "file" in raw.columns:
        return raw.select(F.col("value").cast("binary").alias("value"), "file")
    return raw


def _route_options(gauges: GaugeConfig, kinds: Collection[str], validate: bool, key_partitions: int) -> str:
    return json.dumps({"validate": validate, "lease": gauges.ttl_ms is not None, "buckets": gauges.buckets,
                       "kinds": list(kinds), "key_partitions": key_partitions})


def plan(raw: DataFrame, key: SecretStr, gauges: GaugeConfig, kinds: Collection[str], *, validate: bool,
         stats: RouteStats | None = None, key_partitions: int = 0, one_step: bool = True) -> DataFrame:
    """The job's output records (``udfs.pipeline.FINAL_SCHEMA``) of ``raw`` from ``streaming.sources``, in one call.

    The route stage, one shuffle by ``state_key``, the detection step and the gauge steps
    (``streaming.jvm_gauges``), their records in contract JSON. ``key_partitions``: as :func:`route`'s.
    ``one_step`` (``udfs.pipeline.StateLayout.one_keyed_step``): the detection and connection steps as one keyed
    step whose records the totals step passes on; else two keyed steps over the same shuffle, their outputs united.
    """
    from pyspark.sql import DataFrame

    spark = raw.sparkSession
    jdf = _operators(spark, _PLAN).plan(_route_input(raw)._jdf, spec_json(), _key(key),
                                        _route_options(gauges, kinds, validate, key_partitions),
                                        None if stats is None else stats.java, json.dumps(gauge_spec(gauges)),
                                        json.dumps(record_exprs(passed=one_step)), one_step)
    return DataFrame(jdf, spark)


def route(raw: DataFrame, key: SecretStr, gauges: GaugeConfig, kinds: Collection[str], *, validate: bool,
          stats: RouteStats | None = None, key_partitions: int = 0) -> DataFrame:
    """Routed rows (``udfs.pipeline.ROUTED_SCHEMA``) of ``raw`` from ``streaming.sources``, one JVM pass.

    ``key_partitions``: ``udfs.pipeline.StateLayout.key_partitions``, the partitions the bucket keys spread over.
    """
    from pyspark.sql import DataFrame

    spark = raw.sparkSession
    jdf = _operators(spark).route(_route_input(raw)._jdf, spec_json(), _key(key),
                                  _route_options(gauges, kinds, validate, key_partitions),
                                  None if stats is None else stats.java)
    return DataFrame(jdf, spark)


def decode(raw: DataFrame, key: SecretStr, *, validate: bool = True) -> DataFrame:
    """Kafka records decoded as ``streaming.decode.decode`` gives them, by the route stage's JVM decoder."""
    from pyspark.sql import DataFrame
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

    from udfs.decode import output_schema

    spark = raw.sparkSession
    out = from_arrow_schema(output_schema(to_arrow_schema(raw.schema)))
    return DataFrame(_operators(spark).decode(raw._jdf, spec_json(), _key(key), out.json(), validate), spark)

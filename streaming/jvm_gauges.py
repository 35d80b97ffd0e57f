"""The gauge steps on the JVM (``streaming/jvm``, ``io.configwatch.gauges.GaugeSteps``), called from PySpark.

The route stage's rows, shuffled by ``state_key``, go through two keyed ``transformWithState``
operators written in Java: the connection step (per ``conn|<bucket>``: one entry per
connection, the transition of ``udfs.gauges.step_bucket``) and the totals step (per name and
version: counts, client instances, request-version usage, as ``udfs.gauges.apply_deltas`` and
``udfs.steps.second_step``). Their state lives in the query's RocksDB store and is read in
process: no round trip to a Python worker per connection, which is what the Python keyed steps
cost (docs/benchmarks.md). The row schemas of ``udfs.flow``, the contract's names, the state
keys' prefix and usage pair separator, and the knobs go over as one JSON spec (:func:`spec`)
built here from their Python homes; the records' contract JSON is made by SQL expressions built
here from their dataclasses' fields (:func:`record_exprs`). Still spelled in Java: the transition
itself, the names of the columns it looks up in those schemas, and its state variables' names and
shapes (twins of ``udfs.steps.STATE_SCHEMAS``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pyspark.sql.pandas.types import from_arrow_schema

from configwatch.contract import CONNECTION_CLOSED, CONNECTION_OPENED, GAUGES, USAGE, software_key
from configwatch.errors import SetupError
from configwatch.records import VersionUsage
from udfs.flow import (
    DELTA_SCHEMA,
    GAUGE_COLUMN,
    KEYED_SCHEMA,
    PASSED_FIELDS,
    PASSED_RECORD_SCHEMA,
    RECORD_SCHEMA,
    USAGE_COLUMN,
)
from udfs.gauges import SWEEP_MIN_MARKERS, USAGE_PAIR_SEP, GaugeConfig
from udfs.pipeline import CONN_PREFIX

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["gauge_records", "record_exprs", "spec"]

_OPERATORS = "io.configwatch.gauges.GaugeSteps"


def spec(config: GaugeConfig) -> dict[str, Any]:
    """What the JVM steps are told: schemas, names and knobs (nothing secret: no key, no value)."""
    return {
        "delta_schema": from_arrow_schema(DELTA_SCHEMA).json(),
        "record_schema": from_arrow_schema(RECORD_SCHEMA).json(),
        "keyed_schema": from_arrow_schema(KEYED_SCHEMA).json(),
        "passed_record_schema": from_arrow_schema(PASSED_RECORD_SCHEMA).json(),
        "conn_prefix": CONN_PREFIX,
        "opened": CONNECTION_OPENED,
        "closed": CONNECTION_CLOSED,
        "gauges_kind": GAUGES,
        "usage_kind": USAGE,
        "ttl_ms": config.ttl_ms,
        "closed_retention_ms": config.closed_retention_ms,
        "usage_ids_max": VersionUsage.MAX_INSTANCE_IDS,
        "usage_pair_sep": USAGE_PAIR_SEP,
        "sweep_min": SWEEP_MIN_MARKERS,
    }


def _sql_text(text: str) -> str:
    """``text`` as a Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _software_key(name: str, version: str) -> str:
    """``configwatch.contract.software_key`` as SQL over two columns: the text it puts around a name and a version."""
    a, b = "\0name\0", "\0version\0"
    prefix, rest = software_key(a, b).split(a)
    middle, suffix = rest.split(b)
    return f"concat({_sql_text(prefix)}, {name}, {_sql_text(middle)}, {version}, {_sql_text(suffix)})"


def record_exprs(*, passed: bool = False) -> list[str]:
    """The ``selectExpr`` that makes record rows (``udfs.flow.RECORD_SCHEMA``) output rows: kind, key, contract JSON,
    tombstone.

    ``passed``: the rows are ``PASSED_RECORD_SCHEMA``'s, and a passed record keeps its key and JSON (its kind is
    never a gauge's, so it is no tombstone). The JSON object has the record's fields in the record's order
    (``Gauge``, ``VersionUsage.to_dict``). SQL texts, not column objects: those would cost the query's start a py4j
    round trip per field.
    """
    identity = ("client_software_name", "client_software_version")

    def document(column: str) -> str:
        fields = [f"{_sql_text(n)}, `{n}`" for n in identity]
        fields += [f"{_sql_text(f.name)}, `{column}`.`{f.name}`" for f in RECORD_SCHEMA.field(column).type]
        return f"to_json(named_struct({', '.join(fields)}))"

    is_gauge = f"(`kind` = {_sql_text(GAUGES)})"
    key = _software_key(*(f"`{n}`" for n in identity))
    value = f"WHEN {is_gauge} THEN {document(GAUGE_COLUMN)} ELSE {document(USAGE_COLUMN)}"
    if passed:
        _, passed_key, passed_value = (f"`{f.name}`" for f in PASSED_FIELDS)
        key = f"CASE WHEN {passed_value} IS NOT NULL THEN {passed_key} ELSE {key} END"
        value = f"WHEN {passed_value} IS NOT NULL THEN {passed_value} {value}"
    return ["`kind`", f"{key} AS `key`", f"CASE {value} END AS `value`",
            f"({is_gauge} AND `{GAUGE_COLUMN}`.`removed`) AS `tombstone`"]


def gauge_records(routed: DataFrame, config: GaugeConfig) -> DataFrame:
    """The gauge and usage records (``udfs.pipeline.FINAL_SCHEMA``) of ``routed``'s ``conn|`` keys.

    ``routed``: the route stage's rows, already partitioned by ``state_key`` as the query's stateful steps need.
    """
    from py4j.java_gateway import JavaClass
    from pyspark.sql import DataFrame

    spark = routed.sparkSession
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    operators = jvm
    for part in _OPERATORS.split("."):
        operators = getattr(operators, part)
    if not isinstance(operators, JavaClass):
        raise SetupError(f"{_OPERATORS} is not on the Spark classpath: add the job's jar "
                         "(python -m configwatch.jars prints it) to spark.jars or spark-submit --jars")
    return DataFrame(operators.apply(routed._jdf, json.dumps(spec(config))), spark).selectExpr(*record_exprs())

"""Detection in Spark: the job's ``alerts`` stream (the plug-in point of ``streaming.job.outputs``).

``findings(valid)`` takes the decoded valid stream and returns contract finding
rows (``udfs.rules.findings.FINDING_SCHEMA``, evidence as JSON text) in one
branch, so the source is read and decoded once:

- ``mapInArrow`` over the ``config_push`` rows runs ``udfs.rules.stateful.prepare``
  on each Arrow batch: the stateless rules' findings (as ``pass`` rows) and the
  stateful rules' observations (fleet outliers, consumer-group drift);
- ``groupBy(state_key).transformWithStateInPandas`` calls ``udfs.rules.stateful.step``
  with the key's state held as JSON text in the one row of a ListState (RocksDB
  state store, checkpointed with the query; it holds fingerprints and numbers,
  never values). Not a ValueState: Spark 4.0.0's state server reads a ValueState
  update with a single socket read, so a large value (a consumer group of a few
  hundred members) arrives truncated and fails the query with ``invalid pickle
  opcode``; ListState rows travel as an Arrow stream, read in full.
  ``applyInPandasWithState`` was the first choice; PySpark 4.0.0's serializer for it
  fails on this pyarrow (``RecordBatch.slice`` given a float offset when a batch
  holds several groups), so the job uses the newer API.

The fingerprint key comes from ``Settings`` (the same key the ingest edge uses),
captured in the picklable UDF objects. With ``--webhook-url`` the job's alerts sink
also feeds ``sinks.webhook`` (see ``streaming.job.runner``), so detection runs once.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa

from configwatch.contract import CONFIG_PUSH
from configwatch.secrets import SecretStr
from configwatch.settings import Settings
from udfs.rules.stateful import OBSERVATION_SCHEMA, prepare, step

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["FINDINGS_DDL", "PrepareUdf", "findings"]

_STATE_DDL = "state string"


def _spark_ddl(schema: pa.Schema) -> str:
    from pyspark.sql.pandas.types import from_arrow_schema

    return str(from_arrow_schema(schema).simpleString())[len("struct<"):-1]


FINDINGS_DDL = ("schema_version bigint, alert_id string, kind string, rule string, severity string, "
                "keys array<string>, client_instance_id string, client_software_name string, "
                "client_software_version string, client_id string, principal string, client_address string, "
                "message string, evidence string, event_timestamp_ms bigint, detected_at_ms bigint")


def _now_ms() -> int:
    return int(time.time() * 1000)


class PrepareUdf:
    """``mapInArrow`` body: stateless findings and stateful observations of each batch of pushes."""

    def __init__(self, key: SecretStr) -> None:
        self.key = key

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            yield from prepare(pa.Table.from_batches([batch]), self.key, _now_ms()).to_batches()


def _processor_class() -> type:
    """The StatefulProcessor subclass (built lazily: importing pyspark's streaming module needs Spark)."""
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

    class DetectionProcessor(StatefulProcessor):
        """One state key: its observations against its state (JSON text, the one row of a ListState)."""

        def __init__(self, key: SecretStr) -> None:
            self._key = key

        def init(self, handle: StatefulProcessorHandle) -> None:
            self._state = handle.getListState("state", _STATE_DDL)

        def handleInputRows(  # noqa: N802 - PySpark's name
                self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any,  # noqa: N803
        ) -> Iterator[pd.DataFrame]:
            observations = pd.concat(list(rows), ignore_index=True)
            stored = list(self._state.get())  # one row, or none before the key's first batch
            previous = str(stored[0][0]) if stored else None
            out, new_state = step(str(key[0]), observations, previous, self._key, _now_ms())
            if new_state is not None:
                self._state.put([(new_state,)])
            if out.num_rows:
                yield out.to_pandas()

        def close(self) -> None:
            pass

    return DetectionProcessor


def findings(valid: DataFrame, settings: Settings | None = None) -> DataFrame:
    """The contract findings of the decoded valid stream (stateless and stateful rules)."""
    from pyspark.sql import functions as F

    key = (settings or Settings.load()).fingerprint_key
    pushes = valid.where(F.col("event") == CONFIG_PUSH)
    rows = pushes.mapInArrow(PrepareUdf(key), _spark_ddl(OBSERVATION_SCHEMA))
    return rows.groupBy("state_key").transformWithStateInPandas(_processor_class()(key), FINDINGS_DDL, "Append",
                                                                "None")


"""Apply the Arrow decode UDF (``udfs.decode``) to a DataFrame of raw records."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from udfs.decode import decode_batches, output_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["decode"]


def decode(raw: DataFrame) -> DataFrame:
    """``raw`` has a binary/string ``value`` plus source columns; returns typed rows.

    Valid rows have ``reason`` null; invalid rows carry the quarantine reason.
    """
    arrow_in = to_arrow_schema(raw.schema)
    spark_out = from_arrow_schema(output_schema(arrow_in))
    return raw.mapInArrow(decode_batches, spark_out)

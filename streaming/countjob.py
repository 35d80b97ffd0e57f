"""The first job: read, decode, count valid and invalid records per batch."""

from __future__ import annotations

import logging

from configwatch.settings import Settings
from streaming.decode import decode
from streaming.session import SparkSettings, build_spark_session
from streaming.sources import kafka_source

__all__ = ["run_count_job"]

log = logging.getLogger(__name__)


def run_count_job(settings: Settings, bootstrap: str, *, available_now: bool) -> dict[str, int]:
    """Run until stopped (or until caught up with ``available_now``); return total counts."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    spark = build_spark_session(SparkSettings(master=settings.spark_master,
                                              driver_memory=settings.driver_memory))
    totals = {"records": 0, "valid": 0, "invalid": 0}

    def report(batch: DataFrame, batch_id: int) -> None:
        row = batch.agg(
            F.count(F.lit(1)).alias("records"),
            F.count(F.when(F.col("reason").isNull(), 1)).alias("valid"),
        ).first()
        assert row is not None  # an aggregate always has one row
        records, valid = int(row["records"]), int(row["valid"])
        totals["records"] += records
        totals["valid"] += valid
        totals["invalid"] += records - valid
        print(f"batch {batch_id}: {records} records, {valid} decoded, {records - valid} invalid "
              f"(total {totals['valid']} decoded)", flush=True)

    decoded = decode(kafka_source(spark, bootstrap, settings.input_topic))
    writer = (
        decoded.writeStream.foreachBatch(report)
        .option("checkpointLocation", str(settings.checkpoint_dir / "decode-count"))
        .queryName("decode-count")
    )
    writer = writer.trigger(availableNow=True) if available_now else writer.trigger(processingTime="2 seconds")
    query = writer.start()
    try:
        query.awaitTermination()
    except KeyboardInterrupt:
        log.info("stopping")
        query.stop()
    return totals

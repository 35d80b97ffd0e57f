"""End to end on the real parts: kafka-python -> Kafka -> Spark Kafka source -> Arrow decode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from configwatch.records import Event
from configwatch.samples import sample_events
from streaming.decode import decode
from streaming.sources import kafka_source
from tests.kafka_helpers import produce

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def test_contract_records_round_trip_through_kafka_and_spark(
    kafka_bootstrap: str, spark: Any, topic_name: Any, tmp_path: Path
) -> None:
    topic = topic_name("smoke")
    events = sample_events(60)
    produce(kafka_bootstrap, topic, [(e.kafka_key(), e.to_json().encode()) for e in events])

    decoded = decode(kafka_source(spark, kafka_bootstrap, topic))
    query = (
        decoded.writeStream.format("memory").queryName("smoke_decoded")
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(availableNow=True).start()
    )
    query.awaitTermination(300)
    assert query.exception() is None, query.exception()
    rows = spark.sql("select * from smoke_decoded").collect()
    spark.catalog.dropTempView("smoke_decoded")

    assert len(rows) == len(events)
    assert all(r["reason"] is None for r in rows)
    by_key = {(r["event"], r["connection_id"]): r for r in rows}
    for event in events:
        row = by_key[(event.event, event.connection_id)]
        assert row["topic"] == topic
        assert row["schema_version"] == 1
        assert row["timestamp_ms"] == event.timestamp_ms
        for name in ("broker_id", "client_instance_id", "client_software_name",
                     "client_software_version", "client_id", "principal", "listener",
                     "security_protocol", "client_address", "request_size_bytes"):
            assert row[name] == getattr(event, name), name
        if event.configs is None:
            assert row["configs"] is None
        else:
            got = [(c["key"], c["value"], c["type"], c["is_default"]) for c in row["configs"]]
            assert got == [(c.key, c.value, c.type, c.is_default) for c in event.configs]
        # The round trip through the contract's dataclass gives the same event back.
        assert Event.from_json(event.to_json()) == event

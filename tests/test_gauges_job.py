"""Per-version gauges through the real job: Kafka in and out (tombstones on a compacted topic),
replay files in and out (``removed: true``), and the pieces the job plugs in.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from configwatch.errors import UsageError
from configwatch.settings import Settings
from sinks.kafka import ensure_topic
from streaming.job import JobOptions, StreamingJob
from streaming.job.runner import QUERY_NAME
from streaming.pipeline import gauge_config
from tests.kafka_helpers import produce, read_all
from tests.test_sinks import _lines
from udfs.gauges import GaugeConfig
from udfs.pipeline import gauge_value

JAVA, UNKNOWN, LIB, JAVA_UNKNOWN = "java/3.9.1", "unknown/unknown", "librdkafka/2.6.1", "java/unknown"
T0 = 1_790_000_000_000  # event times below are offsets from here


def _event(event: str, ts: int, conn: str | None, name: str | None = None, version: str | None = None,
           inst: str | None = None, **extra: Any) -> bytes:
    d: dict[str, Any] = {"schema_version": 1, "event": f"connection_{event}", "timestamp_ms": T0 + ts}
    for k, v in (("connection_id", conn), ("client_instance_id", inst), ("client_software_name", name),
                 ("client_software_version", version)):
        if v is not None:
            d[k] = v
    return json.dumps({**d, **extra}).encode()


# Three phases of input, each one micro-batch; valid and invalid records mixed.
PHASES: list[list[bytes]] = [
    [
        _event("opened", 1000, "c1", "java", "3.9.1", "i1"),
        _event("opened", 1001, "c2", "java", "3.9.1", "i1"),   # same client instance, second connection
        _event("opened", 1002, "c3"),                          # no name/version: unknown/unknown
        _event("opened", 1000, "c1", "java", "3.9.1", "i1"),   # redelivered open: nothing
        _event("closed", 1003, "c9"),                          # close of an unknown connection: nothing
        _event("opened", 1004, "c5", "librdkafka", "2.6.1", "i5"),
        _event("opened", 1005, "c5", "librdkafka", "2.7.0", "i5"),  # repeated open, other identity: nothing
        _event("opened", 1006, "c6", "java", ""),              # empty version: java/unknown
        b"not json at all",                                    # invalid: never touches state
        _event("opened", 1007, "c7", "bad name!", "1.0"),      # invalid: breaks the KIP-511 pattern
        _event("closed", 1008, None),                          # invalid: a connection event without connection_id
        _event("opened", 1009, "c8", "java", "3.9.1", schema_version=2),  # invalid: schema version
    ],
    [
        _event("closed", 2000, "c1"),
        _event("closed", 2001, "c2"),
        _event("closed", 2002, "c3"),
        _event("closed", 2000, "c1"),                          # redelivered close: nothing
        _event("opened", 1000, "c1", "java", "3.9.1", "i1"),   # redelivered open after its close: nothing
        _event("closed", 2003, "c5", "librdkafka", "x y"),     # invalid close: c5 stays open
    ],
    [
        _event("closed", 3000, "c5"),
        _event("closed", 3001, "c6"),
    ],
]
EXPECTED: list[dict[str, tuple[int, int, bool]]] = [
    {JAVA: (2, 1, False), UNKNOWN: (1, 0, False), LIB: (1, 1, False), JAVA_UNKNOWN: (1, 0, False)},
    {JAVA: (0, 0, True), UNKNOWN: (0, 0, True)},
    {LIB: (0, 0, True), JAVA_UNKNOWN: (0, 0, True)},
]


def _key(record: bytes) -> bytes:
    obj = json.loads(record) if record.startswith(b"{") else {}
    return str(obj.get("client_instance_id") or obj.get("connection_id") or "x").encode()


def _run(settings: Settings, bootstrap: str | None) -> list[str]:
    lines: list[str] = []
    job = StreamingJob(settings, JobOptions.from_settings(settings), bootstrap, out=lines.append)
    job.start()
    job.wait()
    return lines


# -- the pieces, without Spark -------------------------------------------------------------------------

def test_a_gauge_value_is_the_contract_record() -> None:
    row = {"key": JAVA, "client_software_name": "java", "client_software_version": "3.9.1", "connections": 2,
           "client_instances": 1, "updated_at_ms": 5, "removed": False, "expired": 0,
           "connections_by_security": {"SSL": 2}}
    assert json.loads(gauge_value(row)) == {"client_software_name": "java", "client_software_version": "3.9.1",
                                            "connections": 2, "client_instances": 1, "updated_at_ms": 5,
                                            "removed": False, "connections_by_security": {"SSL": 2}}
    gone = json.loads(gauge_value({**row, "connections": 0, "client_instances": 0, "removed": True}))
    assert gone["removed"] is True and gone["connections"] == 0


def test_connection_ttl_setting_becomes_the_lease(tmp_path: Path) -> None:
    base = Settings(checkpoint_dir=tmp_path)
    assert gauge_config(base) == GaugeConfig(fingerprint_key=base.fingerprint_key)
    assert gauge_config(Settings(checkpoint_dir=tmp_path, connection_ttl=1.5)).ttl_ms == 1500
    assert Settings.load(environ={"CONFIGWATCH_CONNECTION_TTL": "600"}).connection_ttl == 600.0
    with pytest.raises(UsageError, match="--connection-ttl: must be a positive"):
        Settings(checkpoint_dir=tmp_path, connection_ttl=0)
    with pytest.raises(UsageError, match="CONFIGWATCH_CONNECTION_TTL: must be a positive number, got -5"):
        Settings.load(environ={"CONFIGWATCH_CONNECTION_TTL": "-5"})
    lease_once = Settings.load(environ={"CONFIGWATCH_CONNECTION_TTL": "60", "CONFIGWATCH_TRIGGER": "available-now"})
    with pytest.raises(UsageError, match="needs --trigger continuous"):  # the job's question, not every command's
        JobOptions.from_settings(lease_once)


# -- the real job --------------------------------------------------------------------------------------

@pytest.mark.kafka
@pytest.mark.spark
def test_exact_gauges_on_the_broker_with_tombstones_on_a_compacted_topic(
        kafka_bootstrap: str, spark: Any, topic_name: Any, tmp_path: Path) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType

    topic, gauges_topic = topic_name("conn"), topic_name("gauges")
    ensure_topic(kafka_bootstrap, topic, partitions=2)
    settings = Settings(bootstrap_servers=kafka_bootstrap, checkpoint_dir=tmp_path / "ckpt", input_topic=topic,
                        gauges_topic=gauges_topic, sink="kafka", trigger="available-now", outputs="gauges",
                        expectations=False)
    seen: set[tuple[int, int]] = set()
    for phase, expected in zip(PHASES, EXPECTED, strict=True):
        produce(kafka_bootstrap, topic, [(_key(v), v) for v in phase])
        lines = _run(settings, kafka_bootstrap)
        assert any(line.startswith("batch ") for line in lines), lines
        new = [r for r in read_all(kafka_bootstrap, gauges_topic) if (r[2], r[3]) not in seen]
        seen |= {(r[2], r[3]) for r in new}
        got: dict[str, tuple[int, int, bool]] = {}
        for key, value, _, _ in new:
            assert key is not None
            if value is None:  # tombstone: the key reached zero
                got[key.decode()] = (0, 0, True)
            else:
                g = json.loads(value)
                assert f"{g['client_software_name']}/{g['client_software_version']}" == key.decode()
                assert g["updated_at_ms"] > 0 and g["removed"] is False
                got[key.decode()] = (g["connections"], g["client_instances"], False)
        assert len(new) == len(expected), (new, lines)
        assert got == expected

    # Only contract keys <name>/<version> on the topic: no fleet-total record.
    keys = {k.decode() for k, _, _, _ in read_all(kafka_bootstrap, gauges_topic) if k is not None}
    assert keys == {JAVA, UNKNOWN, LIB, JAVA_UNKNOWN}
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, gauges_topic)])
    finally:
        admin.close()
    (by_name,) = described.values()
    assert by_name[gauges_topic]["cleanup.policy"]["value"] == "compact"


@pytest.mark.spark
def test_exact_gauges_in_replay_mode_with_removed_records(spark: Any, tmp_path: Path) -> None:
    replay = tmp_path / "replay"
    replay.mkdir()
    for i, phase in enumerate(PHASES):
        path = replay / f"phase-{i}.jsonl"
        path.write_bytes(b"\n".join(phase) + b"\n")
        os.utime(path, (T0 / 1000 + i, T0 / 1000 + i))  # the file source takes files oldest first
    out = tmp_path / "out"
    settings = Settings(checkpoint_dir=tmp_path / "ckpt", source=f"files:{replay}", sink=f"files:{out}",
                        trigger="available-now", outputs="gauges", max_files_per_trigger=1,
                        expectations=False)
    lines = _run(settings, None)
    files = sorted((out / "gauges").glob("part-*.jsonl"))
    by_epoch: dict[int, dict[str, tuple[int, int, bool]]] = {}
    for path in files:
        epoch = int(path.name.split("-")[1])
        for line in path.read_text().splitlines():
            g = json.loads(line)
            key = f"{g['client_software_name']}/{g['client_software_version']}"
            by_epoch.setdefault(epoch, {})[key] = (g["connections"], g["client_instances"], g["removed"])
    assert [by_epoch[e] for e in sorted(by_epoch)] == EXPECTED, lines
    assert len(_lines(out / "gauges")) == sum(len(e) for e in EXPECTED)
    def state(name: str) -> Any:
        return spark.read.format("statestore").option("operatorId", 0).option("stateVarName", name).load(
            str(tmp_path / "ckpt" / QUERY_NAME))

    # The close markers are kept: in ``entries`` for stored connections, in ``recent`` for the others.
    assert state("entries").where("user_map_value.closed_ms IS NOT NULL").count() > 0
    assert state("recent").count() > 0

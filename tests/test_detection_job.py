"""Detection end to end on the real broker and real Spark.

One run of the job (every installed output, alerts also to a webhook on a loopback
HTTP server) over pushes that make every catalog rule fire and carry secrets in
20+ forms; then a restart from the checkpoints over redelivered input, with the
webhook down.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from configwatch.records import Finding
from configwatch.secrets import SecretStr, fingerprint
from configwatch.settings import Settings
from sinks.kafka import ensure_topic
from streaming.job import QUERY_NAME, JobOptions, StreamingJob
from tests.detection_scenarios import (
    INVALID_SECRETS,
    SECRETS,
    planted_invalid_records,
    planted_pushes,
    posture_events,
    rule_pushes,
    to_event_json,
)
from tests.kafka_helpers import produce, read_all
from tests.rules_helpers import push
from tests.webhook_helpers import Receiver
from udfs.rules.catalog import CATALOG

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


@contextmanager
def captured_fds(path: Path) -> Iterator[None]:
    """Everything written to fd 1 and 2 (the JVM, Python workers, this process) goes to ``path``."""
    with path.open("wb") as sink:
        saved = [os.dup(1), os.dup(2)]
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@dataclass
class Run:
    base: Path
    settings: Settings
    records: list[tuple[bytes | None, bytes | None]]
    alerts: list[tuple[bytes | None, bytes | None, int, int]]
    quarantine: list[tuple[bytes | None, bytes | None, int, int]]
    gauges: list[tuple[bytes | None, bytes | None, int, int]]
    receiver: Receiver
    lines: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)

    def findings(self) -> list[dict[str, Any]]:
        return [json.loads(v) for _, v, _, _ in self.alerts if v is not None]


BIG_GROUP_MEMBERS = 2000  # its group state (~100 KB of JSON) is more than one socket read of Spark's state server


def _records() -> list[tuple[bytes | None, bytes | None]]:
    big_group = [push({"group.id": "big-group", "auto.offset.reset": "earliest"}) for _ in range(BIG_GROUP_MEMBERS)]
    pushes = [*rule_pushes(), *planted_pushes(), *big_group]
    out: list[tuple[bytes | None, bytes | None]] = [
        (str(p["client_instance_id"] or p["connection_id"]).encode(), to_event_json(p).encode()) for p in pushes]
    opened = {"schema_version": 1, "event": "connection_opened", "timestamp_ms": 1_790_000_000_000,
              "connection_id": "10.0.0.1:9092-10.0.0.9:50000-0", "client_software_name": "apache-kafka-java",
              "client_software_version": SECRETS["software_version"], "client_id": SECRETS["client_id"]}
    out.append((b"open", json.dumps(opened).encode()))
    out += [(e["connection_id"].encode(), json.dumps(e).encode()) for e in posture_events()]
    out += [(b"bad", raw) for raw in planted_invalid_records()]
    return out


def _run(settings: Settings, bootstrap: str, base: Path, name: str) -> tuple[list[str], list[str]]:
    lines: list[str] = []
    handler = _Collect()
    root = logging.getLogger()
    root.addHandler(handler)
    previous = root.level
    root.setLevel(logging.INFO)
    try:
        with captured_fds(base / f"{name}.out"):
            job = StreamingJob(settings, JobOptions.from_settings(settings), bootstrap, out=lines.append)
            job.start()
            job.wait()
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)
    return lines, handler.lines


@pytest.fixture(scope="module")
def first_run(kafka_bootstrap: str, spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    base = tmp_path_factory.mktemp("detection")
    tag = uuid.uuid4().hex[:8]
    topics = {k: f"detect-{k}-{tag}" for k in ("input", "alerts", "quarantine", "gauges")}
    ensure_topic(kafka_bootstrap, topics["input"], partitions=2)
    records = _records()
    produce(kafka_bootstrap, topics["input"], records)
    receiver = Receiver().start()
    settings = Settings(checkpoint_dir=base / "ckpt", input_topic=topics["input"], alerts_topic=topics["alerts"],
                        quarantine_topic=topics["quarantine"], gauges_topic=topics["gauges"],
                        trigger="available-now", webhook_url=SecretStr(receiver.url))
    lines, logs = _run(settings, kafka_bootstrap, base, "first")
    run = Run(base, settings, records, read_all(kafka_bootstrap, topics["alerts"]),
              read_all(kafka_bootstrap, topics["quarantine"]), read_all(kafka_bootstrap, topics["gauges"]),
              receiver, lines, logs)
    try:
        yield run
    finally:
        receiver.stop()


def test_every_rule_fires_end_to_end(first_run: Run) -> None:
    seen = {f["rule"] for f in first_run.findings()}
    assert seen == {r.id for r in CATALOG}, sorted({r.id for r in CATALOG} - seen)


def test_alerts_are_contract_findings_keyed_by_alert_id(first_run: Run) -> None:
    keys = []
    for key, value, _, _ in first_run.alerts:
        assert value is not None
        finding = Finding.from_json(value)
        assert key == finding.alert_id.encode() and finding.keys and finding.detected_at_ms > 0
        keys.append(finding.alert_id)
    assert len(keys) == len(set(keys)), "one record per finding"
    assert any(line.startswith("batch 0:") for line in first_run.lines), first_run.lines


def test_the_webhook_got_every_alert(first_run: Run) -> None:
    ids = {f["alert_id"] for f in first_run.findings()}
    assert first_run.receiver.fingerprints() == ids
    assert all(body["version"] == "4" for body in first_run.receiver.bodies)


def test_invalid_records_are_quarantined(first_run: Run) -> None:
    reasons = sorted(json.loads(v)["reason"] for _, v, _, _ in first_run.quarantine if v is not None)
    assert reasons == ["bad_software_name", "not_json", "wrong_type:configs"]


def _texts(run: Run) -> dict[str, str]:
    def topic(rows: list[tuple[bytes | None, bytes | None, int, int]]) -> str:
        return "".join(((k or b"") + b"\n" + (v or b"")).decode("utf-8", "replace") for k, v, _, _ in rows)

    checkpoints = {}
    for query in sorted(p for p in (run.base / "ckpt").iterdir() if p.is_dir()):
        files = sorted(p for p in query.rglob("*") if p.is_file())
        checkpoints[f"checkpoint {query.name}"] = "".join(p.read_bytes().decode("utf-8", "replace") for p in files)
    outs = "".join(p.read_text(errors="replace") for p in run.base.glob("*.out"))
    return {"alerts topic": topic(run.alerts), "quarantine topic": topic(run.quarantine),
            "gauges topic": topic(run.gauges), "webhook": json.dumps(run.receiver.bodies),
            "progress lines": "\n".join(run.lines), "logs": "\n".join(run.logs), "stdout/stderr": outs,
            **checkpoints}


def _state(spark: Any, run: Run, name: str) -> Any:
    """One state variable of the job's checkpoint (its one keyed step is operator 0)."""
    return spark.read.format("statestore").option("operatorId", 0).option("stateVarName", name).load(
        str(run.base / "ckpt" / QUERY_NAME))


def _key_and_text(row: Any) -> tuple[str, str]:
    """A detection state row's state key and JSON text (the one row of its ListState)."""
    d = row.asDict(recursive=True)
    return str(next(iter(d["key"].values()))), str(next(iter(d["list_element"].values())))


def test_a_big_consumer_groups_state_is_kept_whole(first_run: Run, spark: Any) -> None:
    # A big group's state (thousands of members) is kept and read back whole. (The Python step keeps it as a
    # one-row ListState: with a ValueState, Spark 4.0.0's state server truncated a large update.)
    state = [_key_and_text(r) for r in _state(spark, first_run, "detect").collect()]
    groups = [json.loads(text) for key, text in state if key.startswith("group|")]
    assert max(len(json.dumps(g)) for g in groups) > 64 * 1024
    assert max(len(g) for g in groups) == BIG_GROUP_MEMBERS  # member fingerprint -> its latest observation


def test_no_planted_secret_in_any_output_log_or_checkpoint(first_run: Run, spark: Any) -> None:
    planted = {**SECRETS, **INVALID_SECRETS}
    assert len(planted) >= 20
    # Every one is in the input (the redacted one only as the policy's fingerprint of it).
    missing = [n for n, v in planted.items() if not any(v.encode() in (r or b"") for _, r in first_run.records)]
    assert missing == ["redacted_key_value"]
    texts = _texts(first_run)
    assert f"checkpoint {QUERY_NAME}" in texts
    leaks = {(where, name) for where, text in texts.items() for name, value in planted.items() if value in text}
    assert leaks == set()
    # The state store files are compressed: read the detection state back through Spark.
    state = _state(spark, first_run, "detect")
    rows = json.dumps([r.asDict(recursive=True) for r in state.collect()], default=str)
    assert rows.count("fleet|") and rows.count("group|")
    assert [name for name, value in planted.items() if value in rows] == []
    # Where a planted secret had to be named, its fingerprint stands in.
    key = first_run.settings.fingerprint_key
    alerts_text = _texts(first_run)["alerts topic"]
    assert fingerprint(SECRETS["password_value"], key) in alerts_text
    assert f"redacted:{fingerprint(SECRETS['client_id'], key)}" in alerts_text
    # The gauges key on name/version: a secret version is counted under its fingerprint, in the topic and state.
    marker = f"redacted-{fingerprint(SECRETS['software_version'], key)}"
    assert marker in _texts(first_run)["gauges topic"]
    entries = [r.asDict(recursive=True) for r in _state(spark, first_run, "entries").collect()]
    versions = {r["user_map_value"]["version"] for r in entries}
    assert marker in versions and SECRETS["software_version"] not in versions
    for name in ("entries", "clock"):
        text = json.dumps([r.asDict(recursive=True) for r in _state(spark, first_run, name).collect()], default=str)
        assert [n for n, value in planted.items() if value in text] == []
    totals = json.dumps([r.asDict(recursive=True) for r in _state(spark, first_run, "instances").collect()]
                        + [r.asDict(recursive=True) for r in _state(spark, first_run, "totals").collect()],
                        default=str)
    assert marker in totals and [n for n, value in planted.items() if value in totals] == []


def test_restart_emits_no_new_alert_id_and_a_dead_webhook_stops_nothing(first_run: Run,
                                                                         kafka_bootstrap: str) -> None:
    first_ids = {f["alert_id"] for f in first_run.findings()}
    produce(kafka_bootstrap, first_run.settings.input_topic, first_run.records)  # the same records again
    dead = Receiver()
    dead_url = dead.url
    dead.server.server_close()  # nothing listens there now
    settings = Settings(**{**{f: getattr(first_run.settings, f) for f in first_run.settings.__dataclass_fields__},
                           "webhook_url": SecretStr(dead_url)})
    lines, _ = _run(settings, kafka_bootstrap, first_run.base, "restart")
    alerts = read_all(kafka_bootstrap, settings.alerts_topic)
    seen = {(p, o) for _, _, p, o in first_run.alerts}
    new = [json.loads(v) for _, v, p, o in alerts if v is not None and (p, o) not in seen]
    assert new, "the redelivered records were processed"
    assert {f["alert_id"] for f in new} <= first_ids
    assert any(line.startswith("batch ") for line in lines), lines

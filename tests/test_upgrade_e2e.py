"""Upgrade readiness end to end (issue 16): real clients -> gateway (proxy) -> topic -> job -> report.

Through the gateway in proxy mode, in front of the project's 4.x broker: a current
kafka-python producer, the Java client (``ProxyRoundTrip``: produce, consume,
commit) and kafka-python pinned to the 0.10.1 protocol, whose Produce v2 the broker
refuses. The streaming job folds the ``connection_closed`` events into its usage
topic; ``configwatch report upgrade --target 4.0 --json`` reads that topic and
says the old client is not ready (Produce v2 removed in 4.0) and the others are.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import kafka
import pytest
from kafka import KafkaProducer
from kafka.errors import KafkaError

from cli.main import main
from configwatch import jars
from configwatch.contract import CONNECTION_CLOSED, UNKNOWN_SOFTWARE
from configwatch.settings import Settings
from streaming.job import JobOptions, StreamingJob
from tests.conftest import eventually
from tests.gateway_helpers import create_topic, gateway, read_events

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

JAVA = "4.3.1"


def _clients_through_the_proxy(kafka_bootstrap: str, events: str, data: str, java_data: str, classes: Path) -> None:
    with gateway(kafka_bootstrap, events, upstream=kafka_bootstrap, gateway_broker_port_base=0) as gw:
        current = KafkaProducer(bootstrap_servers=gw.bootstrap, client_id="upgrade-current", acks="all")
        current.send(data, value=b"current").get(timeout=60)
        current.close()
        classpath = ":".join([str(classes), *(str(p) for p in jars.client_jars(JAVA))])
        proc = subprocess.run(["java", "-cp", classpath, "ProxyRoundTrip", gw.bootstrap, java_data,
                               f"{java_data}-g", "3"], capture_output=True, text=True, timeout=240, check=False)
        assert proc.returncode == 0, proc.stderr[-4000:]
        old = KafkaProducer(bootstrap_servers=gw.bootstrap, client_id="upgrade-old", api_version=(0, 10, 1),
                            enable_idempotence=False, acks=1, request_timeout_ms=1000, delivery_timeout_ms=3000)
        try:
            with pytest.raises(KafkaError):
                old.send(data, value=b"old").get(timeout=60)  # refused by the 4.x broker: the point
        finally:
            old.close()

    def closed() -> bool | None:
        ids = {e.client_id for _k, e in read_events(kafka_bootstrap, events) if e.event == CONNECTION_CLOSED}
        return {"upgrade-current", "upgrade-old"} <= ids or None

    eventually(closed, timeout_s=60, message="the clients' connection_closed events")


def test_the_report_says_which_real_clients_are_ready_for_4_0(kafka_bootstrap: str, spark: Any, topic_name: Any,
                                                              roundtrip_classes: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    events, data, usage = topic_name("events"), topic_name("data"), topic_name("usage")
    create_topic(kafka_bootstrap, data, partitions=1)
    _clients_through_the_proxy(kafka_bootstrap, events, data, topic_name("java"), roundtrip_classes)

    settings = Settings(checkpoint_dir=tmp_path / "ckpt", input_topic=events, sink="kafka", trigger="available-now",
                        alerts_topic=topic_name("alerts"), quarantine_topic=topic_name("quarantine"),
                        gauges_topic=topic_name("gauges"), usage_topic=usage)
    job = StreamingJob(settings, JobOptions.from_settings(settings), kafka_bootstrap, out=lambda _line: None)
    job.start()
    job.wait()

    capsys.readouterr()
    argv = ["report", "upgrade", "--target", "4.0", "--bootstrap-servers", kafka_bootstrap, "--usage-topic", usage]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["target"] == "4.0"
    verdicts = {(c["client_software_name"], c["client_software_version"]): c for c in report["clients"]}
    assert verdicts[("kafka-python", kafka.__version__)]["status"] == "ready"
    assert verdicts[("apache-kafka-java", JAVA)]["status"] == "ready"
    old = verdicts[(UNKNOWN_SOFTWARE, UNKNOWN_SOFTWARE)]  # ApiVersions v0 names no software
    assert (old["client_id"], old["principal"]) == ("upgrade-old", "User:ANONYMOUS")  # grouped by both
    assert old["status"] == "not_ready" and old["connections"] >= 2
    assert {(r["api"], r["version"], r["why"]) for r in old["offending"]} >= {("Produce", 2, "removed")}
    # The table, and the exit code a CI gate uses.
    assert main([*argv, "--fail-if-not-ready"]) == 3
    table = capsys.readouterr().out
    assert "1 of 3 client versions not ready" in table and "Produce v2 (removed" in table

"""Ground truth from the broker itself: configwatch's per-version gauges equal Kafka's own KIP-511 counts.

A second real broker starts with the Prometheus JMX exporter Java agent (from
Maven), which exposes the broker's ``socket-server-metrics`` ``connections`` per
``clientSoftwareName``/``clientSoftwareVersion``. Real clients (kafka-clients
3.9.0 and 4.3.1, confluent-kafka, two kafka-python producers) hold connections
open to it through the gateway; the gateway's events go to the run's usual broker,
where the real streaming job turns them into gauges. Nothing else connects to the
second broker, so for these clients the broker's numbers, the gateway's gauge and
the job's gauges must be the same.
"""

from __future__ import annotations

import json
import select
import shutil
import subprocess
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import confluent_kafka
import kafka
import pytest
from kafka import KafkaProducer

from configwatch import jars
from configwatch.errors import SetupError
from configwatch.localkafka import LocalKafka
from configwatch.paths import cache_dir
from configwatch.settings import Settings
from streaming.job import JobOptions, StreamingJob
from tests.conftest import eventually, free_port
from tests.gateway_helpers import gateway, metric
from tests.kafka_helpers import read_all

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

JMX_EXPORTER = "io.prometheus.jmx:jmx_prometheus_javaagent:1.0.1"
JMX_CONFIG = 'includeObjectNames: ["kafka.server:type=socket-server-metrics,*"]\n'
HOLD = Path(__file__).parent / "jvm" / "ProxyHold.java"
JAVA_RELEASES = ("3.9.0", "4.3.1")
BROKER_GAUGE = "kafka_server_socket_server_metrics_connections{"
Software = tuple[str, str]


def _jmx_agent() -> Path:
    """The exporter's agent jar, resolved by Maven once into the cache."""
    target = cache_dir() / "jars" / "jmx-exporter-1.0.1"
    jar = target / "jmx_prometheus_javaagent-1.0.1.jar"
    if not jar.exists():
        mvn = shutil.which("mvn")
        if mvn is None:
            raise SetupError("Maven ('mvn') is needed for the JMX exporter agent")
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run([mvn, "-q", "-B", "dependency:copy", f"-Dartifact={JMX_EXPORTER}",
                        f"-DoutputDirectory={target}"], check=True, capture_output=True, timeout=600)
    return jar


def _broker_counts(jmx_port: int, wanted: set[Software]) -> dict[Software, int]:
    """The broker's own KIP-511 ``connections`` on its client listener, summed over network processors."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{jmx_port}/metrics", timeout=10).read().decode()
    counts: Counter[Software] = Counter()
    for line in text.splitlines():
        if not line.startswith(BROKER_GAUGE):
            continue
        labels_text, _, value = line[len(BROKER_GAUGE):].rpartition("} ")
        labels = dict(part.split("=", 1) for part in labels_text.rstrip(",").split('",') if "=" in part)
        labels = {k: v.strip('"') for k, v in labels.items()}
        software = (labels.get("clientSoftwareName", ""), labels.get("clientSoftwareVersion", ""))
        # The combined broker's own controller channel (listener CONTROLLER) is apache-kafka-java too.
        if software in wanted and labels.get("listener") == "PLAINTEXT":
            counts[software] += int(float(value))
    return {k: v for k, v in counts.items() if v}


def _job_gauges(settings: Settings, gauges_topic: str) -> dict[Software, int]:
    lines: list[str] = []
    job = StreamingJob(settings, JobOptions.from_settings(settings), settings.bootstrap_servers, out=lines.append)
    job.start()
    job.wait()
    latest: dict[str, int] = {}
    for key, value, _p, _o in sorted(read_all(settings.bootstrap_servers or "", gauges_topic),
                                     key=lambda r: (r[2], r[3])):
        if key is not None:
            latest[key.decode()] = json.loads(value)["connections"] if value is not None else 0
    return {(k.partition("/")[0], k.partition("/")[2]): v for k, v in latest.items() if v}


def _wanted() -> set[Software]:
    rdkafka = f"{confluent_kafka.__version__}-rdkafka-{confluent_kafka.libversion()[0]}"
    return {("kafka-python", kafka.__version__), ("apache-kafka-java", "3.9.0"), ("apache-kafka-java", "4.3.1"),
            ("confluent-kafka-python", rdkafka)}


def _hold_clients(bootstrap: str, topic: str, classes: Path, javas: list[subprocess.Popen[str]],
                  held: list[Any]) -> None:
    """Two kafka-python producers, one confluent-kafka producer and one Java producer per release, each
    connected (one record sent) and kept open."""
    for i in range(2):
        producer = KafkaProducer(bootstrap_servers=bootstrap, client_id=f"truth-kp-{i}")
        held.append(producer)
        producer.send(topic, value=b"held").get(timeout=60)
    rd = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "client.id": "truth-ck"})
    held.append(rd)
    rd.produce(topic, value=b"held")
    assert rd.flush(60) == 0
    for release in JAVA_RELEASES:
        cp = ":".join([str(classes), *(str(p) for p in jars.client_jars(release))])
        proc = subprocess.Popen(["java", "-cp", cp, "ProxyHold", bootstrap, topic, f"truth-{release}"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        javas.append(proc)
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 120)
        assert ready and proc.stdout.readline().strip() == f"ready {release}"


def _release(javas: list[subprocess.Popen[str]], held: list[Any]) -> None:
    """Close the held clients: the Java ones end when their stdin does; librdkafka's when dropped."""
    for proc in javas:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=60)
    for client in held:
        if isinstance(client, KafkaProducer):
            client.close()
    javas.clear()
    held.clear()


def test_gauges_equal_the_brokers_own_kip511_connection_counts(kafka_bootstrap: str, spark: Any, topic_name: Any,
                                                                tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    jmx_port = free_port()
    config = tmp_path / "jmx.yaml"
    config.write_text(JMX_CONFIG)
    classes = tmp_path / "classes"
    classpath = ":".join(str(p) for p in jars.client_jars(JAVA_RELEASES[0]))
    subprocess.run(["javac", "-d", str(classes), "-cp", classpath, str(HOLD)], check=True, capture_output=True)
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", f"-javaagent:{_jmx_agent()}={jmx_port}:{config}")
    broker = LocalKafka(tmp_path / "observed-kafka", heap="512m")
    info = broker.start()
    monkeypatch.delenv("JAVA_TOOL_OPTIONS")  # only the observed broker carries the agent
    events, data, gauges_topic = topic_name("events"), topic_name("data"), topic_name("gauges")
    held: list[Any] = []
    javas: list[subprocess.Popen[str]] = []
    try:
        with gateway(kafka_bootstrap, events, upstream=info.bootstrap_servers, gateway_broker_port_base=0,
                     client_config_policy_class_name="none") as gw:
            try:
                _hold_clients(gw.bootstrap, data, classes, javas, held)
                wanted = _wanted()

                def gateway_counts() -> dict[Software, int]:
                    counts = {s: int(metric(gw, "configwatch_gateway_client_software_connections",
                                            client_software_name=s[0], client_software_version=s[1])) for s in wanted}
                    return {k: v for k, v in counts.items() if v}

                def agreed() -> dict[Software, int] | None:
                    truth = _broker_counts(jmx_port, wanted)
                    return truth if set(truth) == wanted and truth == gateway_counts() else None

                truth = eventually(agreed, timeout_s=60, message="the gateway's gauge equals the broker's counts")
                assert truth[("kafka-python", kafka.__version__)] >= 2  # two producers, at least one connection each
                settings = Settings(bootstrap_servers=kafka_bootstrap, checkpoint_dir=tmp_path / "ckpt",
                                    input_topic=events, gauges_topic=gauges_topic, sink="kafka",
                                    trigger="available-now", outputs="gauges", expectations=False)
                gauges = _job_gauges(settings, gauges_topic)
                assert {s: gauges.get(s, 0) for s in wanted} == truth
                assert _broker_counts(jmx_port, wanted) == truth  # nothing moved while the job ran
            finally:
                _release(javas, held)  # before the gateway stops, so no client retries against it
    finally:
        _release(javas, held)
        broker.stop()

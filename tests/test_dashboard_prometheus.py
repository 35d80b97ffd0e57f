"""A real Prometheus server (Debian's binary) scrapes the dashboard's /metrics with its bearer
token; PromQL over the HTTP API returns the connection counts of the gauges topic, and a
series goes stale after its tombstone. ``promtool check metrics`` accepts the exposition.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from configwatch.secrets import SecretStr
from sinks.dashboard import Topics
from tests.conftest import eventually, free_port
from tests.dashboard_helpers import create_topics, current_gauges, dashboard, gauge_record, get, tombstone
from tests.kafka_helpers import produce

pytestmark = pytest.mark.kafka

TOKEN = "prometheus-scrape-token"


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[Any]:
    """Start Prometheus on a free loopback port with a config the test writes (see ``start``)."""
    binary = shutil.which("prometheus")
    assert binary, "prometheus missing: `make test` installs it (scripts/system-deps.sh)"
    procs: list[subprocess.Popen[bytes]] = []

    def start(target: str) -> str:
        port = free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n"
            "  - job_name: configwatch-dashboard\n"
            "    scrape_interval: 1s\n    scrape_timeout: 1s\n"
            f"    authorization:\n      credentials: {TOKEN}\n"
            f"    static_configs:\n      - targets: ['{target}']\n")
        log = (tmp_path / "prometheus.log").open("wb")
        procs.append(subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            stdout=log, stderr=subprocess.STDOUT))
        base = f"http://127.0.0.1:{port}"
        eventually(lambda: _ready(base, procs[-1], tmp_path), timeout_s=60, message="Prometheus ready")
        return base

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _ready(base: str, proc: subprocess.Popen[bytes], tmp_path: Path) -> bool:
    if proc.poll() is not None:
        raise AssertionError("prometheus exited: " + (tmp_path / "prometheus.log").read_text()[-2000:])
    try:
        return get(base + "/-/ready").status == 200
    except OSError:
        return False


def _query(base: str, promql: str) -> dict[str, float]:
    res = get(f"{base}/api/v1/query?query={quote(promql)}")
    doc = json.loads(res.body)
    assert doc["status"] == "success", doc
    out = {}
    for item in doc["data"]["result"]:
        m = item["metric"]
        key = f"{m.get('client_software_name', '')}/{m.get('client_software_version', '')}".strip("/")
        out[key] = float(item["value"][1])
    return out


def test_prometheus_scrapes_connection_counts(kafka_bootstrap: str, topic_name: Any, prometheus: Any,
                                              tmp_path: Path) -> None:
    topics = Topics(gauges=topic_name("gauges"), alerts=topic_name("alerts"), configs=topic_name("configs"))
    create_topics(kafka_bootstrap, topics)
    produce(kafka_bootstrap, topics.gauges, [
        gauge_record("apache-kafka-java", "3.9.1", 12, 8),
        gauge_record("librdkafka", "2.6.1", 5, 5),
        gauge_record("confluent-kafka-go", "2.5.0", 3, 1),
    ])
    with dashboard(kafka_bootstrap, topics, token=SecretStr(TOKEN)) as svc:
        assert svc.wait_ready(60)
        target = svc.url.removeprefix("http://").rstrip("/")
        base = prometheus(target)
        expected = {k: float(g.connections) for k, g in current_gauges(kafka_bootstrap, topics.gauges).items()}
        assert expected == {"apache-kafka-java/3.9.1": 12.0, "librdkafka/2.6.1": 5.0, "confluent-kafka-go/2.5.0": 3.0}

        def scraped() -> dict[str, float] | None:
            got = _query(base, 'configwatch_client_connections{job="configwatch-dashboard"}')
            return got if got == expected else None

        eventually(scraped, timeout_s=60, message="PromQL connection counts equal to the gauges topic")
        total = _query(base, "sum(configwatch_client_connections)")
        assert total == {"": 20.0}
        assert _query(base, "configwatch_fleet_connections") == {"": 20.0}
        assert _query(base, 'up{job="configwatch-dashboard"}') == {"": 1.0}

        # After a tombstone the series goes stale: the instant query no longer returns it.
        produce(kafka_bootstrap, topics.gauges, [tombstone("librdkafka", "2.6.1")])
        del expected["librdkafka/2.6.1"]
        eventually(scraped, timeout_s=60, message="series gone after the tombstone")

        # promtool lints the exposition the dashboard serves.
        text = get(svc.url + "metrics", token=TOKEN).body
        promtool = shutil.which("promtool")
        assert promtool, "promtool missing: it ships with Debian's prometheus package"
        check = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, timeout=60,
                               check=False)
        assert check.returncode == 0, check.stdout.decode() + check.stderr.decode()
        assert check.stdout.strip() == b"" and check.stderr.strip() == b"", check.stdout + check.stderr

"""``configwatch dashboard`` as a user runs it: one-line errors, and a real serving process
that prints its URL, answers, and stops cleanly on SIGTERM.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import eventually
from tests.dashboard_helpers import create_topics, gauge_record, get, metric_samples
from tests.kafka_helpers import produce

CLI = [sys.executable, "-m", "cli.main"]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})}, check=False)


def test_public_bind_without_token_is_one_line() -> None:
    out = _run("dashboard", "--host", "0.0.0.0", "--bootstrap-servers", "127.0.0.1:1")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "configwatch dashboard: error: binding 0.0.0.0 exposes the dashboard beyond this machine; set a bearer "
        "token (CONFIGWATCH_DASHBOARD_TOKEN) or bind 127.0.0.1"]


def test_no_broker_is_one_line(tmp_path: Path) -> None:
    out = _run("dashboard", env={"CONFIGWATCH_KAFKA_HOME": str(tmp_path / "none")})
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "--bootstrap-servers" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_port_that_is_no_tcp_port_is_one_line_before_any_network() -> None:
    out = _run("dashboard", "--bootstrap-servers", "127.0.0.1:1", "--port", "99999")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == ["configwatch dashboard: error: --dashboard-port 99999 is not a TCP port"]


def test_same_topic_twice_is_one_line() -> None:
    out = _run("dashboard", "--bootstrap-servers", "127.0.0.1:1", "--gauges-topic", "t", "--alerts-topic", "t")
    assert out.returncode == 2 and "--gauges-topic: 't' is also --alerts-topic" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.kafka
def test_dashboard_command_serves_until_sigterm(kafka_bootstrap: str, topic_name: Any, tmp_path: Path) -> None:
    from sinks.dashboard import Topics

    topics = Topics(gauges=topic_name("gauges"), alerts=topic_name("alerts"), configs=topic_name("configs"))
    create_topics(kafka_bootstrap, topics)
    produce(kafka_bootstrap, topics.gauges, [gauge_record("librdkafka", "2.6.1", 3, 2)])
    env = {**os.environ, "CONFIGWATCH_DASHBOARD_TOKEN": "cli-token", "CONFIGWATCH_FINGERPRINT_KEY": "k"}
    proc = subprocess.Popen(
        [*CLI, "dashboard", "--bootstrap-servers", kafka_bootstrap, "--port", "0", "--gauges-topic", topics.gauges,
         "--alerts-topic", topics.alerts, "--input-topic", topics.configs],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("dashboard: http://127.0.0.1:"), line
        url = line.split()[1]
        eventually(lambda: get(url + "healthz").status == 200, timeout_s=60, message="dashboard ready")
        samples = eventually(lambda: metric_samples(get(url + "metrics", token="cli-token").text),
                             timeout_s=30, message="metrics")
        assert samples[("configwatch_client_connections", (("client_software_name", "librdkafka"),
                                                           ("client_software_version", "2.6.1")))] == 3
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        _out, err = proc.communicate(timeout=10)
        assert "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

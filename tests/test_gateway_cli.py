"""``configwatch gateway`` and ``configwatch simulate`` as operators run them: real processes, real broker."""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from typing import Any

import pytest

from policy.api import ClientConfig
from policy.client import ClientIdentity, PushOptions, push_config
from tests.gateway_helpers import create_topic, read_events

pytestmark = pytest.mark.kafka

CLI = [sys.executable, "-m", "cli.main"]
SECRET = "cli-hunter2-9f8e7d6c"
ENV = {**os.environ, "CONFIGWATCH_FINGERPRINT_KEY": "cli-test-key"}


def _run(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, env=ENV, check=False)


def _wait_for_line(proc: subprocess.Popen[str], pattern: str, timeout_s: float = 60) -> re.Match[str]:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout_s
    seen = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            line = proc.stdout.readline()
            seen.append(line)
            match = re.search(pattern, line)
            if match:
                return match
        if proc.poll() is not None:
            break
    raise AssertionError(f"no line matching {pattern!r} (got {seen!r})")


def test_gateway_serves_until_sigterm_then_flushes(kafka_bootstrap: str, topic_name: Any) -> None:
    topic = topic_name("cli")
    create_topic(kafka_bootstrap, topic)
    proc = subprocess.Popen(
        [*CLI, "--log-level", "DEBUG", "gateway", "--bootstrap-servers", kafka_bootstrap, "--input-topic", topic,
         "--gateway-port", "0", "--gateway-metrics-port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        match = _wait_for_line(proc, r"gateway listening on (127\.0\.0\.1):(\d+) \(PushConfig advertised\), "
                                     r"metrics on http://127\.0\.0\.1:\d+/metrics")
        address = f"{match.group(1)}:{match.group(2)}"
        leaky = [ClientConfig("acks", "all", "STRING", False),
                 ClientConfig("ssl.key.password", SECRET, "STRING", False)]
        result = push_config(address, leaky, ClientIdentity("kafka-python", "3.1.0", "cli-app"),
                             PushOptions(filter_sensitive=False))
        assert result.status == "violation"
        fleet = _run("simulate", "--connect", "--gateway-port", match.group(2), "--clients", "20", "--no-progress")
        assert fleet.returncode == 0, fleet.stderr
        assert "simulated 20 clients (tcp)" in fleet.stdout and "failed 0" in fleet.stdout
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-2000:]
    assert re.search(r"gateway stopped: \d+ events published \(\d+ pushes\), 0 dropped, 0 failed", out), out
    assert "Traceback" not in err
    assert SECRET not in out and SECRET not in err  # DEBUG logs included
    events = [e for _, e in read_events(kafka_bootstrap, topic)]
    cli_push = [e for e in events if e.event == "config_push" and e.client_id == "cli-app"]
    assert len(cli_push) == 1 and cli_push[0].configs is not None and cli_push[0].configs[1].redacted
    assert SECRET not in "".join(e.to_json() for e in events)


def test_simulate_runs_its_own_gateway_and_prints_a_summary(kafka_bootstrap: str, topic_name: Any) -> None:
    topic = topic_name("clisim")  # not created here: the command creates the topic its gateway publishes to
    out = _run("simulate", "--bootstrap-servers", kafka_bootstrap, "--input-topic", topic, "--clients", "40",
               "--seed", "3", "--rate", "200", "--no-progress")
    assert out.returncode == 0, out.stderr
    assert f"created topic {topic}" in out.stderr
    assert " ERROR " not in out.stderr, out.stderr  # auto-creation on first publish logs the client's ERROR
    lines = out.stdout.splitlines()
    assert lines[0].startswith("simulated 40 clients (tcp)")
    published = int(re.search(r"config_push published (\d+), dropped 0", out.stdout).group(1))  # type: ignore[union-attr]
    assert published == len([e for _, e in read_events(kafka_bootstrap, topic) if e.event == "config_push"]) > 0


def test_cli_mistakes_are_one_line(kafka_bootstrap: str) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        taken = _run("gateway", "--bootstrap-servers", kafka_bootstrap, "--gateway-port", str(port),
                     "--gateway-metrics-port", "-1")
    assert taken.returncode == 1
    assert taken.stderr.strip().splitlines()[-1].startswith(f"configwatch gateway: cannot listen on 127.0.0.1:{port}")
    assert "Traceback" not in taken.stderr
    bad_policy = _run("gateway", "--bootstrap-servers", kafka_bootstrap, "--gateway-port", "0",
                      "--client-config-policy-class-name", "nowhere.Policy")
    assert bad_policy.returncode == 1
    assert bad_policy.stderr.strip().splitlines()[-1] == (
        "configwatch gateway: client config policy 'nowhere.Policy': cannot import nowhere (No module named "
        "'nowhere')")
    share = _run("simulate", "--leaking-share", "2")
    assert share.returncode == 2 and len(share.stderr.strip().splitlines()) == 1
    assert "2 is not a share between 0 and 1" in share.stderr


@pytest.mark.parametrize(("command", "flag", "value", "says"), [
    ("gateway", "--gateway-port", "70000", "--gateway-port 70000 is not a TCP port"),
    ("gateway", "--gateway-metrics-port", "-2", "--gateway-metrics-port -2 is not a TCP port (or -1: off)"),
    ("gateway", "--gateway-max-connections", "0", "--gateway-max-connections: must be a positive number, got 0"),
    ("gateway", "--gateway-idle-timeout-s", "-1", "--gateway-idle-timeout-s: must be a positive number, got -1"),
    ("gateway", "--gateway-push-rate-limit", "-1",
     "--gateway-push-rate-limit: must not be negative (0: unlimited), got -1"),
    ("simulate", "--policy-buffer-size", "0", "--policy-buffer-size: must be a positive number, got 0"),
    ("gateway", "--gateway-metrics-port", "9192", "--gateway-metrics-port 9192 is also --gateway-port"),
    ("gateway", "--gateway-broker-id", "-1", "--gateway-broker-id: must not be negative, got -1"),
    ("simulate", "--gateway-socket-send-buffer-bytes", "-5",
     "--gateway-socket-send-buffer-bytes: a size in bytes, or -1 or 0 for the OS default; got -5"),
])
def test_a_gateway_knob_that_cannot_work_is_one_line_before_any_network(command: str, flag: str, value: str,
                                                                         says: str) -> None:
    out = _run(command, flag, value, "--bootstrap-servers", "127.0.0.1:1")  # no broker: the knob is said first
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [f"configwatch {command}: error: {says}"]

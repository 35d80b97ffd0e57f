"""Mistakes in flags and ``CONFIGWATCH_*`` variables: one line naming where the value came from, before any network."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "cli.main"]
DEAD = ("--bootstrap-servers", "127.0.0.1:1", "--connect-timeout-s", "1")  # would fail fast if ever reached


def _one_line(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    out = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, check=False,
                         env={**os.environ, "CONFIGWATCH_FINGERPRINT_KEY": "k", **(env or {})})
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and not out.stdout, out.stderr + out.stdout
    return out.returncode, lines[0]


@pytest.mark.parametrize("servers", ["host", "host:", ":9092", "127.0.0.1:99999", "h:abc", ",", "a b:1", ""])
def test_a_bootstrap_list_that_is_no_host_port_list_is_one_line_at_once(servers: str) -> None:
    started = time.monotonic()
    code, line = _one_line("gateway", "--bootstrap-servers", servers)
    assert code == 2 and line.startswith("configwatch gateway: error: --bootstrap-servers: ")
    assert "HOST:PORT" in line
    code, line = _one_line("report", "upgrade", "--target", "4.0", env={"CONFIGWATCH_BOOTSTRAP_SERVERS": servers})
    assert code == 2 and line.startswith("configwatch report: error: CONFIGWATCH_BOOTSTRAP_SERVERS: ")
    assert time.monotonic() - started < 60  # not the connect timeout: nothing was tried


@pytest.mark.parametrize(("env", "message"), [
    ({"CONFIGWATCH_MAX_OFFSETS_PER_TRIGGER": "0"}, "CONFIGWATCH_MAX_OFFSETS_PER_TRIGGER: must be a positive number"),
    ({"CONFIGWATCH_CONNECT_TIMEOUT_S": "nan"}, "CONFIGWATCH_CONNECT_TIMEOUT_S: must be a finite number"),
    ({"CONFIGWATCH_ALERTS_TOPIC": "client-configs"},
     "CONFIGWATCH_ALERTS_TOPIC: 'client-configs' is also --input-topic"),
    ({"CONFIGWATCH_KAFKA_HOME": ""}, "CONFIGWATCH_KAFKA_HOME: empty"),
])
def test_a_variable_that_cannot_work_is_named_as_the_variable(env: dict[str, str], message: str) -> None:
    code, line = _one_line("kafka", "status", env=env)
    assert code == 2 and message in line


def test_a_value_for_run_alone_does_not_stop_other_commands(tmp_path: Path) -> None:
    env = {"CONFIGWATCH_CONNECTION_TTL": "60", "CONFIGWATCH_TRIGGER": "available-now",
           "CONFIGWATCH_KAFKA_HOME": str(tmp_path / "none")}
    out = subprocess.run([*CLI, "kafka", "status"], capture_output=True, text=True, timeout=120, check=False,
                         env={**os.environ, "CONFIGWATCH_FINGERPRINT_KEY": "k", **env})
    assert (out.returncode, out.stdout.strip()) == (3, "not running"), out.stderr
    code, line = _one_line("run", *DEAD, env=env)
    assert code == 2 and "--connection-ttl needs --trigger continuous" in line


def test_the_job_reading_its_own_output_is_one_line() -> None:
    code, line = _one_line("run", *DEAD, "--input-topic", "t", "--alerts-topic", "t")
    assert (code, line) == (2, "configwatch run: error: --alerts-topic: 't' is also --input-topic; "
                               "each needs a topic of its own")


def test_an_unusable_cache_directory_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    env = {"CONFIGWATCH_CACHE_DIR": str(tmp_path / "file"), "CONFIGWATCH_FINGERPRINT_KEY": ""}
    out = subprocess.run([*CLI, "kafka", "status"], capture_output=True, text=True, timeout=120, check=False,
                         env={**{k: v for k, v in os.environ.items() if k != "CONFIGWATCH_FINGERPRINT_KEY"},
                              **{k: v for k, v in env.items() if v}})
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(f"configwatch kafka: cannot read or create the fingerprint key "
                               f"{tmp_path / 'file' / 'fingerprint.key'} (")
    assert lines[0].endswith("); set CONFIGWATCH_CACHE_DIR to a writable directory, or CONFIGWATCH_FINGERPRINT_KEY")


@pytest.mark.parametrize("args", [("--kafka-port", "99999"), ("--kafka-home", "FILE")])
def test_kafka_start_checks_its_flags_first(tmp_path: Path, args: tuple[str, str]) -> None:
    (tmp_path / "file").write_text("")
    args = tuple(str(tmp_path / "file") if a == "FILE" else a for a in args)
    code, line = _one_line("kafka", "start", *args)
    assert code == 2 and ("is not a TCP port" in line or "not a directory" in line)


def test_the_demo_checks_the_jobs_knobs_before_it_starts_anything() -> None:
    code, line = _one_line("demo", *DEAD, "--clients", "0")
    assert (code, line) == (2, "configwatch demo: error: --clients must be at least 1, got 0")
    code, line = _one_line("demo", *DEAD, env={"CONFIGWATCH_TRIGGER_INTERVAL": "soon"})
    assert code == 2 and "--trigger-interval: expected" in line


def test_simulate_connect_says_no_gateway_listens() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    code, line = _one_line("simulate", "--connect", "--gateway-port", str(port), "--connect-timeout-s", "1",
                           "--clients", "1", "--no-progress")
    assert code == 1
    assert line == (f"configwatch simulate: no PushConfig gateway (configwatch gateway; --gateway-host, "
                    f"--gateway-port) accepts connections at 127.0.0.1:{port} within 1 s")
    code, line = _one_line("simulate", "--connect", "--gateway-port", "0")
    assert code == 2 and "--connect needs the gateway's port" in line


@pytest.mark.parametrize(("upstream", "message"), [
    ("bogus://h:9092", "--upstream: 'bogus' is not a security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)"),
    (",,", "--upstream: empty; give the cluster's HOST:PORT,... (or leave it out: no proxy)"),
    ("h:9092,a b:1", "--upstream: 'a b:1' is not HOST:PORT: 'a b' is not a host name or IP address"),
    ("h:9092,h!:1", "--upstream: 'h!:1' is not HOST:PORT: 'h!' is not a host name or IP address"),
    ("h:0", "--upstream: 'h:0' is not HOST:PORT (a port 1-65535)"),
])
def test_an_upstream_that_is_no_cluster_address_is_one_line(upstream: str, message: str) -> None:
    code, line = _one_line("gateway", *DEAD, "--upstream", upstream)
    assert (code, line) == (2, f"configwatch gateway: error: {message}")


def test_an_upstream_protocol_without_an_upstream_is_one_line() -> None:
    code, line = _one_line("gateway", *DEAD, "--upstream-security-protocol", "SSL")
    assert (code, line) == (2, "configwatch gateway: error: --upstream-security-protocol SSL: applies only to a "
                               "proxy; give the cluster with --upstream (or leave both out)")


@pytest.mark.parametrize(("args", "env", "message"), [
    (("dashboard", "--host", "not_a_host!"), {}, "--dashboard-host: 'not_a_host!' is not a host name or IP address"),
    (("gateway", "--gateway-host", "a..b"), {}, "--gateway-host: 'a..b' is not a host name or IP address"),
    (("dashboard",), {"CONFIGWATCH_DASHBOARD_HOST": "x y"},
     "CONFIGWATCH_DASHBOARD_HOST: 'x y' is not a host name or IP address"),
])
def test_a_host_that_is_no_host_is_named_before_any_network(args: tuple[str, ...], env: dict[str, str],
                                                            message: str) -> None:
    code, line = _one_line(*args, *DEAD, env=env)
    assert (code, line) == (2, f"configwatch {args[0]}: error: {message}")


@pytest.mark.parametrize("rate", ["nan", "inf", "-1"])
def test_simulate_refuses_a_rate_that_is_no_rate(rate: str) -> None:
    code, line = _one_line("simulate", *DEAD, "--rate", rate)
    assert code == 2 and "--rate: a finite number" in line

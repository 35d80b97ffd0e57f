"""The configwatch command line: help, one-line errors, and the local broker lifecycle."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli.commands import COMMANDS
from tests.conftest import free_port

CLI = [sys.executable, "-m", "cli.main"]


def _run(*args: str, env: dict[str, str] | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, check=False)


def test_top_level_help_lists_every_command() -> None:
    out = _run("--help")
    assert out.returncode == 0
    for command in COMMANDS:
        assert command.name in out.stdout


@pytest.mark.parametrize("command", [c.name for c in COMMANDS])
def test_each_subcommand_has_help(command: str) -> None:
    out = _run(command, "--help")
    assert out.returncode == 0, out.stderr
    assert f"usage: configwatch {command}" in out.stdout


def test_bad_flag_is_one_helpful_line() -> None:
    out = _run("run", "--no-such-flag")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0] == ("configwatch run: error: unrecognized arguments: --no-such-flag "
                        "(see 'configwatch run --help')")  # the help that lists what run does take
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("argv", [["run", "--fingerprint-key", "K3Y"],
                                  ["dashboard", "--webhook-url", "https://h/T0KEN with space"],
                                  ["gateway", "--dashboard-token=T0K"], ["dashboard", "--webhook", "https://h/T0KEN"],
                                  ["--dashboard-token", "T0K", "dashboard"], ["dashboard", "--dashboard=T0K"]])
def test_a_usage_error_never_echoes_what_a_secret_flag_was_given(argv: list[str]) -> None:
    out = _run(*argv)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "***" in out.stderr
    assert "K3Y" not in out.stderr and "T0K" not in out.stderr, out.stderr


def test_blanking_a_short_secret_leaves_the_rest_of_the_message_alone() -> None:
    out = _run("dashboard", "--dashboard-token", "a", "--port", "abc")
    assert out.returncode == 2
    assert "argument --port: invalid int value: 'abc'" in out.stderr


@pytest.mark.parametrize("flag", [("--checkpoint-dir", "somewhere"), ("--connection-ttl", "30")])
def test_the_demo_offers_no_flag_its_runs_cannot_honour(flag: tuple[str, str]) -> None:
    out = _run("demo", *flag)
    assert out.returncode == 2
    assert f"unrecognized arguments: {' '.join(flag)}" in out.stderr.strip().splitlines()[0]
    assert "fresh temporary directory" in _run("demo", "--help").stdout


def test_simulate_offers_no_metrics_port_it_would_ignore() -> None:
    out = _run("simulate", "--gateway-metrics-port", "9300")
    assert out.returncode == 2
    assert "unrecognized arguments: --gateway-metrics-port 9300" in out.stderr.strip().splitlines()[0]
    assert "--gateway-metrics-port" in _run("gateway", "--help").stdout


@pytest.mark.parametrize("command", [["gateway"], ["simulate", "--clients", "2"], ["demo", "--no-live"],
                                     ["dashboard", "--port", "0"], ["report", "upgrade", "--target", "4.0"]])
def test_a_broker_that_does_not_answer_is_one_line(command: list[str]) -> None:
    port = free_port()
    out = _run(*command, "--bootstrap-servers", f"127.0.0.1:{port}", "--connect-timeout-s", "1", timeout=60)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        f"configwatch {command[0]}: cannot reach Kafka at 127.0.0.1:{port} within 1 s (connection refused or timed "
        "out); check --bootstrap-servers and that the broker runs"]


def test_bad_environment_value_is_one_line() -> None:
    out = _run("kafka", "status", env={"CONFIGWATCH_KAFKA_PORT": "not-a-port"})
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "configwatch kafka: error: CONFIGWATCH_KAFKA_PORT: cannot read 'not-a-port' as int"
    ]


@pytest.mark.kafka
def test_kafka_start_twice_status_stop(tmp_path: Path) -> None:
    env = {"CONFIGWATCH_KAFKA_HOME": str(tmp_path / "broker")}
    assert _run("kafka", "status", env=env).stdout.strip() == "not running"
    started = _run("kafka", "start", env=env)
    try:
        assert started.returncode == 0, started.stderr
        assert started.stdout.startswith("started: 127.0.0.1:")
        again = _run("kafka", "start", env=env)
        assert again.returncode == 0
        assert again.stdout.startswith("already running: 127.0.0.1:")
        status = _run("kafka", "status", env=env)
        assert status.returncode == 0 and status.stdout.startswith("running: 127.0.0.1:")
    finally:
        stopped = _run("kafka", "stop", env=env)
    assert stopped.stdout.strip() == "stopped"
    after = _run("kafka", "status", env=env)
    assert after.returncode == 3 and after.stdout.strip() == "not running"


def test_missing_java_is_a_clear_error(tmp_path: Path) -> None:
    env = {"CONFIGWATCH_KAFKA_HOME": str(tmp_path / "b"), "PATH": "/nonexistent", "JAVA_HOME": ""}
    out = _run("kafka", "start", env=env)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        "configwatch kafka: Java is not installed (no 'java' on PATH or in JAVA_HOME); Kafka needs Java 17+"
    ]


def test_kafka_pythons_event_loop_timing_warnings_stay_off_the_console() -> None:
    probe = ("import logging; from cli.main import _configure_logging; _configure_logging('INFO'); "
             "logging.getLogger('kafka.net.selector').warning('Task ran for 0.3s'); "
             "logging.getLogger('kafka.cluster').warning('a real client warning')")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert "a real client warning" in out.stderr
    assert "Task ran for" not in out.stderr

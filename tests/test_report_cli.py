"""``configwatch report upgrade`` without a broker: the table's shape and one-line mistakes."""

from __future__ import annotations

import pytest

from cli.main import main
from cli.report_cmd import render_table
from udfs.upgrade.readiness import check_readiness
from udfs.upgrade.usage import ClientUsage


def test_an_unknown_target_is_one_line_before_anything_is_read(capsys: pytest.CaptureFixture[str]) -> None:
    # 127.0.0.1:1 answers nothing: the target is judged first, so no connection is tried.
    assert main(["report", "upgrade", "--target", "9.9", "--bootstrap-servers", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["configwatch report: error: --target: no request-version data for Kafka '9.9'; "
                   "known: 3.9, 4.0, 4.1, 4.2, 4.3"]


def test_the_table_lists_not_ready_first_with_the_offending_requests() -> None:
    usage = [ClientUsage("kafka-python", "3.0.12", frozenset({(0, 11), (18, 4)}), 2),
             ClientUsage("unknown", "unknown", frozenset({(0, 2), (18, 0)}), 6, frozenset({"i-1"})),
             ClientUsage("sarama", "1.19.0", frozenset(), 1)]
    lines = render_table(check_readiness(usage, "4.0")).splitlines()
    assert lines[0].endswith("1 of 3 client versions not ready")
    header, *rows = lines[2:]
    assert header.split() == ["STATUS", "CLIENT", "VERSION", "CONNECTIONS", "INSTANCES", "OFFENDING", "REQUESTS"]
    assert rows[0].split()[:6] == ["not", "ready", "unknown", "unknown", "6", "1"]
    assert "Produce v2 (removed; the target serves v3-v" in rows[0]
    assert rows[1].split()[:2] == ["unknown", "sarama"]  # no request recorded: unknown, not ready
    assert rows[2].split()[:3] == ["ready", "kafka-python", "3.0.12"]

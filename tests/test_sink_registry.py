"""The ``--sink`` registry: targets checked once, one line per mistake, the Output each names (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from configwatch.secrets import SecretStr
from sinks.base import AT_LEAST_ONCE, EXACTLY_ONCE
from sinks.exceptions import SinkTargetError
from sinks.files import FilesOutput
from sinks.kafka import KafkaOutput
from sinks.registry import build_notifier, build_output, parse_output
from sinks.webhook import WebhookSink


def test_kafka_and_files_targets(tmp_path: Path) -> None:
    kafka = parse_output(" kafka ")
    assert (kafka.name, kafka.needs_kafka, str(kafka)) == ("kafka", True, "kafka")
    output = build_output(kafka, bootstrap="b:9092", topics={"alerts": "a"})
    assert isinstance(output, KafkaOutput) and output.guarantee == AT_LEAST_ONCE
    assert output.description == "kafka topics a"
    files = parse_output(f"files:{tmp_path}/out")
    assert (files.name, files.needs_kafka, files.argument) == ("files", False, str((tmp_path / "out").resolve()))
    output = build_output(files, bootstrap=None, topics={})
    assert isinstance(output, FilesOutput) and output.guarantee == EXACTLY_ONCE


@pytest.mark.parametrize("bad", ["file:/x", "files:", "kafka:x", "s3://bucket", "", "KAFKA"])
def test_a_target_naming_no_sink_is_one_line(bad: str) -> None:
    with pytest.raises(SinkTargetError, match="expected 'kafka' or 'files:DIR'") as err:
        parse_output(bad)
    assert "\n" not in str(err.value)


def test_a_files_target_on_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("x")
    with pytest.raises(SinkTargetError, match="exists and is not a directory"):
        parse_output(f"files:{tmp_path / 'taken'}")


def test_the_notifier_is_the_webhook_and_hides_its_url() -> None:
    assert build_notifier(None) is None
    notifier = build_notifier(SecretStr("https://user:pw@hooks.example:8443/path?token=t"))
    assert isinstance(notifier, WebhookSink)
    assert notifier.description == "webhook https://hooks.example:8443/..."

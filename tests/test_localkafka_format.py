"""Formatting the local broker's KRaft storage with the real Kafka storage tool."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from configwatch.jars import broker_jars
from configwatch.localkafka import LocalKafka, broker
from configwatch.localkafka.properties import server_properties


def test_a_cluster_id_starting_with_a_dash_formats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A base64url id starts with "-" one time in 64; "-t -xyz" made the tool read it as a flag.
    cluster_id = "-" + broker._kraft_cluster_id()[1:]
    monkeypatch.setattr(broker, "_kraft_cluster_id", lambda: cluster_id)
    kafka = LocalKafka(tmp_path)
    props = tmp_path / "server.properties"
    props.write_text(server_properties(19092, 19093, kafka.data_dir))
    kafka._format_once(kafka._java(), os.pathsep.join(str(j) for j in broker_jars()), props)
    assert f"cluster.id={cluster_id}" in (kafka.data_dir / "meta.properties").read_text()

"""The dashboard under the probe of issue 14, row 3: huge pushes under fresh instance ids stay in a byte budget."""

from __future__ import annotations

from typing import Any

import pytest

from configwatch.records import ConfigEntry
from sinks.dashboard.state import Topics
from tests.conftest import eventually
from tests.dashboard_helpers import config_push, create_topics, dashboard, get
from tests.kafka_helpers import produce

pytestmark = pytest.mark.kafka


def test_row3_client_views_stay_within_their_byte_budget(kafka_bootstrap: str, topic_name: Any) -> None:
    topics = Topics(gauges=topic_name("g"), alerts=topic_name("a"), configs=topic_name("c"))
    create_topics(kafka_bootstrap, topics)
    entries = [ConfigEntry("", "", "STRING", True) for _ in range(1900)]
    budget = 4 * 1024 * 1024
    with dashboard(kafka_bootstrap, topics, max_client_bytes=budget) as board:
        produce(kafka_bootstrap, topics.configs, [config_push(f"instance-{n}", entries) for n in range(60)])
        base = board.url.rstrip("/")

        def consumed() -> bool | None:
            doc = get(f"{base}/api/health").json()
            read = sum(sum(t["records"].values()) for t in doc["topics"] if t["role"] == "configs")
            return read >= 60 or None

        eventually(consumed, timeout_s=60, message="the dashboard reading all 60 pushes")  # served during
        assert get(f"{base}/").status == 200  # the page too, after
        assert 0 < board.state.clients.bytes <= budget
        assert len(board.state.clients) < 60 and board.state.clients.evicted > 0
        kept = get(f"{base}/api/clients").json()["clients"]
        assert kept and len(kept) == len(board.state.clients)
        assert get(f"{base}/api/clients/{kept[0]['client_instance_id']}").json()["config_entries"] == 1900

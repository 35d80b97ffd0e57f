"""Checks before Spark starts, beside ``configwatch.reachability.check_broker``: does the input topic exist.

Starting Spark takes seconds and its Kafka source waits for a missing topic; the job says so first.
"""

from __future__ import annotations

__all__ = ["topic_exists"]


def topic_exists(bootstrap: str, topic: str) -> bool:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="configwatch-preflight")
    try:
        return topic in admin.list_topics()
    finally:
        admin.close()

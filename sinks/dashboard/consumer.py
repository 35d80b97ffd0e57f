"""The dashboard's Kafka consumer: one thread that keeps :class:`DashboardState` current.

It assigns itself every partition of the gauges, alerts and input topics (no
consumer group: each dashboard rebuilds its own view) and reads each from the
beginning. The compacted gauges topic gives the current gauges once read to
its end; alerts fill the feed (de-duplicated by id); ``config_push`` input
events become fingerprinted client views. A malformed record is counted and
skipped, never fatal; a Kafka error is logged and retried. Partitions and
topics that appear later (the job creates its topics) are picked up.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

from kafka import KafkaConsumer, TopicPartition
from kafka.errors import KafkaError

from configwatch.errors import ContractError
from configwatch.records import Finding, VersionUsage
from configwatch.secrets import SecretStr
from sinks.dashboard.alerts import parse_finding
from sinks.dashboard.exceptions import DashboardError
from sinks.dashboard.fleet import parse_gauge
from sinks.dashboard.redact import safe_views
from sinks.dashboard.state import DashboardState
from sinks.dashboard.views import alert_document, dumps, gauges_document

__all__ = ["FeedConsumer"]

log = logging.getLogger(__name__)

_MAX_ALERT_EVENTS_PER_BATCH = 50
_MAX_CHANGED_CLIENTS = 200


class FeedConsumer:
    """Start with :meth:`start`, stop with :meth:`stop`; state is read through ``state``."""

    def __init__(self, bootstrap_servers: str, state: DashboardState, fingerprint_key: SecretStr, *,
                 poll_ms: int = 100,
                 discover_every_s: float = 2.0, lag_every_s: float = 1.0) -> None:
        self._bootstrap = bootstrap_servers
        self._state = state
        self._key = fingerprint_key
        self._poll_ms = poll_ms
        self._discover_every_s = discover_every_s
        self._lag_every_s = lag_every_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._consumer: KafkaConsumer | None = None
        self._assigned: set[TopicPartition] = set()
        self._gauges_end: dict[TopicPartition, int] | None = None  # end offsets when first seen

    def start(self) -> None:
        """Connect (raises DashboardError when Kafka is unreachable) and start following."""
        try:
            self._consumer = KafkaConsumer(
                bootstrap_servers=self._bootstrap, client_id="configwatch-dashboard", group_id=None,
                enable_auto_commit=False, auto_offset_reset="earliest", allow_auto_create_topics=False,
                fetch_max_wait_ms=self._poll_ms, metadata_max_age_ms=10_000, request_timeout_ms=30_000,
            )
        except KafkaError as exc:
            raise DashboardError(f"cannot reach Kafka at {self._bootstrap}: {exc}") from None
        self._thread = threading.Thread(target=self._run, name="dashboard-consumer", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None

    # -- the loop -------------------------------------------------------------------------

    def _run(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        next_discover = 0.0
        next_lag = 0.0
        try:
            while not self._stop.is_set():
                try:
                    now = time.monotonic()
                    if now >= next_discover:
                        self._discover(consumer)
                        next_discover = now + self._discover_every_s
                    if not self._assigned:
                        self._stop.wait(self._poll_ms / 1000)
                        continue
                    batch = consumer.poll(timeout_ms=self._poll_ms, max_records=5000)
                    if batch:
                        self._apply(batch)
                    if time.monotonic() >= next_lag or (batch and not self._state.health.ready):
                        self._measure(consumer)
                        next_lag = time.monotonic() + self._lag_every_s
                except KafkaError as exc:
                    self._state.health.error()
                    log.warning("Kafka error, retrying in 1s: %s", exc)
                    self._stop.wait(1.0)
                except Exception:
                    self._state.health.error()
                    log.exception("dashboard consumer failed on a batch; continuing")
                    self._stop.wait(1.0)
        finally:
            consumer.close()
            self._state.changes.close()

    def _discover(self, consumer: KafkaConsumer) -> None:
        """Assign every partition of the three topics that exists now."""
        wanted: set[TopicPartition] = set()
        for topic in self._state.topics.roles():
            for p in consumer.partitions_for_topic(topic) or ():
                wanted.add(TopicPartition(topic, p))
        if wanted != self._assigned and wanted:
            new = wanted - self._assigned
            consumer.assign(sorted(wanted))
            for tp in new:
                consumer.seek_to_beginning(tp)
            log.info("following %d partitions (%d new)", len(wanted), len(new))
            self._assigned = wanted
        if self._gauges_end is None:
            gauges = [tp for tp in self._assigned if tp.topic == self._state.topics.gauges]
            self._gauges_end = consumer.end_offsets(gauges) if gauges else {}
            if not gauges:
                log.info("gauges topic %s does not exist yet; starting empty", self._state.topics.gauges)
        self._check_ready(consumer)

    def _check_ready(self, consumer: KafkaConsumer) -> None:
        """Ready once the gauges topic was read to the end offsets it had when first seen."""
        if self._state.health.ready or self._gauges_end is None:
            return
        if all(consumer.position(tp) >= end for tp, end in self._gauges_end.items()):
            self._state.health.set_ready()
            log.info("gauges rebuilt from %s: %d current", self._state.topics.gauges,
                     len(self._state.fleet.snapshot()))
            self._state.changes.publish("gauges", dumps(gauges_document(self._state)))

    def _measure(self, consumer: KafkaConsumer) -> None:
        if not self._assigned:
            return
        ends = consumer.end_offsets(sorted(self._assigned))
        per_topic: dict[str, list[int]] = {}
        for tp, end in ends.items():
            per_topic.setdefault(tp.topic, []).append(max(0, end - (consumer.position(tp) or 0)))
        for topic, lags in per_topic.items():
            self._state.health.set_lag(topic, sum(lags), len(lags))
        self._check_ready(consumer)

    # -- records --------------------------------------------------------------------------

    def _apply(self, batch: dict[TopicPartition, list[Any]]) -> None:
        topics = self._state.topics
        gauges_changed = usage_changed = False
        new_alerts: list[Finding] = []
        pushes: list[tuple[TopicPartition, Any]] = []
        for tp, records in batch.items():
            for rec in records:
                if tp.topic == topics.gauges:
                    gauges_changed |= self._on_gauge(tp, rec)
                elif tp.topic == topics.usage:
                    usage_changed |= self._on_usage(tp, rec)
                elif tp.topic == topics.alerts:
                    finding = self._on_alert(tp, rec)
                    if finding is not None:
                        new_alerts.append(finding)
                elif rec.value is None or b"config_push" not in rec.value:
                    self._state.health.count(tp.topic, "ignored")  # connection events: not for the drill-down
                else:
                    pushes.append((tp, rec))
        changed_clients = self._on_configs(pushes) if pushes else []
        self._publish(gauges_changed, new_alerts, changed_clients)
        if usage_changed:
            self._state.changes.publish("usage", dumps({"versions": len(self._state.usage)}))

    def _invalid(self, tp: TopicPartition, rec: Any, why: str) -> None:
        self._state.health.count(tp.topic, "invalid")
        # Coordinates only: the payload may hold secrets.
        log.warning("skipped a malformed record at %s-%d@%d: %s", tp.topic, tp.partition, rec.offset, why)

    def _on_gauge(self, tp: TopicPartition, rec: Any) -> bool:
        if rec.key is None:
            self._invalid(tp, rec, "gauge record without a key")
            return False
        try:
            key = rec.key.decode("utf-8")
            gauge = None
            if rec.value is not None:
                gauge = parse_gauge(key, json.loads(rec.value))
                if key != gauge.key:
                    raise ValueError(f"key {key!r} is not the value's <name>/<version>")
        except (UnicodeDecodeError, ValueError, TypeError, AttributeError) as exc:
            self._invalid(tp, rec, str(exc) if isinstance(exc, ValueError) else type(exc).__name__)
            return False
        self._state.health.count(tp.topic, "ok")
        return self._state.fleet.apply(key, gauge)

    def _on_usage(self, tp: TopicPartition, rec: Any) -> bool:
        if rec.key is None:
            self._invalid(tp, rec, "usage record without a key")
            return False
        try:
            key = rec.key.decode("utf-8")
            usage = None if rec.value is None else VersionUsage.from_json(rec.value)
            if usage is not None and key != usage.key:
                raise ValueError(f"key {key!r} is not the value's <name>/<version>")
        except (UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError) as exc:
            self._invalid(tp, rec, str(exc) if isinstance(exc, ValueError) else type(exc).__name__)
            return False
        self._state.health.count(tp.topic, "ok")
        return self._state.usage.apply(key, usage)

    def _on_alert(self, tp: TopicPartition, rec: Any) -> Finding | None:
        if rec.value is None:
            self._state.health.count(tp.topic, "ignored")
            return None
        try:
            finding = parse_finding(json.loads(rec.value))
        except (UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError) as exc:
            self._invalid(tp, rec, type(exc).__name__)
            return None
        self._state.health.count(tp.topic, "ok")
        return finding if self._state.alerts.add(finding) else None

    def _on_configs(self, pushes: list[tuple[TopicPartition, Any]]) -> list[str]:
        """Judge the batch's pushes in one pass; keep only their safe views."""
        changed: list[str] = []
        results = safe_views([rec.value for _tp, rec in pushes], self._key)
        for (tp, rec), result in zip(pushes, results, strict=True):
            if isinstance(result, ContractError):
                self._invalid(tp, rec, result.reason)
            elif result is None:
                self._state.health.count(tp.topic, "ignored")
            else:
                self._state.health.count(tp.topic, "ok")
                if self._state.clients.put(result):
                    changed.append(result.client_instance_id)
        return changed

    def _publish(self, gauges_changed: bool, new_alerts: list[Finding], changed_clients: list[str]) -> None:
        changes = self._state.changes
        if gauges_changed:
            changes.publish("gauges", dumps(gauges_document(self._state)))
        if len(new_alerts) > _MAX_ALERT_EVENTS_PER_BATCH:
            changes.publish("alerts", dumps({"new": len(new_alerts)}))  # the page refetches /api/alerts
        else:
            for finding in new_alerts:
                changes.publish("alert", dumps(alert_document(finding)))
        if changed_clients:
            unique = list(dict.fromkeys(reversed(changed_clients)))[:_MAX_CHANGED_CLIENTS]
            changes.publish("clients", dumps({"changed": unique}))

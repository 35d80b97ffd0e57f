"""The webhook sink: findings to an Alertmanager-compatible HTTP endpoint, best effort.

Each POST carries the webhook receiver payload Alertmanager itself sends
(``version: "4"``, ``status``, ``receiver``, ``groupKey``, ``alerts`` with
``labels``, ``annotations``, ``startsAt``, ``endsAt`` and ``fingerprint`` = the
finding's ``alert_id``), so anything that takes Alertmanager webhooks takes ours.
Like an Alertmanager route with ``group_by: [alertname]``, one POST holds the alerts
of one rule (``groupLabels`` and ``groupKey`` name it); each alert's ``subject``
label names what it is about (``group:<group>`` for a consumer-group finding, else
the client instance id or client id), so a receiver can group by rule and subject.
A group finding is one alert per rule and group (``udfs.rules.groups``).

Delivery guarantee: best effort, at most once per ``alert_id`` per Python process
(an LRU of delivered ids de-duplicates repeats). A POST is retried with
exponential backoff and jitter on connection errors, 5xx and 429 (``Retry-After``
honoured, capped), and never on other 4xx. Requests are rate limited per process
(token bucket). A writer never raises: when the endpoint stays down past its
retries or the writer's deadline, or a POST cannot be made at all (a URL urllib
refuses), the alerts are dropped, counted and logged (counts, status codes and
exception types only, never a payload or the URL), so a failing webhook never stops
the job or touches the Kafka copy of the alerts, which is written by its own query.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
import urllib.error
import urllib.request
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import urlsplit

from configwatch.ratelimit import TokenBucket
from configwatch.secrets import SecretStr
from sinks.base import Sink, SinkRecord, SinkWriter

__all__ = ["BEST_EFFORT", "WebhookSink", "WebhookWriter", "alertmanager_payload", "stats"]

log = logging.getLogger(__name__)

BEST_EFFORT = "best-effort"
_ZERO_TIME = "0001-01-01T00:00:00Z"
_LABELS = ("rule", "kind", "severity", "client_software_name", "client_software_version", "client_instance_id",
           "client_id", "principal")


# Per Python process: delivered alert ids, the rate limiters, and counters (read by tests and logs).
_LOCK = threading.Lock()
_DELIVERED: OrderedDict[str, None] = OrderedDict()
_BUCKETS: dict[tuple[str, float, float], TokenBucket] = {}
_STATS = {"posted": 0, "alerts_sent": 0, "duplicates_skipped": 0, "retries": 0, "alerts_dropped": 0}


def stats() -> dict[str, int]:
    """A copy of this process's webhook counters."""
    with _LOCK:
        return dict(_STATS)


def _count(name: str, n: int = 1) -> None:
    with _LOCK:
        _STATS[name] += n


def _rfc3339(ms: int | None) -> str:
    if ms is None:
        return _ZERO_TIME
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _evidence(finding: Mapping[str, Any]) -> Any:
    evidence = finding.get("evidence")
    if isinstance(evidence, str):
        try:
            return json.loads(evidence)
        except ValueError:
            return None
    return evidence


def _subject(finding: Mapping[str, Any]) -> str | None:
    """What the finding is about: its consumer group for a group finding, else its client."""
    evidence = _evidence(finding)
    if str(finding.get("rule", "")).startswith("group-") and isinstance(evidence, Mapping) and "group" in evidence:
        return f"group:{evidence['group']}"
    for name in ("client_instance_id", "client_id"):
        if finding.get(name) is not None:
            return str(finding[name])
    return None


def _alert(finding: Mapping[str, Any]) -> dict[str, Any]:
    labels = {"alertname": str(finding["rule"])}
    labels.update({k: str(finding[k]) for k in _LABELS if finding.get(k) is not None})
    subject = _subject(finding)
    if subject is not None:
        labels["subject"] = subject
    evidence = finding.get("evidence")
    annotations = {
        "summary": str(finding.get("message", "")),
        "keys": ", ".join(finding.get("keys") or []),
        "evidence": evidence if isinstance(evidence, str) else json.dumps(evidence, sort_keys=True),
    }
    return {"status": "firing", "labels": labels, "annotations": annotations,
            "startsAt": _rfc3339(finding.get("event_timestamp_ms") or finding.get("detected_at_ms")),
            "endsAt": _ZERO_TIME, "generatorURL": "", "fingerprint": str(finding["alert_id"])}


def alertmanager_payload(findings: Sequence[Mapping[str, Any]], receiver: str = "configwatch") -> dict[str, Any]:
    """The Alertmanager webhook (version 4) body for ``findings`` (contract finding dicts)."""
    alerts = [_alert(f) for f in findings]
    common = dict(alerts[0]["labels"]) if alerts else {}
    for a in alerts[1:]:
        common = {k: v for k, v in common.items() if a["labels"].get(k) == v}
    group = {"alertname": common["alertname"]} if "alertname" in common else {}
    key = ",".join(f"{k}={json.dumps(v)}" for k, v in group.items()) or f"receiver={json.dumps(receiver)}"
    return {"version": "4", "groupKey": f"{{}}:{{{key}}}", "truncatedAlerts": 0,
            "status": "firing", "receiver": receiver, "groupLabels": group, "commonLabels": common,
            "commonAnnotations": {}, "externalURL": "", "alerts": alerts}


@dataclass(frozen=True)
class WebhookSink(Sink):
    """Settings only (picklable): where to POST and how hard to try."""

    url: SecretStr
    batch_alerts: int = 50          # alerts per POST
    max_attempts: int = 5
    backoff_s: float = 0.2          # first retry delay; doubles, with +-20% jitter
    backoff_max_s: float = 5.0
    rate_per_s: float = 20.0        # POSTs per second per process
    burst: float = 5.0
    timeout_s: float = 5.0          # one request
    deadline_s: float = 60.0        # one writer's whole delivery; the rest is dropped
    dedup_size: int = 100_000

    guarantee: ClassVar[str] = BEST_EFFORT

    @property
    def description(self) -> str:
        parts = urlsplit(self.url.get_secret_value())
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
        return f"webhook {parts.scheme}://{host}{port}/..."  # path, query and userinfo may hold tokens

    def build(self, partition_id: int, epoch_id: int) -> WebhookWriter:
        return WebhookWriter(self)

    def notify(self, findings: Iterable[str], epoch_id: int) -> None:
        """POST a batch's findings (contract JSON) on the driver, best effort (the job's ``Notifier``)."""
        writer = self.build(0, epoch_id)
        records: list[SinkRecord] = []
        for text in findings:
            value: dict[str, Any] = json.loads(text)
            records.append(SinkRecord(str(value["alert_id"]), value))
        writer.write_batch(records)
        writer.close()

    def bucket(self) -> TokenBucket:
        key = (self.url.get_secret_value(), self.rate_per_s, self.burst)
        with _LOCK:
            if key not in _BUCKETS:
                _BUCKETS[key] = TokenBucket(self.rate_per_s, self.burst)
            return _BUCKETS[key]


class WebhookWriter(SinkWriter):
    """Collects one partition's findings, POSTs them on ``close``; never raises."""

    def __init__(self, sink: WebhookSink) -> None:
        self.sink = sink
        self._pending: dict[str, Mapping[str, Any]] = {}

    def write_batch(self, records: Sequence[SinkRecord]) -> None:
        for record in records:
            alert_id = str(record.key or record.value.get("alert_id"))
            with _LOCK:
                seen = alert_id in _DELIVERED
            if seen or alert_id in self._pending:
                _count("duplicates_skipped")
                continue
            self._pending[alert_id] = record.value

    def close(self) -> None:
        deadline = time.monotonic() + self.sink.deadline_s
        by_rule: dict[str, list[Mapping[str, Any]]] = {}
        for f in self._pending.values():
            by_rule.setdefault(str(f.get("rule")), []).append(f)
        self._pending.clear()
        chunks = [alerts[i:i + self.sink.batch_alerts] for _, alerts in sorted(by_rule.items())
                  for i in range(0, len(alerts), self.sink.batch_alerts)]
        for chunk in chunks:
            if time.monotonic() >= deadline or not self._post(chunk, deadline):
                _count("alerts_dropped", len(chunk))
                log.warning("webhook %s: %d alert(s) dropped after retries", self.sink.description, len(chunk))
                continue
            _count("alerts_sent", len(chunk))
            with _LOCK:
                for f in chunk:
                    _DELIVERED[str(f["alert_id"])] = None
                while len(_DELIVERED) > self.sink.dedup_size:
                    _DELIVERED.popitem(last=False)

    def abort(self) -> None:
        self._pending.clear()

    def _post(self, chunk: Sequence[Mapping[str, Any]], deadline: float) -> bool:
        body = json.dumps(alertmanager_payload(chunk), separators=(",", ":")).encode()
        delay = self.sink.backoff_s
        for attempt in range(1, self.sink.max_attempts + 1):
            self.sink.bucket().acquire()
            try:
                status, retry_after = self._send(body)
            except Exception as exc:  # a request urllib cannot make (http.client.InvalidURL, a non-ASCII path)
                # Its text quotes the URL, which may hold a token: the type only. It would fail again: no retry.
                log.warning("webhook %s: POST not sent (%s)", self.sink.description, type(exc).__name__)
                return False
            if status is not None and 200 <= status < 300:
                _count("posted")
                return True
            retriable = status is None or status == 429 or status >= 500
            if not retriable or attempt == self.sink.max_attempts:
                log.warning("webhook %s: giving up after attempt %d (status %s)", self.sink.description, attempt,
                            status if status is not None else "no response")
                return False
            wait = min(self.sink.backoff_max_s, retry_after if retry_after is not None else delay)
            wait *= 1 + random.uniform(-0.2, 0.2)
            if time.monotonic() + wait >= deadline:
                return False
            _count("retries")
            time.sleep(wait)  # backoff between attempts, not synchronisation
            delay = min(self.sink.backoff_max_s, delay * 2)
        return False

    def _send(self, body: bytes) -> tuple[int | None, float | None]:
        """One POST: (status, Retry-After seconds); status None when no HTTP answer came.

        Raises when the request cannot be made at all (the exception's text may quote the URL).
        """
        request = urllib.request.Request(self.sink.url.get_secret_value(), data=body, method="POST",
                                         headers={"Content-Type": "application/json",
                                                  "User-Agent": "configwatch-webhook"})
        try:
            with urllib.request.urlopen(request, timeout=self.sink.timeout_s) as response:
                return int(response.status), None
        except urllib.error.HTTPError as err:
            retry_after = err.headers.get("Retry-After") if err.headers else None
            try:
                seconds = float(retry_after) if retry_after is not None else None
            except ValueError:
                seconds = None
            return int(err.code), seconds
        except (urllib.error.URLError, OSError, TimeoutError):
            return None, None

"""The job's usage records (request versions per client software name and version), latest per key.

Fed from the compacted usage topic; ``/api/upgrade`` judges them against a target
broker release (``udfs.upgrade.readiness``). Bounded by ``max_keys``: past it, the
record updated longest ago is dropped (a fleet has far fewer software versions).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from configwatch.records import VersionUsage

__all__ = ["UsageTable"]


class UsageTable:
    """Thread-safe: the consumer thread writes, HTTP threads read."""

    def __init__(self, max_keys: int = 5_000) -> None:
        self.max_keys = max_keys
        self._lock = threading.Lock()
        self._records: OrderedDict[str, VersionUsage] = OrderedDict()

    def apply(self, key: str, record: VersionUsage | None) -> bool:
        """Store ``record`` under ``key`` (None: a tombstone removes it); True when something changed."""
        with self._lock:
            if record is None:
                return self._records.pop(key, None) is not None
            if self._records.get(key) == record:
                return False
            self._records[key] = record
            self._records.move_to_end(key)
            while len(self._records) > self.max_keys:
                self._records.popitem(last=False)
            return True

    def records(self) -> list[VersionUsage]:
        with self._lock:
            return list(self._records.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

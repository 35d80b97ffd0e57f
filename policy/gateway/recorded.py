"""The pushes the gateway recorded, so that a client's retry is answered again, not recorded twice.

A client that gets no answer in time retries its push, often on a new
connection (the KIP: clients retry on network errors), while the gateway may
already have handed the first request to the policy. The KIP hands the policy
one push per client instance, so the gateway remembers, per client instance id,
a keyed digest of the last push it recorded and the answer it gave. The same
push from the same instance within ``window_s`` gets that answer again and
does not reach the policy; another push from that instance is processed as
usual. Only a keyed digest is kept, never a value; a request without a client
instance id is not remembered. Bounded: the least recently recorded instances
go first.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from policy.api import ClientConfig

__all__ = ["RecordedAnswer", "RecordedPushes"]

RETRY_WINDOW_S = 300.0  # well beyond a client's default.api.timeout.ms (60 s) of retries
MAX_INSTANCES = 100_000


@dataclass(frozen=True, slots=True)
class RecordedAnswer:
    """What the gateway answered a recorded push: NONE, or INVALID_CONFIG with the violation text."""

    error_code: int
    error_message: str | None


class RecordedPushes:
    """Last recorded push per client instance (keyed digest, answer, when); see the module docstring."""

    def __init__(self, *, window_s: float = RETRY_WINDOW_S, max_instances: int = MAX_INSTANCES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._window_s = window_s
        self._max_instances = max_instances
        self._clock = clock
        self._key = os.urandom(32)  # per process: a digest says nothing outside this gateway
        self._pushes: OrderedDict[str, tuple[bytes, RecordedAnswer, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._pushes)

    def digest(self, configs: Sequence[ClientConfig]) -> bytes:
        """A keyed digest of the entries, in order (length-prefixed, so no two pushes share an encoding)."""
        h = hashlib.blake2b(key=self._key, digest_size=16)
        for c in configs:
            for field in (c.key, c.value or "", c.type, "1" if c.is_default else "0"):
                data = field.encode("utf-8", "surrogatepass")
                h.update(len(data).to_bytes(4, "big"))
                h.update(data)
        return h.digest()

    def answer(self, instance_id: str | None, digest: bytes) -> RecordedAnswer | None:
        """The answer given to this push from ``instance_id`` within the window, else None."""
        if not instance_id:
            return None
        entry = self._pushes.get(instance_id)
        if entry is None or entry[0] != digest or self._clock() - entry[2] > self._window_s:
            return None
        return entry[1]

    def record(self, instance_id: str | None, digest: bytes, answer: RecordedAnswer) -> None:
        """Remember that the push with ``digest`` from ``instance_id`` was recorded and answered ``answer``."""
        if not instance_id:
            return
        self._pushes.pop(instance_id, None)
        self._pushes[instance_id] = (digest, answer, self._clock())
        while len(self._pushes) > self._max_instances:
            self._pushes.popitem(last=False)

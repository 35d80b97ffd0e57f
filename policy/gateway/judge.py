"""The policy off the event loop: pushes are judged on a thread of their own, together when they queue.

Redaction costs milliseconds of CPU a call, most of it fixed (``docs/benchmarks.md``); on the
event loop it would hold up every other connection the gateway carries, proxied traffic included.
``PushJudge.judge`` queues a push and waits for its outcome; one thread hands the policy every push
that queued while the previous call ran (``ClientConfigPolicy.process_all``), so a burst of pushes
pays the fixed cost once. A connection's ``config_push`` is offered to the publisher before its
``connection_closed`` can be: the connection waits for its push's outcome, even when cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from typing import Final

from policy.api import ClientConfigData, ClientConfigPolicy, RequestContext

__all__ = ["MAX_BATCH", "PushJudge"]

log = logging.getLogger(__name__)

MAX_BATCH: Final = 256  # pushes in one call: bounds one call's time and memory
_STOP: Final = None

_Item = tuple[RequestContext, ClientConfigData, asyncio.AbstractEventLoop, "asyncio.Future[str | None]"]


def _settle(future: asyncio.Future[str | None], outcome: str | BaseException | None) -> None:
    if future.done():
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


class PushJudge:
    """Runs ``policy.process_all`` on one worker thread for the pushes queued by ``judge``."""

    def __init__(self, policy: ClientConfigPolicy) -> None:
        self._policy = policy
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None  # started by the first push
        self._pending = 0  # pushes handed over and not yet answered (the event loop's count)

    async def judge(self, context: RequestContext, data: ClientConfigData) -> str | None:
        """The push's violation or None; raises what the policy raised for it."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="configwatch-push-judge", daemon=True)
            self._thread.start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str | None] = loop.create_future()
        self._queue.put((context, data, loop, future))
        self._pending += 1
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            # The gateway is stopping: let the push be offered before the connection publishes its close.
            await asyncio.wait([future])
            raise
        finally:
            self._pending -= 1

    def pending(self) -> int:
        """Pushes waiting for the policy or being judged."""
        return self._pending

    def close(self) -> None:
        """Judge what is queued, then stop the thread."""
        if self._thread is not None:
            self._queue.put(_STOP)
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            batch = [item]
            stopping = False
            while len(batch) < MAX_BATCH:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is _STOP:
                    stopping = True
                    break
                batch.append(more)
            self._judge(batch)
            if stopping:
                return

    def _judge(self, batch: list[_Item]) -> None:
        outcomes: list[str | BaseException | None]
        try:
            outcomes = list(self._policy.process_all([(context, data) for context, data, _, _ in batch]))
            if len(outcomes) != len(batch):
                raise RuntimeError(f"process_all returned {len(outcomes)} outcomes for {len(batch)} pushes")
        except Exception as exc:  # a plugin's failure fails its pushes, never the thread
            log.error("ClientConfigPolicy.process_all() raised %s on %d pushes", type(exc).__name__, len(batch))
            outcomes = [exc] * len(batch)
        for (_, _, loop, future), outcome in zip(batch, outcomes, strict=True):
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for this answer
                loop.call_soon_threadsafe(_settle, future, outcome)

"""Drive a simulated fleet: over TCP through a real gateway, or straight into a policy (``direct``).

Over TCP every client connects, performs ApiVersions, pushes its configuration
(if its release implements PushConfig) with the real client (``policy.client``),
keeps the connection open for its hold time, and disconnects. Starts are paced
at ``rate`` clients per second (0: as fast as ``concurrency`` allows).

The report counts each client's outcome. ``attempted`` is every client that
tried to push; each attempted push is ``accepted``/``violation`` (recorded by
the gateway), ``rejected`` (refused: CONFIG_TOO_LARGE, INVALID_REQUEST) or
``failed`` (retries exhausted).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from policy.api import ClientConfigData, ClientConfigPolicy, RequestContext
from policy.client import ACCEPTED, FAILED, REJECTED, VIOLATION, push_config_async
from policy.exceptions import PolicyUnavailableError, PolicyViolationError
from policy.session import HandshakeRejectedError, PushSession
from policy.simulator.fleet import SimulatedClient, fleet_pushes
from policy.simulator.progress import Progress

__all__ = ["RunOptions", "SimulationReport", "run_direct", "run_over_tcp"]

CONNECTED = "connection_only"       # a release without PushConfig: ApiVersions, hold, close
CONNECT_FAILED = "connection_failed"
DIRECT_RETRY_S = 30.0  # how long a direct push keeps retrying a policy that cannot record it yet
DIRECT_RETRY_BACKOFF_S = 0.1
ATTEMPT_STATUSES = (ACCEPTED, VIOLATION, REJECTED, FAILED)


@dataclass(frozen=True, slots=True)
class RunOptions:
    """Pacing and patience of a run."""

    rate: float = 0.0
    concurrency: int = 200
    timeout_s: float = 30.0
    request_timeout_s: float = 10.0
    hold: bool = True


@dataclass(frozen=True)
class SimulationReport:
    """Per-client outcomes and the totals derived from them."""

    outcomes: dict[int, str]
    duration_s: float
    mode: str
    by_family: dict[str, int] = field(default_factory=dict)
    misconfigured: int = 0
    leaking: int = 0

    @property
    def statuses(self) -> Counter[str]:
        return Counter(self.outcomes.values())

    @property
    def attempted(self) -> int:
        return sum(self.statuses[s] for s in ATTEMPT_STATUSES)

    def count(self, status: str) -> int:
        return self.statuses[status]

    def lines(self) -> list[str]:
        s = self.statuses
        rate = len(self.outcomes) / self.duration_s if self.duration_s > 0 else 0.0
        return [
            f"simulated {len(self.outcomes)} clients ({self.mode}) in {self.duration_s:.1f}s ({rate:.0f}/s)",
            "families: " + ", ".join(f"{k} {v}" for k, v in sorted(self.by_family.items())),
            f"misconfigured {self.misconfigured}, leaking {self.leaking}",
            f"pushes attempted {self.attempted}: accepted {s[ACCEPTED]}, with violation {s[VIOLATION]}, "
            f"rejected {s[REJECTED]}, failed {s[FAILED]}",
            f"connections only (no PushConfig in that release) {s[CONNECTED]}, "
            f"nothing to send {s['nothing_to_send']}, connection failures {s[CONNECT_FAILED]}",
        ]


def _report(fleet: Sequence[SimulatedClient], outcomes: dict[int, str], started: float, mode: str
            ) -> SimulationReport:
    return SimulationReport(outcomes=outcomes, duration_s=time.monotonic() - started, mode=mode,
                            by_family=dict(Counter(c.family for c in fleet)),
                            misconfigured=sum(1 for c in fleet if c.misconfigurations),
                            leaking=sum(1 for c in fleet if c.leaks))


async def _connection_only(address: tuple[str, int], client: SimulatedClient, options: RunOptions) -> str:
    try:
        session = await PushSession.open(address, client.identity, options.request_timeout_s)
    except HandshakeRejectedError:
        return REJECTED
    except Exception:  # network errors, timeouts, undecodable answers: the client could not connect
        return CONNECT_FAILED
    try:
        if options.hold:
            await asyncio.sleep(client.hold_ms / 1000.0)
    finally:
        await session.close()
    return CONNECTED


async def _one(address: tuple[str, int], client: SimulatedClient, options: RunOptions) -> str:
    if not client.pushes:
        return await _connection_only(address, client, options)

    async def hold() -> None:
        if options.hold:
            await asyncio.sleep(client.hold_ms / 1000.0)

    push_options = client.options(timeout_s=options.timeout_s, request_timeout_s=options.request_timeout_s)
    result = await push_config_async(address, client.configs, client.identity, push_options, hold=hold)
    return result.status


async def run_over_tcp(address: tuple[str, int], fleet: Sequence[SimulatedClient], options: RunOptions,
                       progress: Progress | None = None) -> SimulationReport:
    """Run the fleet against the gateway at ``address``."""
    started = time.monotonic()
    gate = asyncio.Semaphore(max(1, options.concurrency))
    outcomes: dict[int, str] = {}

    async def run(i: int, client: SimulatedClient) -> None:
        if options.rate > 0:
            delay = started + i / options.rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        async with gate:
            outcomes[client.index] = await _one(address, client, options)
        if progress is not None:
            progress.advance()

    await asyncio.gather(*(run(i, c) for i, c in enumerate(fleet)))
    if progress is not None:
        progress.close()
    return _report(fleet, outcomes, started, "tcp")


def _process_retrying(policy: ClientConfigPolicy, ctx: RequestContext, data: ClientConfigData) -> str:
    """One push into ``policy.process``, retried as a client retries a retriable error, within a deadline."""
    deadline = time.monotonic() + DIRECT_RETRY_S
    while True:
        try:
            return VIOLATION if policy.process(ctx, data) else ACCEPTED
        except PolicyViolationError:
            return VIOLATION
        except PolicyUnavailableError:
            if time.monotonic() >= deadline:
                return FAILED
            time.sleep(DIRECT_RETRY_BACKOFF_S)


def run_direct(policy: ClientConfigPolicy, fleet: Sequence[SimulatedClient], *, broker_id: int = 0,
               progress: Progress | None = None) -> SimulationReport:
    """Hand each pushing client's configuration straight to ``policy.process`` (no gateway, no sockets)."""
    started = time.monotonic()
    outcomes = {c.index: CONNECTED if not c.pushes else "nothing_to_send" for c in fleet}
    pushes = fleet_pushes(fleet, start_ms=time.time_ns() // 1_000_000, broker_id=broker_id, max_bytes=None,
                          check_software=False)
    for ctx, data in pushes:
        index = int(ctx.connection_id.rsplit("-", 1)[1])
        outcomes[index] = _process_retrying(policy, ctx, data)
        if progress is not None:
            progress.advance()
    if progress is not None:
        progress.advance(len(fleet) - progress.done)
        progress.close()
    return _report(fleet, outcomes, started, "direct")

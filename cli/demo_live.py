"""The demo's live phase: a simulated fleet that stays connected, the job following it, the dashboard.

:class:`ResidentFleet` drives the simulator's clients through a real PushConfig
gateway (handshake, push, then hold the connection) and keeps them connected
until stopped; stopping cancels every hold, so each client closes its
connection and the gateway publishes the ``connection_closed`` events before
it shuts down. :func:`serve_live` runs that fleet, a real kafka-python producer
through the gateway in proxy mode (``cli.demo_proxy``), the streaming
job in continuous mode and the dashboard, prints the live page's URL once the page
shows the fleet, and runs until SIGINT/SIGTERM. The integration test
(``tests/test_dashboard_e2e.py``) uses the same parts.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack, suppress
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

from cli.demo_proxy import ProxiedProducer
from configwatch.settings import Settings
from policy.gateway import running_gateway
from policy.simulator import FleetSpec, RunOptions, SimulatedClient, generate_fleet, run_over_tcp
from sinks.dashboard import DashboardError, DashboardService

__all__ = ["LIVE_HOLD_MS", "LIVE_SEED", "ResidentFleet", "serve_live"]

log = logging.getLogger(__name__)

LIVE_HOLD_MS = 7 * 24 * 3600 * 1000  # "until stopped": a week, cancelled at stop
LIVE_SEED = 17  # not the batch phase's seed: the live clients are new instances
_FLEET_WAIT_S = 180.0


class ResidentFleet:
    """Simulated clients that connect through a gateway, push, and stay connected until :meth:`stop`."""

    def __init__(self, settings: Settings, bootstrap_servers: str, spec: FleetSpec, *, rate: float = 0.0) -> None:
        self.clients: list[SimulatedClient] = generate_fleet(
            replace(spec, hold_ms_min=LIVE_HOLD_MS, hold_ms_max=LIVE_HOLD_MS))
        self._settings = settings
        self._bootstrap = bootstrap_servers
        self._options = RunOptions(rate=rate, concurrency=max(1, len(self.clients)), hold=True)
        self._stack = ExitStack()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._run: Any = None

    def start(self) -> tuple[str, int]:
        """Start the gateway and connect the fleet (in the background); returns the gateway's address."""
        handle = self._stack.enter_context(running_gateway(self._settings, self._bootstrap, gateway_port=0,
                                                           gateway_metrics_port=-1))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="resident-fleet", daemon=True)
        self._thread.start()
        self._run = asyncio.run_coroutine_threadsafe(run_over_tcp(handle.address, self.clients, self._options),
                                                     self._loop)
        return handle.address

    def stop(self, timeout_s: float = 60.0) -> None:
        """Disconnect every client (cancelling its hold), then stop the gateway, which flushes its events."""
        loop, run = self._loop, self._run
        if loop is not None and run is not None:
            loop.call_soon_threadsafe(run.cancel)
            with suppress(Exception):
                asyncio.run_coroutine_threadsafe(_settle(), loop).result(timeout_s)
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(timeout_s)
            loop.close()
        self._loop = self._run = self._thread = None
        self._stack.close()


async def _settle() -> None:
    """Wait until every other task on this loop (the clients closing their connections) has ended."""
    current = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t is not current]
    await asyncio.gather(*pending, return_exceptions=True)


def _start_dashboard(settings: Settings, bootstrap: str) -> DashboardService:
    from cli.dashboard_cmd import config_from

    config = config_from(settings, bootstrap)
    try:
        return DashboardService(config).start()
    except DashboardError as exc:
        if config.port == 0:
            raise
        log.warning("%s; using a free port instead", exc)
        return DashboardService(replace(config, port=0)).start()


def _wait_for_fleet(service: DashboardService, target: int, deadline_s: float,
                    job_ended: threading.Event) -> int:
    """Block until the dashboard counts ``target`` open connections, the job ends, or the deadline."""
    deadline = time.monotonic() + deadline_s
    seen = 0
    while time.monotonic() < deadline and not job_ended.is_set():
        seen = service.state.fleet.totals().connections
        if seen >= target:
            break
        service.state.changes.since(service.state.changes.seq, 1.0)  # wakes on the next change
    return seen


def _quiet_background_logs() -> None:
    """Keep Spark's per-batch warnings and client chatter off the terminal while the demo serves."""
    from pyspark.sql import SparkSession

    for name in ("kafka", "py4j", "policy"):
        logging.getLogger(name).setLevel(logging.ERROR)
    session = SparkSession.getActiveSession()
    if session is not None:
        session.sparkContext.setLogLevel("ERROR")


def serve_live(settings: Settings, bootstrap: str, checkpoint_dir: Path, clients: int,
               out: Callable[[str], None] = print) -> None:
    """Run the live phase until SIGINT/SIGTERM; the last line printed is the live page's URL."""
    from streaming.job import JobOptions, JobWaiter, StreamingJob  # Spark loads only here

    live = replace(settings, checkpoint_dir=checkpoint_dir, source="kafka", sink="kafka", trigger="continuous")
    job = StreamingJob(live, JobOptions.from_settings(live), bootstrap, out=log.debug)
    fleet = ResidentFleet(settings, bootstrap, FleetSpec(clients=clients, seed=LIVE_SEED),
                          rate=max(20.0, clients / 10))

    def on_signal(signum: int, frame: FrameType | None) -> None:
        job.request_stop()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    dashboard: DashboardService | None = None
    waiter: JobWaiter | None = None
    real = ProxiedProducer(settings, bootstrap)
    try:
        dashboard = _start_dashboard(settings, bootstrap)
        job.start()
        waiter = job.wait_in_background()
        fleet.start()
        proxy = real.start()
        # Most of the fleet connects; a few are refused by design (bad software names, oversized pushes).
        connected = _wait_for_fleet(dashboard, int(0.9 * len(fleet.clients)), _FLEET_WAIT_S, waiter.ended)
        if not waiter.ended.is_set():
            _quiet_background_logs()  # the URL stays the last line on the terminal
            out(f"live: {connected} open connections from {len(fleet.clients)} simulated clients, the job "
                "following them; Ctrl-C stops the demo")
            out(f"live: two real {real.software} producers send to '{real.topic}' through the gateway proxy at "
                f"{proxy} over mutual TLS, one held to TLS 1.1 (configwatch gateway --upstream "
                "--gateway-security-protocol SSL); 'configwatch report security' lists it")
            out(f"open the live page: {dashboard.url}")
        while not waiter.ended.wait(0.5):  # short waits: signals are handled in this (the main) thread
            pass
        if waiter.failure is not None:
            raise waiter.failure
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        real.stop()
        fleet.stop()
        if waiter is not None:
            waiter.stop()
        else:
            job.stop(graceful=False)
        if dashboard is not None:
            dashboard.stop()

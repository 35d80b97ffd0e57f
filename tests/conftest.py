"""Shared fixtures: one real Kafka broker and one Spark session per test run,
unique topic names, and polling with a deadline (never sleeps as synchronisation).

``make test`` runs two pytest-xdist workers: every test module that uses the broker or the Spark
session is scheduled on one worker (``pytest_xdist_make_scheduler``), which runs them all against
one broker and one session, while the other worker runs the tests that need neither.
"""

from __future__ import annotations

import os
import re
import socket
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

REPO = Path(__file__).resolve().parent.parent
OUTPUT_DIR = REPO / "test-output"


def _say(config: pytest.Config, line: str) -> None:
    """Print past pytest's capture, so the run's log shows which real parts it used."""
    capture = config.pluginmanager.get_plugin("capturemanager")
    if capture is None:
        print(line, file=sys.stderr)
        return
    with capture.global_and_fixture_disabled():
        print(f"\n{line}", flush=True)


# A test module that requests the broker or the Spark session: a fixture parameter or ``usefixtures``. One this
# misses still passes, on a broker and a session of its worker's own.
SHARED_FIXTURES = re.compile(r"\b(kafka_broker|kafka_bootstrap|spark)\s*:"
                             r"|usefixtures\([^)]*\b(kafka_broker|kafka_bootstrap|spark)\b")


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under xdist, the test modules that use the run's one broker or one Spark session are one work unit for
    one worker (``make test`` runs two); every other module is a work unit of its own (module caches hold)."""
    from xdist.scheduler import LoadScopeScheduling

    shared = frozenset(p.name for p in Path(__file__).parent.glob("test_*.py")
                       if SHARED_FIXTURES.search(p.read_text(encoding="utf-8")))

    class SharedInOneWorker(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return "shared" if module.rsplit("/", 1)[-1] in shared else module

    return SharedInOneWorker(config, log)


@pytest.fixture(scope="session")
def kafka_broker(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The run's one real KRaft broker (started from the project's jars): PLAINTEXT, and SASL_SSL, SSL and
    SASL_PLAINTEXT listeners (``tests.security_helpers.SecureBroker``) with users whose passwords are planted
    secrets of this run."""
    from configwatch.localkafka import LocalKafka
    from configwatch.localkafka.certs import LocalCA
    from configwatch.localkafka.security import BrokerSecurity
    from tests.security_helpers import REAUTH_MS, SecureBroker, planted_users

    home = tmp_path_factory.mktemp("kafka")
    security = BrokerSecurity(LocalCA(home / "tls"), planted_users(), scram_reauth_ms=REAUTH_MS)
    broker = LocalKafka(home / "broker", security=security)
    info = broker.start()
    _say(request.config, f"[configwatch] Kafka broker (KRaft) listening on {info.bootstrap_servers}, secured "
                         f"listeners {info.listeners}")
    try:
        yield SecureBroker(info, security)
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka_broker: Any) -> str:
    """Bootstrap servers of the run's broker's PLAINTEXT listener."""
    return str(kafka_broker.info.bootstrap_servers)


@pytest.fixture(scope="session")
def spark(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The run's one Spark session, with the Kafka connector attached."""
    from streaming.session import SparkSettings, build_spark_session

    session = build_spark_session(SparkSettings(app_name="configwatch-tests", driver_memory="3g"))
    _say(request.config, f"[configwatch] Spark {session.version} session on {session.sparkContext.master}")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """A factory of unique topic names, so tests sharing the broker never collide."""

    def make(prefix: str = "t") -> str:
        return f"{prefix}-{request.node.name[:40]}-{uuid.uuid4().hex[:8]}".replace("[", "-").replace("]", "")

    return make


@pytest.fixture(scope="session")
def output_dir() -> Path:
    OUTPUT_DIR.mkdir(exist_ok=True)
    return OUTPUT_DIR


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def eventually(check: Callable[[], T | None], *, timeout_s: float = 60.0, interval_s: float = 0.2,
               message: str = "condition") -> T:
    """Poll ``check`` until it returns a truthy value or the deadline passes (checked once more at the deadline)."""
    deadline = time.monotonic() + timeout_s
    while True:
        last = check()
        if last:
            return last
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        time.sleep(min(interval_s, remaining))  # the pause between polls, never past the deadline
    raise AssertionError(f"{message} not reached within {timeout_s}s (last: {last!r})")


os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def roundtrip_classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tests/jvm/ProxyRoundTrip.java`` compiled against kafka-clients (run it with a release's jars)."""
    import shutil
    import subprocess

    from configwatch import jars

    if shutil.which("javac") is None:
        pytest.fail("javac is needed (OpenJDK 17, scripts/system-deps.sh installs it)")
    out = tmp_path_factory.mktemp("proxy-roundtrip")
    classpath = ":".join(str(p) for p in jars.client_jars("3.9.0"))
    source = Path(__file__).parent / "jvm" / "ProxyRoundTrip.java"
    subprocess.run(["javac", "-d", str(out), "-cp", classpath, str(source)], check=True, capture_output=True)
    return out

"""Start, probe and stop one combined broker+controller KRaft node."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

from configwatch.errors import SetupError, UsageError
from configwatch.jars import broker_jars
from configwatch.localkafka.properties import log4j2_properties, server_properties
from configwatch.localkafka.security import SECURE_PROTOCOLS, BrokerSecurity
from configwatch.reachability import unanswered

__all__ = ["BrokerInfo", "LocalKafka", "wait_until_ready"]

log = logging.getLogger(__name__)

_STATE_FILE = "broker.json"


@dataclass(frozen=True)
class BrokerInfo:
    """What a running local broker wrote about itself."""

    pid: int
    port: int
    controller_port: int
    data_dir: str
    listeners: dict[str, int] = field(default_factory=dict)  # the secured listeners' ports, by security protocol

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def bootstrap_for(self, protocol: str) -> str:
        """The bootstrap address of the listener speaking ``protocol`` (``PLAINTEXT``, ``SASL_SSL``, ...)."""
        return self.bootstrap_servers if protocol == "PLAINTEXT" else f"127.0.0.1:{self.listeners[protocol]}"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _free_port_but(taken: set[int]) -> int:
    """A free port not in ``taken``, which it joins."""
    port = _free_port()
    while port in taken:
        port = _free_port()
    taken.add(port)
    return port


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill(0); check its state where /proc exists.
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():
        return stat.read_text().split(") ", 1)[-1][:1] != "Z"
    return True


def wait_until_ready(bootstrap: str, deadline_s: float, proc: subprocess.Popen[bytes] | None = None,
                     log_file: Path | None = None) -> None:
    """Poll the broker with a real request until it answers or the deadline passes."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            tail = log_file.read_text(errors="replace")[-1500:] if log_file and log_file.exists() else ""
            raise SetupError(f"the Kafka broker exited with code {proc.returncode}; log tail: {tail!r}")
        if unanswered(bootstrap, 5.0) is None:
            return
        time.sleep(0.3)
    raise SetupError(f"no Kafka broker answered at {bootstrap} within {deadline_s:.0f}s")


class LocalKafka:
    """One local KRaft broker whose files live under ``home`` (config, data, log, state)."""

    def __init__(self, home: Path, *, port: int | None = None, heap: str = "768m",
                 security: BrokerSecurity | None = None) -> None:
        self.home = Path(home)
        self.port = port
        self.heap = heap
        self.security = security  # secured listeners beside PLAINTEXT (configwatch.localkafka.security)
        self._proc: subprocess.Popen[bytes] | None = None

    # -- state -----------------------------------------------------------------
    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    @property
    def log_file(self) -> Path:
        return self.home / "broker.log"

    def info(self) -> BrokerInfo | None:
        """The running broker's info, or None when none runs from this home."""
        state = self.home / _STATE_FILE
        if not state.exists():
            return None
        info = BrokerInfo(**json.loads(state.read_text()))
        if not _pid_alive(info.pid):
            state.unlink(missing_ok=True)
            return None
        return info

    # -- lifecycle ---------------------------------------------------------------
    def start(self, *, ready_timeout_s: float = 90.0) -> BrokerInfo:
        """Start the broker in the background and return once it answers requests."""
        running = self.info()
        if running is not None:
            raise UsageError(
                f"a local Kafka broker is already running at {running.bootstrap_servers} "
                f"(pid {running.pid}); stop it with 'configwatch kafka stop'"
            )
        java = self._java()
        jars = broker_jars()
        port = self.port or _free_port()
        taken = {port}
        controller_port = _free_port_but(taken)
        secured = {p: _free_port_but(taken) for p in SECURE_PROTOCOLS} if self.security else {}
        extra = self.security.properties(port, controller_port, secured) if self.security else None
        props, log4j = self.home / "server.properties", self.home / "log4j2.properties"
        try:
            self.home.mkdir(parents=True, exist_ok=True)
            props.write_text(server_properties(port, controller_port, self.data_dir, extra))
            log4j.write_text(log4j2_properties())
        except OSError as exc:
            raise SetupError(f"cannot write the local broker's files under {self.home} ({exc.strerror}); "
                             "--kafka-home takes a writable directory") from None
        classpath = os.pathsep.join(str(j) for j in jars)
        self._format_once(java, classpath, props)
        cmd = [
            java, f"-Xmx{self.heap}", "-Xms256m", "-XX:+UseG1GC",
            "-Djava.awt.headless=true", f"-Dlog4j2.configurationFile={log4j}",
            "-cp", classpath, "kafka.Kafka", str(props),
        ]
        with self.log_file.open("ab") as out:
            self._proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        info = BrokerInfo(self._proc.pid, port, controller_port, str(self.data_dir), secured)
        try:
            wait_until_ready(info.bootstrap_servers, ready_timeout_s, self._proc, self.log_file)
        except SetupError:
            self._kill(self._proc.pid)
            raise
        (self.home / _STATE_FILE).write_text(json.dumps(asdict(info)))
        log.info("Kafka broker ready at %s (pid %s)", info.bootstrap_servers, info.pid)
        return info

    def stop(self, *, timeout_s: float = 30.0) -> bool:
        """Stop the broker (controlled shutdown, then kill). False when none was running."""
        info = self.info()
        if info is None:
            return False
        os.kill(info.pid, signal.SIGTERM)
        end = time.monotonic() + timeout_s
        while time.monotonic() < end and _pid_alive(info.pid):
            self._reap()
            time.sleep(0.2)
        if _pid_alive(info.pid):
            log.warning("broker pid %s did not stop in %.0fs; killing it", info.pid, timeout_s)
            self._kill(info.pid)
        self._reap()
        (self.home / _STATE_FILE).unlink(missing_ok=True)
        return True

    # -- helpers -------------------------------------------------------------------
    @staticmethod
    def _java() -> str:
        home = os.environ.get("JAVA_HOME")
        candidate = Path(home) / "bin" / "java" if home else None
        java = str(candidate) if candidate and candidate.exists() else shutil.which("java")
        if java is None:
            raise SetupError("Java is not installed (no 'java' on PATH or in JAVA_HOME); Kafka needs Java 17+")
        return java

    def _format_once(self, java: str, classpath: str, props: Path) -> None:
        if (self.data_dir / "meta.properties").exists():
            return
        cluster_id = _kraft_cluster_id()
        # "--cluster-id=ID" in one argument: a base64url id may start with "-", which "-t ID" reads as a flag.
        cmd = [java, "-Xmx256m", "-cp", classpath, "kafka.tools.StorageTool", "format",
               f"--cluster-id={cluster_id}", "-c", str(props), *(self.security.format_args() if self.security else [])]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            said = (proc.stderr or proc.stdout).strip()[-500:]
            for password in self.security.users.values() if self.security else ():  # its command line held them
                said = said.replace(password.get_secret_value(), "<password>")
            raise SetupError(f"formatting Kafka storage failed: {said}")

    def _reap(self) -> None:
        if self._proc is not None:
            self._proc.poll()

    def _kill(self, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        if self._proc is not None:
            self._proc.wait(timeout=10)


def _kraft_cluster_id() -> str:
    """A random KRaft cluster id: 16 random bytes, URL-safe base64 without padding."""
    import base64

    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")

"""docker-compose.yml is a valid Compose file (checked by a real Compose client)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_compose_file_is_valid() -> None:
    compose = shutil.which("docker-compose")
    assert compose, "docker-compose missing: `make test` installs it (scripts/system-deps.sh)"
    out = subprocess.run([compose, "-f", str(REPO / "docker-compose.yml"), "config"],
                         capture_output=True, text=True, check=False, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "kafka" in out.stdout and "configwatch-job" in out.stdout

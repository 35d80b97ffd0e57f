"""docker-compose.yml is a valid Compose file (checked by a real Compose client); the image holds every package."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_compose_file_is_valid() -> None:
    compose = shutil.which("docker-compose")
    assert compose, "docker-compose missing: `make test` installs it (scripts/system-deps.sh)"
    out = subprocess.run([compose, "-f", str(REPO / "docker-compose.yml"), "config"],
                         capture_output=True, text=True, check=False, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "kafka" in out.stdout and "configwatch-job" in out.stdout
    assert "configwatch-gateway" in out.stdout and "--gateway-security-protocol" in out.stdout  # the TLS gateway


def test_the_image_copies_every_package_the_command_needs() -> None:
    """No Docker engine here: what the Dockerfile copies must cover pyproject's packages (cli holds the entry point)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    packages = {p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    copied = {line.split()[1] for line in (REPO / "Dockerfile").read_text().splitlines() if line.startswith("COPY ")}
    assert packages <= copied, f"the Dockerfile does not COPY {sorted(packages - copied)}"
    assert project["project"]["scripts"]["configwatch"].split(".")[0] in copied

"""The codebase stays ruff- and mypy-clean (CI runs this with the rest)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def test_ruff_clean() -> None:
    # No cache: a stale cache once hid import-order errors that a fresh clone reports.
    cmd = [str(BIN / "ruff"), "check", "--no-cache", "."]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout[-3000:]


def test_mypy_clean() -> None:
    out = subprocess.run([str(BIN / "mypy")], cwd=REPO, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout[-3000:]

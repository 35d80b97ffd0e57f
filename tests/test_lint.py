"""The codebase stays ruff- and mypy-clean (CI runs this with the rest)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def test_ruff_clean() -> None:
    out = subprocess.run([str(BIN / "ruff"), "check", "."], cwd=REPO, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout[-3000:]


def test_mypy_clean() -> None:
    out = subprocess.run([str(BIN / "mypy")], cwd=REPO, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout[-3000:]

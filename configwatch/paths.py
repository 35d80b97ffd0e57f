"""Where configwatch keeps things outside git: the cache root and the checkpoint root."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["REPO_ROOT", "cache_dir", "default_checkpoint_root"]

REPO_ROOT = Path(__file__).resolve().parent.parent


def cache_dir() -> Path:
    """``$CONFIGWATCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/configwatch``, else ``~/.cache/configwatch``."""
    explicit = os.environ.get("CONFIGWATCH_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "configwatch"


def default_checkpoint_root() -> Path:
    """``checkpoints/`` of the source tree (its contents are ignored by git)."""
    return REPO_ROOT / "checkpoints"

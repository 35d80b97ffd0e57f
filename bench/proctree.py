"""The process tree under a process, from ``/proc`` (Linux): what ``bench.memory`` and ``bench.cpu_use`` count."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cpu_seconds", "descendants"]

_PROC = Path("/proc")
_TICK = os.sysconf("SC_CLK_TCK")


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def descendants(root: int) -> list[int]:
    """Every process under ``root`` (children, their children, ...), not ``root`` itself."""
    tree, out, todo = _children(), [], [root]
    while todo:
        for child in tree.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds process ``pid`` has used so far (all its threads)."""
    fields = (_PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK

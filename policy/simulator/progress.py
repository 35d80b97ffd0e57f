"""A dependency-free progress bar for the simulator (a redrawn line on a terminal, else every 10%)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """Counts finished clients and shows the rate; silent when ``stream`` is None."""

    def __init__(self, total: int, stream: TextIO | None = sys.stderr, width: int = 30) -> None:
        self.total = max(total, 1)
        self.done = 0
        self._stream = stream
        self._width = width
        self._tty = bool(stream is not None and stream.isatty())
        self._started = time.monotonic()
        self._next_pct = 10

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self._stream is None:
            return
        pct = 100 * self.done // self.total
        if self._tty:
            self._draw("\r")
        elif pct >= self._next_pct or self.done == self.total:
            self._next_pct = (pct // 10 + 1) * 10
            self._draw("")
            self._stream.write("\n")
        self._stream.flush()

    def _draw(self, prefix: str) -> None:
        assert self._stream is not None
        filled = self._width * self.done // self.total
        elapsed = max(time.monotonic() - self._started, 1e-6)
        self._stream.write(f"{prefix}[{'#' * filled}{'.' * (self._width - filled)}] "
                           f"{self.done}/{self.total} clients  {self.done / elapsed:.0f}/s")

    def close(self) -> None:
        if self._stream is not None and self._tty:
            self._stream.write("\n")
            self._stream.flush()

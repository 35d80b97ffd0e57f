"""Go ``time.Duration`` text read as milliseconds: how the rules read sarama and franz-go timeouts.

sarama's ``Config`` fields and franz-go's kgo options take a ``time.Duration``, and a
push shows it as Go prints one (``Duration.String``): ``10s``, ``500ms``, ``1m30s``,
``1.5s``, ``2h0m0s``, ``500µs``. The anomaly rules compare such a value with Java's
``*.ms`` keys (``session.timeout.ms`` for ``Consumer.Group.Session.Timeout``), so
:func:`go_duration_ms` turns it into milliseconds, following ``time.ParseDuration``:
an optional sign, then one or more decimal numbers each with a unit ``ns``, ``us``
(or ``µs``/``μs``), ``ms``, ``s``, ``m`` or ``h``; a bare ``0`` is zero. A bare
non-zero number is not Go's notation and stays unknown (it could be nanoseconds, as
``encoding/json`` writes a ``Duration``, or milliseconds). :func:`go_durations_ms`
reads a whole column, parsing each distinct text once.
"""

from __future__ import annotations

import functools
import re
from typing import Final

import numpy as np
import pandas as pd

__all__ = ["COMPONENT", "GO_DURATION", "MS_PER_UNIT", "go_duration_ms", "go_durations_ms"]

MS_PER_UNIT: Final = {"ns": 1e-6, "us": 1e-3, "\u00b5s": 1e-3, "\u03bcs": 1e-3, "ms": 1.0, "s": 1e3,
                       "m": 60e3, "h": 3_600e3}
_NUMBER = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)"
_UNIT = "(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h)"  # ms before m and s: alternation tries them in order
GO_DURATION: Final = re.compile(rf"[-+]?(?:{_NUMBER}{_UNIT})+|[-+]?0")
COMPONENT: Final = re.compile(rf"({_NUMBER})({_UNIT})")


@functools.lru_cache(maxsize=4_096)
def go_duration_ms(text: str) -> float | None:
    """Milliseconds of a Go duration text (``1m30s`` -> 90000.0), or None when it is not one."""
    text = text.strip()
    if not GO_DURATION.fullmatch(text):
        return None
    sign = -1.0 if text.startswith("-") else 1.0
    total = sum(float(number) * MS_PER_UNIT[unit] for number, unit in COMPONENT.findall(text))
    return sign * total


def go_durations_ms(values: np.ndarray) -> np.ndarray:
    """Floats (ms) of an object array of Go duration texts, any shape; NaN where a value is not one."""
    series = pd.Series(values.ravel(), dtype=object)
    parsed = {t: go_duration_ms(t) for t in series.dropna().unique() if isinstance(t, str)}
    return series.map(parsed).astype(float).to_numpy().reshape(values.shape)

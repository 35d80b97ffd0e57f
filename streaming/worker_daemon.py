"""Spark's Python worker daemon, with the workers' libraries and the GX suite loaded once, then frozen.

Spark starts ``python -m <spark.python.daemon.module>`` once per executor and
forks every Python worker from it. Loaded here, pandas, pyarrow, the ``udfs``
modules and the ready GX suite (``udfs.expectations.get_validator``) are shared
by every forked worker instead of imported and built in each. ``gc.freeze()``
then moves those objects out of the collector's reach: without it every full
collection in a worker walks (and so copies) the daemon's pages, which made each
later Python stage slower than with Spark's own daemon (docs/benchmarks.md, "The worker daemon").
Before that, :func:`lean_path` takes the archives the workers need not import from off
their path (see there). The session factory sets ``spark.python.daemon.module`` to this module.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import zipfile
import zipimport

__all__ = ["lean_path"]

log = logging.getLogger(__name__)


def _installed_pyspark_zip(entry: str, path: list[str]) -> bool:
    """``entry`` is ``<site>/pyspark/python/lib/pyspark.zip`` and ``<site>`` is on ``path``: a pip install's own zip."""
    package = os.path.dirname(os.path.dirname(os.path.dirname(entry)))
    site = os.path.realpath(os.path.dirname(package))
    return (os.path.basename(entry) == "pyspark.zip" and os.path.basename(package) == "pyspark"
            and os.path.isfile(os.path.join(package, "__init__.py"))
            and any(os.path.realpath(p) == site for p in path if p != entry))


def _jar_without_python(entry: str) -> bool:
    """``entry`` is a Java archive with no Python module in it (Spark adds its core jar to the workers' path)."""
    if not entry.endswith(".jar") or not os.path.isfile(entry):
        return False
    try:
        with zipfile.ZipFile(entry) as jar:
            return not any(name.endswith((".py", ".pyc")) for name in jar.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def lean_path(path: list[str]) -> list[str]:
    """``path`` without the archives the workers need not import from.

    Every Python task calls ``importlib.invalidate_caches()``, and before Python 3.12 every
    ``zipimporter`` then reads its archive's whole directory again. Spark puts two big ones on
    the workers' path: its core jar (5,261 entries, no Python in it) and ``pyspark.zip``
    (1,220), which a pip install also holds unzipped beside it. Together 0.10-0.28 s per task,
    measured in a worker (docs/benchmarks.md). A zip of another Spark (a cluster's) stays.
    """
    return [e for e in path if not (_installed_pyspark_zip(e, path) or _jar_without_python(e))]


def _forget_importers(kept: list[str]) -> None:
    """Drop the cached importers of archives no longer on the path (``invalidate_caches`` visits all of them)."""
    for key, finder in list(sys.path_importer_cache.items()):
        if isinstance(finder, zipimport.zipimporter) and finder.archive not in kept:
            del sys.path_importer_cache[key]


def _preload() -> None:
    try:
        import pandas  # noqa: F401
        import pyarrow as pa
        import pyspark.sql.pandas.serializers
        import pyspark.sql.streaming.stateful_processor  # noqa: F401

        import streaming.pipeline  # noqa: F401  (udfs.pipeline, the rules)
        import udfs.steps  # noqa: F401  (the keyed step, which streaming.keyed imports when first called)
        from configwatch.samples import sample_events
        from udfs.decode import decode_values
        from udfs.expectations import get_validator

        # Build the suite, then run it once: GX's first validation imports and caches more.
        sample = pa.array([e.to_json().encode() for e in sample_events(3)], pa.binary())
        decode_values(sample, validator=get_validator())
    except Exception:  # a worker loads what it needs lazily instead; never keep the daemon from starting
        log.exception("could not preload the workers' libraries")


if __name__ == "__main__":
    sys.path[:] = lean_path(sys.path)  # before anything imports pyspark
    _forget_importers(sys.path)
    _preload()
    gc.freeze()
    from pyspark.daemon import manager

    manager()

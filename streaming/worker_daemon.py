"""Spark's Python worker daemon, with the workers' libraries and the GX suite loaded once, then frozen.

Spark starts ``python -m <spark.python.daemon.module>`` once per executor and
forks every Python worker from it. Loaded here, pandas, pyarrow, the ``udfs``
modules and the ready GX suite (``udfs.expectations.get_validator``) are shared
by every forked worker instead of imported and built in each. ``gc.freeze()``
then moves those objects out of the collector's reach: without it every full
collection in a worker walks (and so copies) the daemon's pages, which made each
later Python stage slower than with Spark's own daemon (``bench/daemon_choice.py``).
The session factory sets ``spark.python.daemon.module`` to this module.
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger(__name__)


def _preload() -> None:
    try:
        import pandas  # noqa: F401
        import pyarrow as pa
        import pyspark.sql.pandas.serializers
        import pyspark.sql.streaming.stateful_processor  # noqa: F401

        import streaming.pipeline  # noqa: F401  (udfs.pipeline, udfs.steps, the rules)
        from configwatch.samples import sample_events
        from udfs.decode import decode_values
        from udfs.expectations import get_validator

        # Build the suite, then run it once: GX's first validation imports and caches more.
        sample = pa.array([e.to_json().encode() for e in sample_events(3)], pa.binary())
        decode_values(sample, validator=get_validator())
    except Exception:  # a worker loads what it needs lazily instead; never keep the daemon from starting
        log.exception("could not preload the workers' libraries")


if __name__ == "__main__":
    _preload()
    gc.freeze()
    from pyspark.daemon import manager

    manager()

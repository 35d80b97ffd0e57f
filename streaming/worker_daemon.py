"""Spark's Python worker daemon, with the decode stage's heavy imports done once before it forks workers.

Spark starts ``python -m <spark.python.daemon.module>`` once per executor and
forks every Python worker from it. Great Expectations takes seconds to import
and to build its context; done here, every forked worker inherits the ready
suite (``udfs.expectations.get_validator``) instead of paying for it again.
The session factory sets ``spark.python.daemon.module`` to this module.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def _preload() -> None:
    try:
        import pyarrow as pa

        from configwatch.samples import sample_events
        from udfs.decode import decode_values
        from udfs.expectations import get_validator

        # Build the suite, then run it once: GX's first validation imports and caches more.
        sample = pa.array([e.to_json().encode() for e in sample_events(3)], pa.binary())
        decode_values(sample, validator=get_validator())
    except Exception:  # a worker builds it lazily instead; never keep the daemon from starting
        log.exception("could not preload the GX suite")


if __name__ == "__main__":
    _preload()
    from pyspark.daemon import manager

    manager()

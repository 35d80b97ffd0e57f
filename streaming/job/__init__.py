"""The streaming job (``configwatch run``): one pipeline for the Kafka and replay sources.

Module map:

- ``options``: ``--source``/``--sink``/trigger flags -> :class:`JobOptions` (checked up front);
- ``preflight``: Kafka answers within a deadline, before Spark starts;
- ``outputs``: the output streams (the plug-in point for detection and gauges) and
  how their rows become sink records;
- ``epochs``: the ``foreachBatch`` writer that drives a sink per partition;
- ``accounting``: decode statistics per batch and the progress line;
- ``runner``: starts one query per output, waits, stops gracefully.
"""

from streaming.job.exceptions import BrokerUnreachableError, JobError, JobUsageError, StopRequestedError
from streaming.job.options import JobOptions, Target, parse_target
from streaming.job.outputs import Decoded, OutputStream, default_outputs
from streaming.job.runner import JobResult, JobWaiter, StreamingJob, make_sinks, run_job

__all__ = [
    "BrokerUnreachableError",
    "Decoded",
    "JobError",
    "JobOptions",
    "JobResult",
    "JobUsageError",
    "JobWaiter",
    "OutputStream",
    "StopRequestedError",
    "StreamingJob",
    "Target",
    "default_outputs",
    "make_sinks",
    "parse_target",
    "run_job",
]

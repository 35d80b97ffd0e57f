"""The streaming job (``configwatch run``): one query for the Kafka and replay sources.

Module map:

- ``options``: ``--source``/``--sink``/``--outputs``/trigger flags -> :class:`JobOptions` (checked up front);
- ``preflight``: the input topic exists, before Spark starts (``configwatch.reachability``: Kafka answers);
- ``streaming.pipeline`` (one level up): what the query computes;
- ``batches``: the ``foreachBatch`` function (write, notify, progress line); where it writes is
  ``sinks.registry``'s choice (Kafka through Spark's own sink, or replay files);
- ``accounting``: decode statistics per batch and the progress line;
- ``runner``: starts the query, waits, stops gracefully.
"""

from streaming.job.exceptions import BrokerUnreachableError, JobError, JobUsageError, StopRequestedError
from streaming.job.options import JobOptions, Target, parse_target
from streaming.job.runner import QUERY_NAME, JobResult, JobWaiter, StreamingJob, make_output, run_job

__all__ = [
    "QUERY_NAME",
    "BrokerUnreachableError",
    "JobError",
    "JobOptions",
    "JobResult",
    "JobUsageError",
    "JobWaiter",
    "StopRequestedError",
    "StreamingJob",
    "Target",
    "make_output",
    "parse_target",
    "run_job",
]

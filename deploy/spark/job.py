"""The ``spark-submit`` entry point of ``configwatch run`` (docs/operations.md, "On a Spark cluster").

Usage::

    spark-submit --master spark://HOST:7077 --packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.0 \\
        --py-files configwatch-0.1.0-py3-none-any.zip deploy/spark/job.py run --bootstrap-servers ...

The arguments after this file are ``configwatch``'s own (``run --help`` lists them). The
project's code comes from ``--py-files`` (the wheel, renamed ``.zip``, as ``make dist`` leaves it)
or from an installed ``configwatch``; nothing is compiled.
"""

import sys

from cli.main import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

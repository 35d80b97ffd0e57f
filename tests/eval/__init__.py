"""The labelled evaluation set of issue 13 (``python -m tests.eval``, ``make eval``)."""

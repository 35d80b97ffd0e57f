"""Benchmarks (issue 8): ``python -m bench.run`` (``make bench``) and the per-part scripts; see docs/benchmarks.md."""

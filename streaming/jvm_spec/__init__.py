"""What the JVM engine (``streaming/jvm``, ``io.configwatch.detect``) is told: one JSON spec.

The Java classes hold the logic, twins of ``udfs.decode``, ``udfs.expectations``, ``udfs.rules``,
``udfs.sensitivity`` and ``udfs.pipeline.route`` (the same records, byte for byte:
``tests/test_detect_jvm_*.py``, ``tests/test_job_jvm_twin.py``). Every fact they act on comes from
its Python home through :func:`spec`: the contract's names and shapes, the rule catalog, the key-set
and defaults data files as they are, the GX suite as GX serializes it, and each rule module's words,
patterns and thresholds, one section per module. Nothing in it is secret: no key, no config value.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any, Final

from streaming.jvm_spec import core, decode, rules

__all__ = ["spec", "spec_json"]

_SECTIONS: Final[dict[str, Callable[[], Any]]] = {
    "contract": core.contract,
    "catalog": core.catalog,
    "data": core.data,
    "decode": decode.decode,
    "expectations": decode.expectations,
    "prepare": core.prepare,
    "route": core.route,
    "sensitivity": rules.sensitivity,
    "secretscan": rules.secretscan,
    "identity": rules.identity,
    "keysets": rules.keysets,
    "effective": rules.effective,
    "durations": rules.durations,
    "anomalies": rules.anomalies,
    "typos": rules.typos,
    "fleet": rules.fleet,
    "groups": rules.groups,
}


def spec() -> dict[str, Any]:
    """The engine's spec: one section per module."""
    return {name: build() for name, build in _SECTIONS.items()}


@functools.cache
def spec_json() -> str:
    """:func:`spec` as JSON text, built once per process (the GX part imports GX)."""
    return json.dumps(spec(), separators=(",", ":"), ensure_ascii=False)

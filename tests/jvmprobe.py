"""Run the detection engine's Java probes (``tests/jvm/detect``) on JSON inputs: the Python twins' judge.

``probe("SecretScanProbe", inputs)`` compiles the probes against the job's jar (once per source
change), writes the spec (``streaming.jvm_spec.spec``), feeds one JSON line per input and returns
the answers, parsed (``raw=True``: the text lines, to compare JSON byte for byte). No Spark runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from configwatch import jars
from configwatch.paths import cache_dir
from streaming.jvm_spec import spec_json

__all__ = ["PROBE_KEY", "classpath", "probe"]

PROBE_KEY = "jvm-probe-key"
_SOURCES = Path(__file__).parent / "jvm" / "detect"


_FOUNDATION = frozenset({"Knowledge", "PyJson", "Keyed", "Entry", "Push", "Context", "RawFinding", "Findings",
                         "Probes", "BasicsProbe"})


def _sources() -> list[Path]:
    """The engine's sources and the probes; ``CONFIGWATCH_PROBE_ONLY=A,B`` keeps the foundation and files
    whose names start with A or B (work on one module while another does not compile yet)."""
    files = sorted(jars.JOB_SOURCES.joinpath("io", "configwatch", "detect").glob("*.java")) + sorted(
        _SOURCES.glob("*.java"))
    only = [n for n in os.environ.get("CONFIGWATCH_PROBE_ONLY", "").split(",") if n]
    if only:
        files = [f for f in files if f.stem in _FOUNDATION or any(f.stem.startswith(n) for n in only)]
    return files


def classpath() -> str:
    """The probes' class path: the engine and the probes compiled together, then PySpark's jars."""
    import pyspark

    spark_jars = Path(pyspark.__file__).resolve().parent / "jars"
    sources = _sources()
    digest = hashlib.sha256(str(spark_jars).encode())
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    out = cache_dir() / "jars" / f"probes-{digest.hexdigest()[:12]}"
    if not (out / ".complete").exists():
        out.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["javac", "--release", "17", "-nowarn", "-d", str(out), "-cp", f"{spark_jars}/*",
                               *map(str, sources)], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise AssertionError(f"javac failed:\n{proc.stderr[-4000:]}")
        (out / ".complete").write_text("ok\n")
    return f"{out}:{spark_jars}/*"


def probe(cls: str, inputs: list[Any], *, key: str = PROBE_KEY, raw: bool = False) -> list[Any]:
    """The answers of probe class ``cls`` (in package ``io.configwatch.detect``) to ``inputs``, in order."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8", delete=False) as f:
        f.write(spec_json())
        spec_path = f.name
    try:
        text = "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in inputs)
        proc = subprocess.run(["java", "-Xss4m", "-cp", classpath(), f"io.configwatch.detect.{cls}", spec_path],
                              input=text.encode("utf-8", "surrogatepass"), capture_output=True,
                              env={**os.environ, "CONFIGWATCH_PROBE_KEY": key}, check=False)
    finally:
        os.unlink(spec_path)
    if proc.returncode != 0:
        raise AssertionError(f"{cls} failed: {proc.stderr.decode('utf-8', 'replace')[-3000:]}")
    lines = proc.stdout.decode("utf-8", "surrogatepass").split("\n")[:-1]  # not splitlines: U+2028 is text
    if len(lines) != len(inputs):
        raise AssertionError(f"{cls} answered {len(lines)} lines to {len(inputs)} inputs")
    return lines if raw else [json.loads(line) for line in lines]

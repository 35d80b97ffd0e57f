"""Which archives the worker daemon takes off the workers' import path (``streaming.worker_daemon.lean_path``)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from streaming.worker_daemon import lean_path


def _zip(path: Path, names: list[str]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, "")
    return str(path)


def _pip_pyspark(site: Path) -> str:
    """``<site>/pyspark`` as pip installs it: the package, with Spark's zip of the same files inside."""
    (site / "pyspark").mkdir(parents=True)
    (site / "pyspark" / "__init__.py").write_text("")
    return _zip(site / "pyspark" / "python" / "lib" / "pyspark.zip", ["pyspark/__init__.py"])


def test_a_pip_installed_pysparks_own_zip_and_a_jar_without_python_leave_the_path(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    bundled = _pip_pyspark(site)
    jar = _zip(site / "pyspark" / "jars" / "spark-core.jar", ["org/apache/spark/SparkContext.class"])
    py4j = _zip(site / "pyspark" / "python" / "lib" / "py4j-src.zip", ["py4j/__init__.py"])
    assert lean_path([bundled, py4j, jar, str(site)]) == [py4j, str(site)]


def test_a_zip_of_another_spark_stays_without_the_installed_package_on_the_path(tmp_path: Path) -> None:
    bundled = _pip_pyspark(tmp_path / "site-packages")
    cluster = _zip(tmp_path / "opt" / "spark" / "python" / "lib" / "pyspark.zip", ["pyspark/__init__.py"])
    assert lean_path([bundled, cluster]) == [bundled, cluster]  # the package's site directory is not on the path
    assert lean_path([cluster, str(tmp_path / "site-packages")]) == [cluster, str(tmp_path / "site-packages")]


def test_a_jar_holding_python_modules_stays(tmp_path: Path) -> None:
    jar = _zip(tmp_path / "with-python.jar", ["pyspark/__init__.py", "org/x.class"])
    missing = str(tmp_path / "absent.jar")
    assert lean_path([jar, missing]) == [jar, missing]

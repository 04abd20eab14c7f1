"""What Spark needs before it starts: pyspark itself, Java 17 or newer, the executors' Python.

Nothing here imports pyspark at module level: :func:`require_pyspark` does,
and says how to install it when it is missing. :func:`check_java` runs
before a new Spark session starts (Spark's own failure is a long JVM stack
trace), and :func:`session` is the one way bayesrule starts a session: it
returns the active one when there is one, and otherwise checks Java, points
the executors of a local master at the driver's interpreter
(``PYSPARK_PYTHON``, when unset) and builds a session on the given master.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from typing import Any

__all__ = ["INSTALL", "MIN_JAVA", "check_java", "java_version", "require_pyspark", "session"]

#: how to get the Spark backend's dependencies
INSTALL = "pip install 'bayesrule[spark]'"
#: the oldest Java that Spark 4 runs on
MIN_JAVA = 17


def require_pyspark() -> Any:
    """The ``pyspark`` module; an ImportError naming the extra to install when it is missing."""
    try:
        import pyarrow  # noqa: F401  (mapInArrow hands batches as pyarrow RecordBatches)
        import pyspark
    except ImportError as exc:
        raise ImportError(
            f"the Spark backend needs pyspark and pyarrow ({exc.name} is missing): {INSTALL}"
        ) from exc
    return pyspark


def _java_executable() -> str | None:
    """The ``java`` Spark would start: ``$JAVA_HOME/bin/java``, else the one on ``PATH``."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        return candidate if os.path.exists(candidate) else None
    return shutil.which("java")


def java_version(executable: str | None = None) -> int | None:
    """The major version of ``java`` (8 for ``1.8.0``), or None when it cannot be read."""
    exe = executable or _java_executable()
    if exe is None:
        return None
    try:
        done = subprocess.run(
            [exe, "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', done.stderr + done.stdout)
    if found is None:
        return None
    major = int(found.group(1))
    if major == 1 and found.group(2) is not None:  # "1.8.0_392" is Java 8
        major = int(found.group(2))
    return major


def check_java() -> int:
    """Check that the Java Spark would start is version 17 or newer; returns its major version.

    Raises
    ------
    RuntimeError
        In one line, when ``java`` (``$JAVA_HOME/bin/java`` when ``JAVA_HOME``
        is set, else the one on ``PATH``) is missing, cannot be run, or is
        older than 17.
    """
    exe = _java_executable()
    if exe is None:
        where = (
            f"JAVA_HOME={os.environ['JAVA_HOME']} has no bin/java"
            if os.environ.get("JAVA_HOME")
            else "no java on PATH"
        )
        raise RuntimeError(
            f"Spark needs Java {MIN_JAVA} or newer, and none was found ({where}); install a "
            f"JDK {MIN_JAVA}+ and set JAVA_HOME."
        )
    major = java_version(exe)
    if major is None:
        raise RuntimeError(
            f"Spark needs Java {MIN_JAVA} or newer; could not read the version of {exe} "
            "(java -version failed)."
        )
    if major < MIN_JAVA:
        raise RuntimeError(
            f"Spark needs Java {MIN_JAVA} or newer; {exe} is Java {major}. Install a JDK "
            f"{MIN_JAVA}+ and set JAVA_HOME to it."
        )
    return major


def _is_local(master: str | None) -> bool:
    return master is None or master == "local" or master.startswith("local[")


def session(master: str | None = None, *, app_name: str = "bayesrule", **conf: Any) -> Any:
    """The active SparkSession, or a new one on ``master`` after checking Java.

    A new session on a local master (``local``, ``local[N]``, or None: the
    default) runs its Python workers with this interpreter unless
    ``PYSPARK_PYTHON`` is already set, so the executors see the same
    packages as the driver. On a cluster, every executor needs the same
    Python with bayesrule, numpy, scipy, scikit-learn, pandas and pyarrow
    installed (``PYSPARK_PYTHON`` or ``spark.pyspark.python``).

    Parameters
    ----------
    master : str, optional
        ``local[2]``, ``spark://host:7077``, ``yarn``...; None: whatever
        Spark's configuration says (``spark-submit``), else ``local[*]``.
    app_name : str
    **conf
        Spark settings (``spark.ui.enabled="false"``...).
    """
    require_pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    check_java()
    if _is_local(master) and not os.environ.get("PYSPARK_PYTHON"):
        os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()

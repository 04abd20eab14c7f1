"""Shared fixtures and settings of the suite.

MNIST is loaded once per session from ``$BAYESRULE_DATA`` or
``../shared/datasets/mnist``. Without it the MNIST tests skip on a
developer's machine, but fail where the data is expected: under CI (``CI``
set) or when ``BAYESRULE_DATA`` names a place to look. Every test that uses
the ``mnist`` fixture carries the ``mnist`` marker (``-m "not mnist"``
deselects them).

Hypothesis runs the ``ci`` profile (40 derandomized examples, no deadline)
for every module; ``--hypothesis-profile=dev`` gives more, random examples.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

import bayesrule.datasets
from _arrow_tables import no_thread_left  # noqa: F401  (a fixture for every module)
from bayesrule.datasets import find_mnist, load_mnist

settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile("ci")

#: environment variables that say the data set must be there
_EXPECTING = ("CI", "BAYESRULE_DATA", "BAYESRULE_REQUIRE_MNIST")


def _set(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in ("", "0", "false", "no")


def mnist_places(env: Mapping[str, str], cwd: Path) -> list[Path]:
    """Where :func:`bayesrule.datasets.find_mnist` looks, in its order."""
    places: list[Path] = []
    if env.get("BAYESRULE_DATA"):
        data = Path(env["BAYESRULE_DATA"])
        places += [data, data / "mnist"]
    places.append(cwd.parent / "shared" / "datasets" / "mnist")
    places.append(Path(bayesrule.datasets.__file__).resolve().parents[3] / "shared/datasets/mnist")
    return places


def missing_mnist(found: Path | None, env: Mapping[str, str], cwd: Path) -> tuple[str, str] | None:
    """``None`` when MNIST was found; else ``("fail" | "skip", message)``.

    The message names every place looked at. It is a failure when the
    environment says the data is expected (``CI``, ``BAYESRULE_DATA`` or
    ``BAYESRULE_REQUIRE_MNIST`` set), so that a CI run never passes by not
    running the accuracy tests.
    """
    if found is not None:
        return None
    where = ", ".join(str(p) for p in mnist_places(env, cwd))
    expecting = [name for name in _EXPECTING if _set(env.get(name))]
    if expecting:
        return "fail", (
            f"MNIST is expected ({', '.join(expecting)} set) but was not found; looked in: {where}"
        )
    return "skip", f"MNIST not found (looked in: {where}); set BAYESRULE_DATA to run these tests"


@pytest.fixture(scope="session")
def mnist():
    """(X_train, y_train, X_test, y_test), pixels scaled to [0, 1]."""
    verdict = missing_mnist(find_mnist(), os.environ, Path.cwd())
    if verdict is not None:
        action, message = verdict
        if action == "fail":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return load_mnist()


#: fixtures that start something costly once (a JVM, a Dask cluster): under
#: ``pytest -n`` (``make test``) the tests that use them run on one worker
_SHARED_ONCE = {"spark": "spark"}


@pytest.hookimpl(tryfirst=True)  # before xdist's loadgroup reads the marks
def pytest_collection_modifyitems(config, items):
    """Every test that uses the ``mnist`` fixture is marked ``mnist``.

    Under ``--dist loadgroup`` a test that uses a session-wide engine (Spark)
    joins that engine's group, and the tests of a module with module-scoped
    fixtures stay together, so each is set up once.
    """
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "mnist" in names:
            item.add_marker(pytest.mark.mnist)
        group = next((g for f, g in _SHARED_ONCE.items() if f in names), None)
        module = getattr(item, "module", None)
        if group is None and module is not None and _has_module_fixture(module):
            group = module.__name__
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))


def _has_module_fixture(module) -> bool:
    """Whether a test module defines a fixture of module scope."""
    cached = getattr(module, "_bayesrule_module_fixture", None)
    if cached is None:
        cached = any(
            getattr(getattr(obj, "_fixture_function_marker", None), "scope", None) == "module"
            for obj in vars(module).values()
        )
        module._bayesrule_module_fixture = cached
    return cached


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession for the whole run (start-up takes seconds): 2 cores, tasks retried.

    ``local[2,3]``: two cores, and a failed task is tried up to 3 times (the
    fault-tolerance test fails a task once). The executors run this
    interpreter (``PYSPARK_PYTHON``). Skips when pyspark is not installed.
    """
    import sys

    if os.environ.get("CI") and importlib.util.find_spec("pyspark") is None:
        pytest.fail(
            "CI is set but pyspark is not installed (pip install -e '.[dev]')", pytrace=False
        )
    pytest.importorskip("pyspark")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2,3]")
        .appName("bayesrule-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()

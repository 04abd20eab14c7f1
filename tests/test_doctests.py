"""Every public estimator has an Examples section that runs as a doctest in ``make test``.

``make test`` runs ``python -m pytest -q``; pyproject.toml's
``[tool.pytest.ini_options]`` adds ``src/bayesrule/estimators`` to the
``testpaths`` and ``--doctest-modules`` to the options, so the Examples of
each estimator's class docstring run with the suite. These tests make that
hold for every estimator ``bayesrule`` exports: one added without an example,
or defined where the doctests are not collected, fails here.
"""

from __future__ import annotations

import doctest
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import bayesrule
import bayesrule.estimators

ROOT = Path(__file__).resolve().parents[1]
ESTIMATORS_DIR = Path(bayesrule.estimators.__file__).resolve().parent

#: the estimators exported by ``bayesrule`` (classes with the scikit-learn API)
PUBLIC_ESTIMATORS = sorted(
    name
    for name in bayesrule.__all__
    if isinstance(getattr(bayesrule, name), type)
    and issubclass(getattr(bayesrule, name), BaseEstimator)
)

#: a numpydoc section heading: the title, then a line of dashes as long
_HEADING = re.compile(r"^(?P<title>\w[\w ]*)\n-+$", re.MULTILINE)


def examples_section(cls: type) -> str:
    """The text of the Examples section of ``cls``'s own docstring ('' if none)."""
    doc = inspect.cleandoc(cls.__dict__.get("__doc__") or "")
    headings = list(_HEADING.finditer(doc))
    for i, heading in enumerate(headings):
        if heading.group("title") == "Examples":
            end = headings[i + 1].start() if i + 1 < len(headings) else len(doc)
            return doc[heading.end() : end]
    return ""


def doctest_id(cls: type) -> str:
    """The name pytest's doctest collection gives the class docstring's examples."""
    return f"{cls.__module__}.{cls.__qualname__}"


def test_the_public_estimators_are_found():
    # the filter above must see the estimators, not an empty list
    for name in [
        "LinearDiscriminantAnalysis",
        "QuadraticDiscriminantAnalysis",
        "RegularizedDiscriminantAnalysis",
        "RegularizedDiscriminantAnalysisCV",
        "DiagonalLDA",
        "GaussianNB",
        "BernoulliNB",
        "MultinomialNB",
        "ComplementNB",
        "PoissonNB",
        "CategoricalNB",
        "KernelNB",
        "MixedNB",
        "MixtureDiscriminantAnalysis",
    ]:
        assert name in PUBLIC_ESTIMATORS
    assert "DiagonalStats" not in PUBLIC_ESTIMATORS  # a statistic, not an estimator


@pytest.mark.parametrize("name", PUBLIC_ESTIMATORS)
def test_estimator_has_an_examples_section(name):
    cls = getattr(bayesrule, name)
    section = examples_section(cls)
    assert section, f"{name}'s docstring has no Examples section."
    prompts = [line for line in section.splitlines() if line.startswith(">>> ")]
    assert prompts, f"{name}'s Examples section has no '>>>' line."
    # it fits the estimator it documents
    assert any(name in line for line in prompts), f"{name}'s Examples never use {name}."


@pytest.mark.parametrize("name", PUBLIC_ESTIMATORS)
def test_examples_are_a_doctest_where_the_suite_collects_them(name):
    cls = getattr(bayesrule, name)
    # defined in a module of bayesrule/estimators, the folder the doctests are collected from
    assert Path(inspect.getfile(cls)).resolve().parent == ESTIMATORS_DIR
    tests = doctest.DocTestFinder(recurse=False).find(cls, doctest_id(cls))
    assert [t.name for t in tests if t.examples] == [doctest_id(cls)]


def test_the_suite_runs_the_estimators_doctests(pytestconfig):
    if not (ROOT / "pyproject.toml").is_file() or not (ROOT / "src").is_dir():
        pytest.skip("not run from a source checkout")
    assert pytestconfig.rootpath.resolve() == ROOT
    # what `python -m pytest -q` collects with no path given
    assert "src/bayesrule/estimators" in pytestconfig.getini("testpaths")
    assert "--doctest-modules" in pytestconfig.getini("addopts")


def test_the_doctest_collection_finds_one_doctest_per_estimator():
    if (
        not (ROOT / "pyproject.toml").is_file()
        or ESTIMATORS_DIR != ROOT / "src/bayesrule/estimators"
    ):
        pytest.skip("not run from a source checkout")
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "src/bayesrule/estimators",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    collected = [line.split("::", 1)[1] for line in done.stdout.splitlines() if "::" in line]
    for name in PUBLIC_ESTIMATORS:
        assert collected.count(doctest_id(getattr(bayesrule, name))) == 1, (
            f"{name}: its doctest was not collected from src/bayesrule/estimators:\n{done.stdout}"
        )


def _doc_section_code(title: str) -> str:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, f"the section {title!r} shows exactly one complete example"
    return blocks[0]


def test_the_documented_backend_fits_and_predicts_as_in_memory():
    if not (ROOT / "docs" / "architecture.md").is_file():
        pytest.skip("not run from a source checkout")
    from sklearn.datasets import load_iris

    from bayesrule import backends

    before = backends.registered_handlers()
    namespace: dict = {"__name__": "bayesrule_architecture_backend"}
    try:
        exec(compile(_doc_section_code("Adding a backend"), "architecture.md", "exec"), namespace)
        X, y = load_iris(return_X_y=True)
        Partitioned = namespace["Partitioned"]
        in_memory = bayesrule.MixtureDiscriminantAnalysis(n_components=2).fit(X, y)
        np.testing.assert_allclose(namespace["proba"], in_memory.predict_proba(X), atol=1e-9)
        assert namespace["model"].n_passes_ == in_memory.n_passes_ > 3  # EM: several reduces
        # a one-pass model, with weights, and a DataFrame model (blocks in turn)
        w = np.linspace(0.5, 2.0, 150)
        parts = lambda a: Partitioned(np.array_split(a, 4))  # noqa: E731
        qda = bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.1)
        fitted = qda.fit(parts(X), parts(y), sample_weight=parts(w))
        expected = bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.1).fit(X, y, w)
        np.testing.assert_allclose(fitted.predict_proba(parts(X)), expected.predict_proba(X))
        np.testing.assert_array_equal(fitted.predict(parts(X)), expected.predict(X))
    finally:
        backends.unregister_handler("Partitioned")
    assert backends.registered_handlers() == before
    assert backends.handler_for(Partitioned([X])) is None

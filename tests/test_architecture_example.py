"""The example estimator of docs/architecture.md runs, and is a complete estimator.

The code block under "Adding a model" is executed as written; the tests
check that the thirty lines give a full classifier through the base class:
probabilities equal a direct computation, streaming, merging and forgetting
equal fitting, and scikit-learn's estimator checks pass.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm
from sklearn.base import clone
from sklearn.utils.estimator_checks import check_estimator

DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def _example_namespace() -> dict:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Adding a model", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "the section shows exactly one complete example"
    # a real module, so that pickling (one of scikit-learn's checks) finds the class
    module = types.ModuleType("bayesrule_architecture_example")
    sys.modules[module.__name__] = module
    exec(compile(blocks[0], str(DOC), "exec"), module.__dict__)
    return module.__dict__


@pytest.fixture(scope="module")
def SphericalLDA():
    return _example_namespace()["SphericalLDA"]


def _data(seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], 60)
    X = rng.normal(size=(180, 3)) + np.array([[0, 0, 0], [3, 0, 1], [0, 3, -1]])[y]
    return X, y


def test_example_is_short():
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Adding a model", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.*?)```", section, flags=re.S)[0]
    lines = [ln for ln in code.splitlines() if ln.strip()]
    assert len(lines) <= 40


def test_probabilities_equal_a_direct_computation(SphericalLDA):
    X, y = _data()
    model = SphericalLDA().fit(X, y)
    means = np.array([X[y == k].mean(axis=0) for k in range(3)])
    resid = X - means[y]
    var = float(np.mean(resid**2))
    log_joint = np.log(1 / 3) + norm.logpdf(X[:, None, :], means[None], np.sqrt(var)).sum(axis=2)
    expected = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
    np.testing.assert_allclose(model.predict_proba(X), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.score_samples(X), logsumexp(log_joint, axis=1), rtol=1e-12)


def test_streaming_merging_and_forgetting_equal_fitting(SphericalLDA):
    X, y = _data()
    whole = SphericalLDA().fit(X, y)
    stream = SphericalLDA()
    for part in np.array_split(np.arange(180), 4):
        stream.partial_fit(X[part], y[part], classes=[0, 1, 2])
    np.testing.assert_allclose(stream.predict_proba(X), whole.predict_proba(X), atol=1e-12)
    a = SphericalLDA().fit(X[::2], y[::2])
    b = SphericalLDA().fit(X[1::2], y[1::2])
    np.testing.assert_allclose(a.merge(b).predict_proba(X), whole.predict_proba(X), atol=1e-12)
    forgot = clone(whole).fit(X, y).forget(X[1::2], y[1::2])
    np.testing.assert_allclose(forgot.predict_proba(X), a.predict_proba(X), atol=1e-10)
    draws, labels = whole.sample(50, random_state=0)
    assert draws.shape == (50, 3) and set(labels) <= {0, 1, 2}


def test_passes_scikit_learn_checks(SphericalLDA):
    check_estimator(SphericalLDA())

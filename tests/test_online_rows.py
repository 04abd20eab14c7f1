"""Online learning: ``partial_fit`` one row at a time equals ``fit`` on all the rows.

A stream's first rows are too few for some models (one row: no variance,
no pooled covariance; one row per class). The update keeps their statistics
(``TooFewRows`` waits), every prediction refuses until later rows mend it,
and no fitted attribute keeps a value of rows since forgotten.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris

import bayesrule

WAITING = [
    bayesrule.GaussianNB,
    bayesrule.LinearDiscriminantAnalysis,
    bayesrule.DiagonalLDA,
    bayesrule.RegularizedDiscriminantAnalysis,
    bayesrule.QuadraticDiscriminantAnalysis,
]
ONLINE = [*WAITING, bayesrule.KernelNB, bayesrule.MixedNB]


def _iris(seed=0):
    X, y = load_iris(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(y))
    return X[order], y[order]


@pytest.mark.parametrize("make", ONLINE, ids=lambda c: c.__name__)
def test_one_row_at_a_time_equals_fit(make):
    X, y = _iris()
    model = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ClassWarning of classes of one row, on the way
        for i in range(len(y)):
            model.partial_fit(X[i : i + 1], y[i : i + 1], classes=[0, 1, 2])
        whole = make().fit(X, y)
    np.testing.assert_array_equal(model.predict(X), whole.predict(X))
    np.testing.assert_allclose(model.predict_proba(X), whole.predict_proba(X), atol=1e-10)
    assert model.stats_.allclose(whole.stats_, rtol=1e-10)


@pytest.mark.parametrize("make", WAITING, ids=lambda c: c.__name__)
def test_a_first_row_waits_and_every_prediction_says_why(make):
    X, y = _iris()
    model = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.partial_fit(X[:1], y[:1], classes=[0, 1, 2])
    assert model.n_samples_seen_ == 1
    for method in ("predict", "predict_proba", "predict_log_proba", "score_samples"):
        with pytest.raises(
            ValueError, match="cannot predict until later rows|cannot predict while"
        ):
            getattr(model, method)(X[:3])
    with pytest.raises(ValueError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make().fit(X[:1], y[:1])  # fit refuses at once


@pytest.mark.parametrize(
    "make", [bayesrule.LinearDiscriminantAnalysis, bayesrule.RegularizedDiscriminantAnalysis]
)
def test_forgetting_down_to_too_few_rows_keeps_no_stale_attribute(make):
    X, y = _iris()
    first = [np.flatnonzero(y == k)[:3] for k in range(3)]
    rows = np.concatenate(first)
    keep = np.array([f[0] for f in first])
    drop = np.setdiff1d(rows, keep)
    model = make().fit(X[rows], y[rows])
    model.forget(X[drop], y[drop])  # one row a class: no within-class variation
    for name in ("coef_", "means_", "covariance_"):
        if name in model.__dict__:
            with pytest.raises(ValueError):
                np.asarray(getattr(model, name))
    with pytest.raises(ValueError):
        model.predict(X[:2])
    rest = np.setdiff1d(np.arange(len(y)), rows)
    model.partial_fit(X[rest], y[rest])
    whole = make().fit(np.r_[X[keep], X[rest]], np.r_[y[keep], y[rest]])
    np.testing.assert_allclose(model.predict_proba(X), whole.predict_proba(X), atol=1e-10)

"""Infinity is an error for every naive Bayes model, at fit and at predict (NaN is missing)."""

from __future__ import annotations

import numpy as np
import pytest

import bayesrule as br

MODELS = [
    br.GaussianNB, br.DiagonalLDA, br.MultinomialNB, br.ComplementNB, br.BernoulliNB,
    br.PoissonNB, br.CategoricalNB, br.KernelNB,
]  # fmt: skip

rng = np.random.default_rng(0)
X = rng.poisson(3, (60, 4)).astype(float)
y = rng.integers(0, 2, 60)


@pytest.mark.parametrize("cls", MODELS)
def test_infinity_names_row_and_column(cls):
    Xb = X.copy()
    Xb[3, 2] = np.inf
    with pytest.raises(ValueError, match="contains infinity at row 3, column 2"):
        cls().fit(Xb, y)
    model = cls().fit(X, y)
    with pytest.raises(ValueError, match="contains infinity at row 3, column 2"):
        model.predict(Xb)
    with pytest.raises(ValueError, match="contains infinity at row 3, column 2"):
        model.predict_joint_log_proba(Xb)


@pytest.mark.parametrize("cls", MODELS)
def test_nan_is_missing_not_an_error(cls):
    model = cls().fit(X, y)
    Xn = X.copy()
    Xn[3, 2] = np.nan
    proba = model.predict_proba(Xn)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)

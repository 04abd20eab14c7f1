"""DiagonalLDA's smoothing is relative to each feature's own variance: its model is free of units."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, load_wine

from bayesrule import DiagonalLDA, GaussianNB

SETS = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer}


@pytest.mark.parametrize("name", sorted(SETS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_predictions_do_not_depend_on_units(name: str, seed: int) -> None:
    X, y = SETS[name](return_X_y=True)
    scale = 10.0 ** np.random.default_rng(seed).uniform(-3, 3, X.shape[1])
    base = DiagonalLDA().fit(X, y)
    scaled = DiagonalLDA().fit(X * scale, y)
    np.testing.assert_array_equal(base.predict(X), scaled.predict(X * scale))
    np.testing.assert_allclose(
        base.predict_proba(X), scaled.predict_proba(X * scale), rtol=1e-7, atol=1e-10
    )
    # the variances move with the units, the smoothing with them
    np.testing.assert_allclose(scaled.var_, base.var_ * scale**2, rtol=1e-9)


def test_epsilon_is_var_smoothing_times_each_features_variance() -> None:
    X, y = load_wine(return_X_y=True)
    model = DiagonalLDA(var_smoothing=1e-3).fit(X, y)
    np.testing.assert_allclose(model.epsilon_, 1e-3 * X.var(axis=0), rtol=1e-10)


def test_constant_feature_borrows_the_smallest_positive_variance() -> None:
    X, y = load_iris(return_X_y=True)
    X = np.column_stack([X, np.full(len(X), 7.0)])
    model = DiagonalLDA().fit(X, y)
    total = X.var(axis=0)
    assert model.epsilon_[-1] == pytest.approx(1e-9 * total[:-1].min())
    proba = model.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # a constant feature moves no posterior
    np.testing.assert_allclose(proba, DiagonalLDA().fit(X[:, :-1], y).predict_proba(X[:, :-1]))


def test_gaussian_nb_keeps_scikit_learns_rule() -> None:
    X, y = load_wine(return_X_y=True)
    assert GaussianNB().fit(X, y).epsilon_ == pytest.approx(1e-9 * X.var(axis=0).max())

"""RDA's default ridge: every class regular, on any table or image, in any units (issue #19).

``RegularizedDiscriminantAnalysis()`` shrinks every class covariance by
``ridge=0.1`` towards the average within-class variance (in the pooled
standardised coordinates of its default ``target``). Classes with constant
features, duplicated (collinear) features or fewer rows than features make
Friedman's model without the ridge singular; the default must fit them,
give finite probabilities that sum to 1, and not depend on any feature's unit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits

from bayesrule import (
    QuadraticDiscriminantAnalysis,
    RegularizedDiscriminantAnalysis,
)
from bayesrule.models.gaussian import SingularCovarianceError


def _singular_table(seed: int, K: int, n_k: int, p: int, kinds: tuple[str, ...]) -> tuple:
    """Gaussian classes of ``n_k`` rows, with features that make each class singular.

    ``kinds`` adds, after ``p`` correlated Gaussian features: ``'zero'`` a
    feature 0 in every row (an unlit border pixel), ``'constant'`` one equal
    to 7 in every row, ``'copy'`` a multiple of the first feature (exactly
    collinear), ``'class'`` a feature constant within each class but
    different between classes (no within-class variance at all).
    """
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n_k)
    X = np.empty((K * n_k, p))
    for k in range(K):
        A = rng.normal(size=(p, p)) * rng.uniform(0.3, 2.0, p)
        X[y == k] = rng.normal(size=(n_k, p)) @ A.T + rng.normal(0, 2, p)
    extra = []
    for kind in kinds:
        if kind == "zero":
            extra.append(np.zeros(len(y)))
        elif kind == "constant":
            extra.append(np.full(len(y), 7.0))
        elif kind == "copy":
            extra.append(-3.0 * X[:, 0])
        else:  # 'class'
            extra.append(y * 2.5 + 1.0)
    return np.column_stack([X, *extra]) if extra else X, y


_KINDS = st.lists(
    st.sampled_from(["zero", "constant", "copy", "class"]), min_size=0, max_size=3
).map(tuple)


def _check_probabilities(model, X):
    proba = model.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(np.isfinite(model.predict_log_proba(X)))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**16),
    K=st.integers(2, 4),
    p=st.integers(2, 12),
    rows=st.integers(-1, 4),
    kinds=_KINDS,
    exponents=st.lists(st.floats(-3.0, 3.0), min_size=16, max_size=16),
)
def test_the_default_fits_every_singular_class(seed, K, p, rows, kinds, exponents):
    # rows < 0 or a degenerate kind: every class is singular without the ridge
    n_k = max(2, p + 1 + rows) if rows >= 0 else max(2, p // 2)
    X, y = _singular_table(seed, K, n_k, p, kinds)
    X = X * 10.0 ** np.asarray(exponents[: X.shape[1]])
    singular = rows < 0 or bool(kinds)
    if singular:  # every class is singular: QDA's limit (no ridge) refuses them
        with pytest.raises(SingularCovarianceError, match=r"class \d+ is singular"):
            RegularizedDiscriminantAnalysis(alpha=1.0, gamma=0.0, ridge=0.0).fit(X, y)
    model = RegularizedDiscriminantAnalysis().fit(X, y)
    _check_probabilities(model, X)
    # the training classes are told apart (every class is a shifted Gaussian)
    assert model.score(X, y) > 1.0 / K


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**16),
    kinds=_KINDS.filter(bool),
    exponents=st.lists(st.floats(-3.0, 3.0), min_size=9, max_size=9),
)
def test_the_default_on_singular_classes_is_free_of_each_features_unit(seed, kinds, exponents):
    X, y = _singular_table(seed, 3, 5, 6, kinds)
    s = 10.0 ** np.asarray(exponents[: X.shape[1]])
    a = RegularizedDiscriminantAnalysis().fit(X, y)
    b = RegularizedDiscriminantAnalysis().fit(X * s, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X * s))
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X * s), rtol=0, atol=1e-7)


def test_the_default_fits_digits_where_qda_and_the_old_default_refuse():
    X, y = load_digits(return_X_y=True)
    X = X.astype(float)
    train, test = np.arange(0, len(y), 2), np.arange(1, len(y), 2)
    with pytest.raises(SingularCovarianceError, match="class 0"):
        RegularizedDiscriminantAnalysis(ridge=0.0).fit(X[train], y[train])
    with pytest.raises(SingularCovarianceError, match="class 0"):
        QuadraticDiscriminantAnalysis().fit(X[train], y[train])
    model = RegularizedDiscriminantAnalysis().fit(X[train], y[train])
    _check_probabilities(model, X[test])
    # a model of the pixels, not a guess: most held-out digits are right
    assert model.score(X[test], y[test]) > 0.9


def test_the_default_ridge_is_a_tenth_of_the_average_pooled_variance():
    # in the pooled standardised coordinates z = x / s every feature has the
    # same pooled variance t; the default adds 0.1 t to each class's blend
    X, y = _singular_table(3, 3, 30, 4, ())
    X = X * np.array([1e-3, 1.0, 1e2, 1e3])
    cov = RegularizedDiscriminantAnalysis(store_covariance=True).fit(X, y).covariance_
    plain = RegularizedDiscriminantAnalysis(store_covariance=True, ridge=0.0).fit(X, y)
    pooled = sum(np.cov(X[y == k], rowvar=False) * (np.sum(y == k) - 1) for k in range(3))
    pooled /= len(y) - 3
    d = np.diag(pooled)
    t = 1.0  # the average of the standardised pooled variances d / d
    for k in range(3):
        expected = 0.9 * plain.covariance_[k] + 0.1 * t * np.diag(d)
        np.testing.assert_allclose(cov[k], expected, rtol=1e-10)


def test_a_file_without_ridge_loads_with_the_ridge_it_was_fitted_with():
    # a model saved before ``ridge`` existed was fitted without one
    assert RegularizedDiscriminantAnalysis.params_before_added["ridge"] == 0.0
    assert RegularizedDiscriminantAnalysis().ridge == 0.1

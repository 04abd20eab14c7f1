"""Infinity is an error for every naive Bayes model, at fit and at predict (NaN is missing)."""

from __future__ import annotations

import numpy as np
import pytest

import bayesrule as br
from bayesrule.estimators.registry import available
from reference_models import has_reference, reference_proba

_SHORT = {cls: short for short, cls in available().items()}

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


@pytest.mark.parametrize(
    "cls",
    [pytest.param(c, marks=pytest.mark.oracle) if has_reference(_SHORT[c]) else c for c in MODELS],
)
def test_nan_is_missing_not_an_error(cls):
    model = cls().fit(X, y)
    Xn = X.copy()
    Xn[3, 2] = np.nan
    proba = model.predict_proba(Xn)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    # scikit-learn's namesake or a NumPy transcription: fitted on every feature for
    # the complete rows, without feature 2 for row 3 (docs/naive_bayes.md)
    expected = reference_proba(_SHORT[cls], {}, X, y, X)
    if expected is not None:
        keep = [0, 1, 3]
        expected[3] = reference_proba(_SHORT[cls], {}, X[:, keep], y, X[3:4, keep])[0]
        np.testing.assert_allclose(proba, expected, rtol=0, atol=1e-8)


KEEP = [0, 1, 3]  # the features other than the one made missing


@pytest.mark.oracle
@pytest.mark.parametrize("cls", MODELS)
def test_nan_at_predict_equals_the_model_fitted_without_the_feature(cls):
    """docs/naive_bayes.md: a row with a feature missing is predicted as by the model
    fitted without that feature (the cleaned input); the other rows are untouched."""
    model = cls().fit(X, y)
    Xn = X.copy()
    Xn[3, 2] = np.nan
    proba = model.predict_proba(Xn)
    without = cls().fit(X[:, KEEP], y).predict_proba(X[3:4, KEEP])
    np.testing.assert_allclose(proba[3:4], without, rtol=1e-7, atol=1e-10)
    others = np.arange(len(X)) != 3
    np.testing.assert_array_equal(proba[others], model.predict_proba(X)[others])


@pytest.mark.oracle
@pytest.mark.parametrize("cls", MODELS)
def test_nan_at_fit_equals_the_feature_fitted_on_its_observed_rows(cls):
    """Fitting uses each feature's observed entries: feature 2's class densities are
    those of a model of feature 2 alone fitted on the rows where it is observed."""
    Xn = X.copy()
    Xn[3, 2] = np.nan
    model = cls().fit(Xn, y)
    rows = np.arange(len(X)) != 3
    alone = cls().fit(X[rows][:, [2]], y[rows])
    probe = np.full((5, 4), np.nan)
    probe[:, 2] = X[:5, 2]
    np.testing.assert_allclose(
        model.class_log_density(probe), alone.class_log_density(X[:5, [2]]), rtol=1e-7, atol=1e-9
    )
    # and the other features are those of the model fitted on every row
    full = cls().fit(X[:, KEEP], y)
    probe = Xn[:5].copy()
    probe[:, 2] = np.nan
    np.testing.assert_allclose(
        model.class_log_density(probe), full.class_log_density(X[:5, KEEP]), rtol=1e-7, atol=1e-9
    )

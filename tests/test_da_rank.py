"""The rank rule of LDA's ``tol`` (scikit-learn's svd solver, MASS's ``lda``) and unit invariance.

scikit-learn's ``svd`` solver and MASS's ``lda`` scale the within-class
residuals by each feature's standard deviation and keep the directions whose
singular values exceed ``tol``; bayesrule does the same in the correlation
scale of the pooled covariance (variances above ``tol**2``). The MASS rule
below is a NumPy transcription of ``lda.default`` (method "moment").
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn.discriminant_analysis as skda
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine

from bayesrule import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
    RegularizedDiscriminantAnalysis,
)
from reference_models import has_reference, reference_proba


def mass_rank(X, y, tol=1e-4):
    """The within-class rank of MASS's ``lda.default``: singular values of the scaled residuals > tol."""
    classes, g = np.unique(y, return_inverse=True)
    n, K = X.shape[0], classes.size
    means = np.stack([X[g == k].mean(axis=0) for k in range(K)])
    resid = X - means[g]
    sd = resid.std(axis=0, ddof=1)
    sv = np.linalg.svd(np.sqrt(1.0 / (n - K)) * resid / sd, compute_uv=False)
    return int(np.sum(sv > tol))


def sklearn_rank(X, y, tol=1e-4):
    """The within-class rank of scikit-learn 1.9's ``_solve_svd`` (std with ddof=0, 1/n)."""
    classes, g = np.unique(y, return_inverse=True)
    means = np.stack([X[g == k].mean(axis=0) for k in range(classes.size)])
    resid = X - means[g]
    std = resid.std(axis=0)
    std[std == 0] = 1.0
    sv = np.linalg.svd(resid / std / np.sqrt(X.shape[0]), compute_uv=False)
    return int(np.sum(sv > tol))


def _collinear(seed, sd, n=200, p=6, K=3):
    """Classes in p features, the last a combination of two others plus noise of ``sd``.

    Features have units from 1e-3 to 1e3; ``sd`` is the noise relative to the
    combination's within-class spread (0: exactly collinear).
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, size=n)
    X = rng.normal(size=(K, p))[y] * 2.0 + rng.normal(size=(n, p))
    X[:, -1] = X[:, 0] + X[:, 1]
    X[:, -1] += sd * np.sqrt(2.0) * rng.normal(size=n)
    return X * np.logspace(-3, 3, p), y


SETS = {
    "iris": load_iris(return_X_y=True),
    "wine": load_wine(return_X_y=True),
    "breast_cancer": load_breast_cancer(return_X_y=True),
    "digits": load_digits(return_X_y=True),
}
for _i, _sd in enumerate([0.0, 1e-9, 1e-6, 3e-5, 3e-4, 3e-3, 1e-2]):
    SETS[f"collinear-sd{_sd:g}"] = _collinear(_i, _sd)


def _fit_quiet(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return est.fit(X, y)


def test_breast_cancer_keeps_every_direction_as_sklearn_and_mass():
    # its smallest within-class correlation eigenvalue is 2.9e-4: a standard
    # deviation of 0.017, far above tol=1e-4 (the old rule dropped it)
    X, y = SETS["breast_cancer"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no collinearity to warn about
        ours = LinearDiscriminantAnalysis(bias=True).fit(X, y)
    ref = skda.LinearDiscriminantAnalysis().fit(X, y)
    assert ours.rank_ == mass_rank(X, y) == sklearn_rank(X, y) == 30
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-8)


@pytest.mark.parametrize("name", list(SETS))
@pytest.mark.parametrize("tol", [1e-4, 1e-2])
def test_rank_and_directions_agree_with_sklearn_svd(name, tol):
    X, y = SETS[name]
    ours = _fit_quiet(LinearDiscriminantAnalysis(bias=True, tol=tol), X, y)
    ref = skda.LinearDiscriminantAnalysis(tol=tol).fit(X, y)
    # a constant feature is a zero column for scikit-learn (not counted) and
    # is set aside by bayesrule
    assert ours.rank_ == sklearn_rank(X, y, tol)
    assert ours.scalings_.shape[1] == ref.scalings_.shape[1]
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-8)


@pytest.mark.parametrize("name", [n for n in SETS if n != "digits"])
def test_rank_agrees_with_mass(name):
    X, y = SETS[name]
    ours = _fit_quiet(LinearDiscriminantAnalysis(), X, y)  # MASS's moment estimate
    assert ours.rank_ == mass_rank(X, y)


@pytest.mark.parametrize("sd", [0.0, 1e-9, 1e-6, 3e-5])
def test_a_dropped_direction_warns_as_sklearn_did(sd):
    X, y = _collinear(7, sd)
    with pytest.warns(UserWarning, match=r"Variables are collinear: .* 1 direction\(s\)"):
        lda = LinearDiscriminantAnalysis().fit(X, y)
    assert lda.rank_ == X.shape[1] - 1


@pytest.mark.parametrize("sd", [3e-3, 1e-1])
def test_a_kept_direction_does_not_warn(sd):
    X, y = _collinear(8, sd)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lda = LinearDiscriminantAnalysis().fit(X, y)
    assert lda.rank_ == X.shape[1]


def test_constant_features_are_set_aside_without_a_warning():
    X, y = SETS["iris"]
    Xc = np.column_stack([X, np.full(len(y), 3.0), y * 2.0])  # constant; constant within classes
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lda = LinearDiscriminantAnalysis().fit(Xc, y)
    assert lda.rank_ == 4


# ------------------------------------------------------------ unit invariance
def _rescaled(X, seed):
    return X * 10.0 ** np.random.default_rng(seed).uniform(-3, 3, size=X.shape[1])


MODELS = [
    LinearDiscriminantAnalysis(),
    LinearDiscriminantAnalysis(bias=True, solver="lsqr"),
    LinearDiscriminantAnalysis(solver="eigen", shrinkage="oas"),
    QuadraticDiscriminantAnalysis(),
    QuadraticDiscriminantAnalysis(solver="eigen", shrinkage="auto"),
    RegularizedDiscriminantAnalysis(alpha=0.3),
    RegularizedDiscriminantAnalysis(alpha=0.0),
]


_SHORT = {
    LinearDiscriminantAnalysis: "lda",
    QuadraticDiscriminantAnalysis: "qda",
    RegularizedDiscriminantAnalysis: "rda",
}


def _changed(est) -> dict:
    default = est.__class__().get_params()
    return {k: v for k, v in est.get_params().items() if v != default[k]}


def _reference(est, X, y, Xq):
    """The probabilities of a NumPy transcription of the model (reference_models), or None."""
    return reference_proba(_SHORT[type(est)], _changed(est), X, y, Xq)


def _cases():
    for est in MODELS:
        names = ["iris", "wine", "breast_cancer"]
        if isinstance(est, LinearDiscriminantAnalysis):  # the others refuse collinear classes
            names += ["collinear-sd0.01", "collinear-sd0"]
        for name in names:
            # full-rank data: the transcription's covariances are invertible
            oracle = not name.startswith("collinear") and has_reference(
                _SHORT[type(est)], _changed(est)
            )
            marks = [pytest.mark.oracle] if oracle else []
            yield pytest.param(est, name, id=f"{est!r}-{name}", marks=marks)


@pytest.mark.parametrize(("est", "name"), list(_cases()))
@pytest.mark.parametrize("seed", [0, 1])
def test_predictions_do_not_depend_on_each_features_unit(est, name, seed):
    X, y = SETS[name]
    a = _fit_quiet(est.__class__(**est.get_params()), X, y)
    b = _fit_quiet(est.__class__(**est.get_params()), _rescaled(X, seed), y)
    np.testing.assert_array_equal(a.predict(X), b.predict(_rescaled(X, seed)))
    np.testing.assert_allclose(
        a.predict_proba(X), b.predict_proba(_rescaled(X, seed)), rtol=0, atol=1e-6
    )
    if not name.startswith("collinear"):
        # in the data's own units, where the transcription's covariances are well
        # conditioned: the model is that of a NumPy transcription
        reference = _reference(est, X, y, X)
        if reference is not None:
            np.testing.assert_allclose(a.predict_proba(X), reference, rtol=0, atol=1e-7)


@pytest.mark.parametrize("est", [RegularizedDiscriminantAnalysis(alpha=0.5, gamma=0.1, ridge=0.2)])
@pytest.mark.parametrize("factor", [1e-3, 1e3])
def test_gamma_and_ridge_do_not_depend_on_a_common_unit(est, factor):
    # Friedman's gamma and the ridge are relative to the data's average
    # variance: one unit for every feature (pixels, grams) changes nothing
    X, y = SETS["wine"]
    a = est.__class__(**est.get_params()).fit(X, y)
    b = est.__class__(**est.get_params()).fit(X * factor, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X * factor))
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X * factor), atol=1e-9)

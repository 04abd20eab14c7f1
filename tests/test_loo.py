"""Leave-one-out posteriors (``loo_predict_proba``) against explicit refits and MASS.

The MASS reference is an independent NumPy transcription of the ``CV=TRUE``
branch of ``lda.default`` in MASS's ``R/lda.R`` (W. N. Venables and B. D.
Ripley): rows and class means in the coordinates that whiten the pooled
covariance (divisor ``n - K``), the distance of row ``i`` to each class
corrected by the rank-one change that leaving the row out makes, with the
full data's class proportions as priors.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine

from bayesrule import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from bayesrule.estimators import _loo


def refits(est, X, y, w=None):
    """Row i's posteriors under ``clone(est).fit`` on every other row (columns: np.unique(y))."""
    n = X.shape[0]
    classes = np.unique(y)
    out = np.zeros((n, classes.size))
    for i in range(n):
        keep = np.arange(n) != i
        m = clone(est).fit(X[keep], y[keep], None if w is None else w[keep])
        out[i, np.searchsorted(classes, m.classes_)] = m.predict_proba(X[i : i + 1])[0]
    return out


def mass_cv_posterior(X, y, tol=1e-4):
    classes, g = np.unique(y, return_inverse=True)
    n, _ = X.shape
    K = classes.size
    counts = np.bincount(g)
    prior = counts / n
    group_means = np.stack([X[g == k].mean(axis=0) for k in range(K)])
    resid = X - group_means[g]
    col_sd = resid.std(axis=0, ddof=1)
    first = np.diag(1.0 / col_sd)
    _, sv, vt = np.linalg.svd(np.sqrt(1.0 / (n - K)) * resid @ first, full_matrices=False)
    r = int(np.sum(sv > tol))
    scaling = first @ vt[:r].T / sv[:r]
    x = X @ scaling
    dm = group_means @ scaling
    dist2 = np.stack([np.sum((x - dm[k]) ** 2, axis=1) for k in range(K)], axis=1)
    own = dist2[np.arange(n), g]
    nc = counts[g]
    cc = nc / ((nc - 1) * (n - K))
    shrink = (n - 1 - K) / (n - K)
    dist = np.empty_like(dist2)
    for k in range(K):
        tmp = np.sum((x - dm[k]) * (x - dm[g]), axis=1)
        dist[:, k] = shrink * (dist2[:, k] + cc * tmp**2 / (1 - cc * own))
    dist[np.arange(n), g] = own * shrink * (nc / (nc - 1)) ** 2 / (1 - cc * own)
    dist = 0.5 * dist - np.log(prior)
    e = np.exp(-(dist - dist.min(axis=1, keepdims=True)))
    return e / e.sum(axis=1, keepdims=True)


def _synthetic(seed=0, n=120, p=5, K=4, return_X_y=True):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n // K)
    X = rng.normal(size=(K, p))[y] * 2.0 + rng.normal(size=(n, p)) @ rng.normal(size=(p, p))
    X[:, 1] = X[:, 1] * 1e-3 + 1e4  # small units, far from the origin
    return X, y


def _every(load, step):
    X, y = load(return_X_y=True)
    return X[::step], y[::step]


# every third row: the explicit refits the tests compare with are n fits each
DATASETS = {
    "iris": lambda: _every(load_iris, 3),
    "wine": lambda: _every(load_wine, 3),
    "synthetic": lambda: _synthetic(n=60),
}

CLOSED_FORM = [
    LinearDiscriminantAnalysis(),
    LinearDiscriminantAnalysis(bias=True),
    LinearDiscriminantAnalysis(priors=[0.2, 0.3, 0.5]),
    LinearDiscriminantAnalysis(solver="eigen", shrinkage=0.3),
    # the wine subset's smallest class (16 rows, 13 features) left with 15 rows
    # has a correlation eigenvalue 6e-5, singular by the default tol=1e-4
    QuadraticDiscriminantAnalysis(tol=1e-6),
    QuadraticDiscriminantAnalysis(reg_param=0.2),
    QuadraticDiscriminantAnalysis(bias=True, reg_param=0.05),
    QuadraticDiscriminantAnalysis(solver="eigen", shrinkage=0.2, reg_param=0.1),
]


def _priors_for(est, K):
    if est.priors is not None and len(est.priors) != K:
        return clone(est).set_params(priors=np.full(K, 1.0 / K))
    return est


@pytest.fixture
def no_refits(monkeypatch):
    """Fail if a row is refitted: the closed form must serve every row."""

    def refuse(*args, **kwargs):
        raise AssertionError("a row was refitted")

    monkeypatch.setattr(_loo, "_refit_row", refuse)


@pytest.fixture
def refit_count(monkeypatch):
    """The rows refitted instead of served by the closed form."""
    calls = []
    exact = _loo._refit_row

    def counted(*args, **kwargs):
        calls.append(args[6])
        return exact(*args, **kwargs)

    monkeypatch.setattr(_loo, "_refit_row", counted)
    return calls


@pytest.mark.parametrize(
    ("name", "weighted"), [("iris", False), ("wine", True), ("synthetic", True)]
)
@pytest.mark.parametrize("est", CLOSED_FORM, ids=repr)
def test_closed_form_equals_explicit_refits(name, weighted, est, refit_count):
    X, y = DATASETS[name]()
    est = _priors_for(est, np.unique(y).size)
    w = np.random.default_rng(2).integers(1, 4, size=y.size).astype(float) if weighted else None
    got = est.loo_predict_proba(X, y, sample_weight=w)
    # the closed form serves the rows; a few whose removal leaves a class
    # covariance near-singular (QDA: 20 rows of 13 features in a class of the
    # wine subset) are refitted
    assert len(refit_count) <= (0.1 * y.size if name == "wine" else 0)
    ref = refits(est, X, y, w)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-8)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)
    assert np.array_equal(est.loo_predict(X, y, w), np.unique(y)[np.argmax(ref, axis=1)])


@pytest.mark.parametrize("name", ["iris", "wine", "synthetic"])
def test_lda_with_proportions_as_priors_is_mass_cv(name, no_refits):
    X, y = {"iris": load_iris, "wine": load_wine}.get(name, _synthetic)(return_X_y=True)
    prop = np.bincount(np.unique(y, return_inverse=True)[1]) / y.size
    got = LinearDiscriminantAnalysis(priors=prop).loo_predict_proba(X, y)
    np.testing.assert_allclose(got, mass_cv_posterior(X, y), rtol=0, atol=1e-8)
    # default priors re-estimate the proportions per refit: a (slightly) different answer
    literal = LinearDiscriminantAnalysis().loo_predict_proba(X, y)
    assert 0 < np.abs(literal - got).max() < 0.05


@pytest.mark.parametrize(
    "est",
    [
        LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto"),
        LinearDiscriminantAnalysis(solver="lsqr", shrinkage="oas"),
        LinearDiscriminantAnalysis(n_components=1, reduced_rank=True),
        QuadraticDiscriminantAnalysis(solver="eigen", shrinkage="oas", reg_param=0.01),
    ],
    ids=repr,
)
def test_settings_without_closed_form_are_refitted_exactly(est):
    X, y = load_iris(return_X_y=True)
    X, y = X[::3], y[::3]
    np.testing.assert_allclose(est.loo_predict_proba(X, y), refits(est, X, y), atol=1e-10)


def test_rank_deficient_lda_is_refitted_exactly():
    X, y = _synthetic(1, n=40)
    X = np.column_stack([X, X[:, 0] + X[:, 2], np.full(40, 3.0)])  # collinear and constant
    est = LinearDiscriminantAnalysis()
    assert est.fit(X, y).rank_ < X.shape[1]
    np.testing.assert_allclose(est.loo_predict_proba(X, y), refits(est, X, y), atol=1e-10)


def test_a_class_of_one_row_gets_probability_zero_without_it():
    X, y = _every(load_iris, 3)
    X, y = np.vstack([X, [[6.0, 3.0, 5.0, 2.0]]]), np.append(y, 3)
    for est in (LinearDiscriminantAnalysis(), QuadraticDiscriminantAnalysis(reg_param=0.1)):
        w = np.ones(y.size)
        w[-1] = 2.0  # QDA needs weight 2 for a class of one row
        got = est.loo_predict_proba(X, y, w)
        assert got[-1, 3] == 0.0 and np.isclose(got[-1].sum(), 1.0)
        forgot = clone(est).fit(X, y, w).forget(X[-1:], y[-1:], w[-1:])
        np.testing.assert_allclose(got[-1], forgot.predict_proba(X[-1:])[0], atol=1e-10)
        np.testing.assert_allclose(got[:-1], refits(est, X, y, w)[:-1], atol=1e-8)


def test_qda_class_left_with_one_row_is_an_error_naming_row_and_class():
    X, y = load_iris(return_X_y=True)
    X, y = np.vstack([X, [[6.0, 3.0, 5.0, 2.0], [6.5, 3.2, 5.1, 2.2]]]), np.append(y, ["x", "x"])
    y = y.astype(str)
    with pytest.raises(ValueError, match=r"row 150 \(class 'x'\).*class 'x' has 1 sample"):
        QuadraticDiscriminantAnalysis(reg_param=0.5).loo_predict_proba(X, y)


def test_qda_row_whose_removal_makes_its_class_singular():
    """A class lying in a plane but for one row: without that row it is singular."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(12, 3))
    a[:, 2] = a[:, 0] - a[:, 1]
    a[0, 2] += 1.0  # the one row off the plane
    b = rng.normal(size=(12, 3)) + 3.0
    X, y = np.vstack([a, b]), np.repeat([0, 1], 12)
    with pytest.raises(ValueError, match=r"leaving out row 0 \(class 0\).*singular"):
        QuadraticDiscriminantAnalysis().loo_predict_proba(X, y)
    # with reg_param the closed form holds for every row, that one included
    est = QuadraticDiscriminantAnalysis(reg_param=0.1)
    np.testing.assert_allclose(est.loo_predict_proba(X, y), refits(est, X, y), atol=1e-8)


def test_estimator_is_not_changed_and_bad_input_is_refused():
    X, y = load_wine(return_X_y=True)
    est = LinearDiscriminantAnalysis()
    est.loo_predict_proba(X, y)
    assert not hasattr(est, "stats_")
    fitted = QuadraticDiscriminantAnalysis().fit(X[:100], y[:100])
    before = fitted.predict_proba(X)
    fitted.loo_predict_proba(X, y)
    np.testing.assert_array_equal(fitted.predict_proba(X), before)
    from sklearn.covariance import EmpiricalCovariance

    with pytest.raises(ValueError, match="covariance_estimator"):
        LinearDiscriminantAnalysis(
            solver="eigen", covariance_estimator=EmpiricalCovariance()
        ).loo_predict_proba(X, y)
    with pytest.raises(ValueError, match="X has 0 samples|y"):
        LinearDiscriminantAnalysis().loo_predict_proba(X, y[:-1])
    with pytest.raises(ValueError, match="at least 2 classes"):
        LinearDiscriminantAnalysis().loo_predict_proba(X, np.zeros(y.size))


def test_float32_and_far_from_origin():
    X, y = _every(load_wine, 2)
    est = LinearDiscriminantAnalysis()
    ref = est.loo_predict_proba(X, y)
    np.testing.assert_allclose(est.loo_predict_proba(X + 1e6, y), ref, atol=1e-6)
    got32 = est.loo_predict_proba(X.astype(np.float32), y)
    np.testing.assert_allclose(got32, refits(est, X.astype(np.float32), y), atol=1e-8)


def test_many_exact_refits_warn(monkeypatch):
    monkeypatch.setattr(_loo, "_WARN_REFITS", 10)
    X, y = _every(load_iris, 5)
    with pytest.warns(UserWarning, match=r"30 rows are refitted one by one \(this setting"):
        LinearDiscriminantAnalysis(solver="eigen", shrinkage="oas").loo_predict_proba(X, y)


def test_classes_of_two_rows():
    """LDA: a class left with one row is fine; QDA: fine when its weight stays at 2 or more."""
    X, y = _every(load_iris, 3)
    X, y = np.vstack([X, [[6.0, 3.0, 5.0, 2.0], [6.4, 3.1, 5.3, 2.1]]]), np.append(y, [3, 3])
    for est in (LinearDiscriminantAnalysis(), LinearDiscriminantAnalysis(bias=True)):
        np.testing.assert_allclose(est.loo_predict_proba(X, y), refits(est, X, y), atol=1e-8)
    w = np.ones(y.size)
    w[-2:] = 3.0
    est = QuadraticDiscriminantAnalysis(reg_param=0.1)
    np.testing.assert_allclose(est.loo_predict_proba(X, y, w), refits(est, X, y, w), atol=1e-8)

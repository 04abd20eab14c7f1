"""LDA under the statistics contract.

A statistic fixed by the fit-time ``moments`` choice, never by a
hyperparameter that can change after fitting (shrinkage can change after
fitting; Ledoit-Wolf then needs fourth moments and says so), every derivation validating what it uses, predictions that do not
depend on where the data lie, the scatter statistics' subtraction, and the
models-layer family LDA derives.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import log_softmax
from scipy.stats import multivariate_normal

from bayesrule import LinearDiscriminantAnalysis as LDA
from bayesrule.models.tied import TiedGaussian
from bayesrule.stats import FourthMomentStats, PooledScatterStats, ScatterStats, StatisticsError


def _data(seed=0, n=300, p=5, k=3, offset=0.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3.0, p) + 2.0 * y[:, None] + offset
    return X, y


def _halves(X, y, cut=180):
    return (X[:cut], y[:cut]), (X[cut:], y[cut:])


# ------------------------------------------------- the statistic, fixed at fit time
def test_the_statistic_is_fixed_by_the_fit_time_moments_choice():
    X, y = _data()
    assert LDA._stats_type is ScatterStats
    plain = LDA(solver="eigen").statistics(X, y)
    assert (
        type(plain) is type(LDA(solver="eigen", shrinkage="oas").statistics(X, y)) is ScatterStats
    )
    fourth = LDA(solver="eigen", moments="fourth").statistics(X, y)
    assert (
        type(fourth)
        is type(LDA(solver="eigen", shrinkage="auto").statistics(X, y))
        is FourthMomentStats
    )
    assert (
        type(LDA(solver="eigen", shrinkage="auto", moments="second").statistics(X, y))
        is ScatterStats
    )
    # the scatter part is the same statistic
    assert plain.allclose(ScatterStats(**{f: getattr(fourth, f) for f in _SCATTER_FIELDS}))


_SCATTER_FIELDS = (
    "classes",
    "counts",
    "weights",
    "means",
    "scatter",
    "m3",
    "m4",
    "lower",
    "upper",
)


@pytest.mark.parametrize("shrinkage", ["auto", "ledoit-wolf", "oas", 0.3])
def test_shrinkage_set_after_fit_then_partial_fit(shrinkage):
    X, y = _data()
    (Xa, ya), (Xb, yb) = _halves(X, y)
    m = LDA(solver="eigen", moments="fourth").fit(Xa, ya)
    m.set_params(shrinkage=shrinkage)
    m.partial_fit(Xb, yb)
    ref = LDA(solver="eigen", shrinkage=shrinkage).fit(X, y)
    np.testing.assert_allclose(m.shrinkage_, ref.shrinkage_, rtol=1e-10)
    np.testing.assert_allclose(m.predict_proba(X), ref.predict_proba(X), atol=1e-10)


@pytest.mark.parametrize("shrinkage", ["oas", 0.3])
def test_shrinkage_without_fourth_moments_set_after_fit(shrinkage):
    X, y = _data()
    (Xa, ya), (Xb, yb) = _halves(X, y)
    m = LDA(solver="eigen").fit(Xa, ya).set_params(shrinkage=shrinkage)
    m.partial_fit(Xb, yb)
    ref = LDA(solver="eigen", shrinkage=shrinkage).fit(X, y)
    np.testing.assert_allclose(m.predict_proba(X), ref.predict_proba(X), atol=1e-10)


def test_ledoit_wolf_set_after_a_fit_without_fourth_moments_says_what_it_needs():
    X, y = _data()
    (Xa, ya), (Xb, yb) = _halves(X, y)
    m = LDA(solver="eigen").fit(Xa, ya)
    before = m.predict_proba(X)
    m.set_params(shrinkage="auto")
    with pytest.raises(ValueError, match=r"fourth moments.*moments='fourth'"):
        m.partial_fit(Xb, yb)
    np.testing.assert_array_equal(m.predict_proba(X), before)  # unchanged


def test_merge_of_models_with_different_shrinkage():
    X, y = _data()
    (Xa, ya), (Xb, yb) = _halves(X, y)
    plain = LDA(solver="eigen", moments="fourth").fit(Xa, ya)
    shrunk = LDA(solver="eigen", shrinkage="auto").fit(Xb, yb)
    # the merged model keeps the parameters of the model merged into
    for merged, params in ((plain.merge(shrunk), {}), (shrunk.merge(plain), {"shrinkage": "auto"})):
        ref = LDA(solver="eigen", **params).fit(X, y)
        np.testing.assert_allclose(merged.shrinkage_, ref.shrinkage_, rtol=1e-10)
        np.testing.assert_allclose(merged.predict_proba(X), ref.predict_proba(X), atol=1e-10)
    # with a model fitted without fourth moments: merged on what both hold, so a
    # model that needs none (OAS, a float, none) is the fit of the union, and one
    # that needs them says so clearly
    second = LDA(solver="eigen").fit(Xa, ya)
    for shrinkage in (None, "oas", 0.3):
        merged = (
            LDA(solver="eigen", shrinkage=shrinkage, moments="fourth").fit(Xb, yb).merge(second)
        )
        ref = LDA(solver="eigen", shrinkage=shrinkage).fit(np.vstack([Xb, Xa]), np.r_[yb, ya])
        np.testing.assert_allclose(merged.predict_proba(X), ref.predict_proba(X), atol=1e-10)
    with pytest.raises(ValueError, match="fourth"):
        shrunk.merge(second)


@pytest.mark.parametrize("shrinkage", ["auto", "ledoit-wolf", "oas", 0.2, None])
def test_from_stats_with_any_shrinkage_equals_fit(shrinkage):
    X, y = _data()
    stats = LDA(solver="eigen", moments="fourth").statistics(X, y)
    m = LDA.from_stats(stats, solver="eigen", shrinkage=shrinkage)
    ref = LDA(solver="eigen", shrinkage=shrinkage).fit(X, y)
    assert np.all(np.isfinite(m.shrinkage_))
    np.testing.assert_allclose(m.shrinkage_, ref.shrinkage_, rtol=1e-12)
    np.testing.assert_allclose(m.predict_proba(X), ref.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize("shrinkage", ["auto", "oas"])
def test_estimated_shrinkage_from_pooled_statistics_says_what_it_needs(shrinkage):
    X, y = _data()
    pooled = PooledScatterStats.from_data(X, y)
    with pytest.raises(ValueError, match=rf"shrinkage='{shrinkage}'.*each class's scatter"):
        LDA.from_stats(pooled, solver="eigen", shrinkage=shrinkage)
    # what the pooled scatter suffices for still works
    m = LDA.from_stats(pooled, solver="eigen", shrinkage=0.2)
    np.testing.assert_allclose(
        m.predict_proba(X),
        LDA(solver="eigen", shrinkage=0.2).fit(X, y).predict_proba(X),
        atol=1e-10,
    )


@pytest.mark.parametrize("bad", [5.0, -0.1, "ledoit"])
def test_invalid_shrinkage_set_after_fit_is_refused_at_the_next_derivation(bad):
    X, y = _data()
    (Xa, ya), (Xb, yb) = _halves(X, y)
    m = LDA(solver="eigen").fit(Xa, ya)
    before = m.predict_proba(X)
    m.set_params(shrinkage=bad)
    with pytest.raises(ValueError, match="shrinkage"):
        m.partial_fit(Xb, yb)
    np.testing.assert_array_equal(m.predict_proba(X), before)  # unchanged


def test_the_family_validates_shrinkage_itself():
    X, y = _data()
    stats = ScatterStats.from_data(X, y)
    with pytest.raises(ValueError, match="shrinkage must be"):
        TiedGaussian.from_stats(stats, shrinkage=1.5)
    with pytest.raises(ValueError, match="tol must be"):
        TiedGaussian.from_stats(stats, tol=-1.0)


# ----------------------------------------------------------------- shift invariance
def _exact_data(offset, seed=3, pairs=60, p=4, k=4):
    """Rows ``m_k +- r`` on a grid of 2^-20: ``X + offset`` is exact for offsets
    up to 1e8, and so are the class means and the overall mean (equal classes,
    means on a grid of 1/4), so any difference is the algorithm's."""
    rng = np.random.default_rng(seed)
    R = np.round(rng.normal(size=(k, pairs, p)) * 2**20) / 2**20
    M = np.round(rng.normal(size=(k, p)) * 4) / 4 * 1.5
    X = np.concatenate([np.concatenate([M[j] + R[j], M[j] - R[j]]) for j in range(k)])
    y = np.repeat(np.arange(k), 2 * pairs)
    Xs = X + offset
    assert np.array_equal(Xs - offset, X)
    return Xs, y


@pytest.mark.parametrize("offset", [1e6, 1e8])
@pytest.mark.parametrize("k", [2, 4])
def test_prediction_does_not_depend_on_where_the_data_lie(offset, k):
    X0, y = _exact_data(0.0, k=k)
    X1, _ = _exact_data(offset, k=k)
    m0, m1 = LDA(solver="eigen").fit(X0, y), LDA(solver="eigen").fit(X1, y)
    np.testing.assert_allclose(m1.predict_proba(X1), m0.predict_proba(X0), rtol=0, atol=1e-8)
    np.testing.assert_allclose(
        m1.predict_log_proba(X1), m0.predict_log_proba(X0), rtol=1e-8, atol=1e-8
    )
    np.testing.assert_allclose(m1.score_samples(X1), m0.score_samples(X0), rtol=0, atol=1e-8)
    np.testing.assert_allclose(m1.transform(X1), m0.transform(X0), rtol=0, atol=1e-8)
    np.testing.assert_array_equal(m1.predict(X1), m0.predict(X0))
    if k == 2:
        np.testing.assert_allclose(
            m1.decision_function(X1), m0.decision_function(X0), rtol=0, atol=1e-8
        )


# ----------------------------------------------------- the fast path and sklearn's form
def test_products_about_the_origin_equal_products_about_the_centre():
    # near the origin the discriminant is taken from X itself; 50 standard
    # deviations away, from X - c: the same probabilities
    X, y = _exact_data(0.0)
    near, far = LDA(solver="eigen").fit(X, y), LDA(solver="eigen").fit(X + 64.0, y)
    assert near._model._origin and not far._model._origin
    np.testing.assert_allclose(near.predict_proba(X), far.predict_proba(X + 64.0), atol=1e-12)


def test_fast_path_agrees_with_the_densities():
    X, y = _data(k=4)
    m = LDA(solver="eigen").fit(X, y)
    joint = m.class_log_density(X) + np.log(m.priors_)
    np.testing.assert_allclose(m.predict_log_proba(X), log_softmax(joint, axis=1), atol=1e-10)
    ref = np.column_stack(
        [multivariate_normal(m.means_[j], m.covariance_).logpdf(X) for j in range(4)]
    )
    np.testing.assert_allclose(m.class_log_density(X), ref, rtol=1e-10)


def test_decision_function_is_sklearns_linear_form():
    X, y = _data(k=4)
    m = LDA(solver="eigen").fit(X, y)
    np.testing.assert_allclose(m.decision_function(X), X @ m.coef_.T + m.intercept_, rtol=1e-9)
    X2, y2 = _data(k=2)
    m2 = LDA(solver="eigen").fit(X2, y2)
    np.testing.assert_allclose(
        m2.decision_function(X2), X2 @ m2.coef_[0] + m2.intercept_[0], rtol=1e-9, atol=1e-9
    )


def test_class_model_is_a_gaussian_of_the_family():
    X, y = _data()
    m = LDA(solver="eigen").fit(X, y)
    g = m.class_model(1)
    np.testing.assert_allclose(g.mean, m.means_[1])
    np.testing.assert_allclose(g.covariance, m.covariance_, rtol=1e-10, atol=1e-12)
    assert len(m._model) == 3
    np.testing.assert_allclose(g.log_prob(X), m.class_log_density(X)[:, 1], rtol=1e-10)


# --------------------------------------------------------- subtraction of the scatters
@pytest.mark.parametrize("cls", [ScatterStats, PooledScatterStats])
@pytest.mark.parametrize("offset", [0.0, 1e3])
@pytest.mark.parametrize("weighted", [False, True])
def test_subtract_undoes_merge(cls, offset, weighted):
    X, y = _data(seed=5, n=400, offset=offset)
    w = np.random.default_rng(6).integers(0, 4, 400).astype(float) if weighted else None
    cut = 250
    wa, wb = (None, None) if w is None else (w[:cut], w[cut:])
    whole = cls.from_data(X, y, w)
    rest = whole.subtract(cls.from_data(X[cut:], y[cut:], wb))
    expected = cls.from_data(X[:cut], y[:cut], wa)
    # subtracting keeps the feature ranges (an envelope; see ClassStatistic)
    assert rest.allclose(expected.with_bounds(whole.lower, whole.upper), rtol=1e-10)


@pytest.mark.parametrize("cls", [ScatterStats, PooledScatterStats])
def test_subtracting_a_whole_class_leaves_it_empty(cls):
    X, y = _data(seed=7, n=300, k=3)
    gone = y == 2
    whole = cls.from_data(X, y)
    rest = whole.subtract(cls.from_data(X[gone], y[gone]))
    expected = cls.from_data(X[~gone], y[~gone], classes=[0, 1, 2])
    # subtracting keeps the feature ranges (an envelope; see ClassStatistic)
    assert rest.allclose(expected.with_bounds(whole.lower, whole.upper), rtol=1e-10)
    empty = cls.empty([2], X.shape[1])
    assert rest.counts[2] == 0 and rest.weights[2] == 0.0
    assert np.all(rest.means[2] == 0.0) and np.all(empty.means == 0.0)
    if cls is ScatterStats:
        assert np.all(rest.scatter[2] == 0.0) and np.all(rest.m3[2] == 0.0) and rest.m4[2] == 0.0


@pytest.mark.parametrize("cls", [ScatterStats, PooledScatterStats])
def test_subtracting_rows_that_were_not_there_is_refused(cls):
    X, y = _data(seed=8, n=300)
    small = cls.from_data(X[:200] * 0.01, y[:200])
    wide = cls.from_data(X[200:] * 100.0, y[200:])
    with pytest.raises(StatisticsError, match="cannot"):
        small.merge(cls.from_data(X[200:250], y[200:250])).subtract(wide)


def test_lda_forget_equals_fit_on_the_rest():
    X, y = _data(seed=9, n=400, k=3)
    m = LDA(solver="eigen", shrinkage="auto").fit(X, y)
    m.forget(X[300:], y[300:])
    ref = LDA(solver="eigen", shrinkage="auto").fit(X[:300], y[:300])
    assert m.shrinkage_ == pytest.approx(ref.shrinkage_, rel=1e-9)
    np.testing.assert_allclose(m.predict_proba(X), ref.predict_proba(X), atol=1e-9)


# ------------------------------------------------------- ScatterStats's zero columns
def test_columns_zero_within_a_class_are_skipped_exactly():
    # per class, some columns are zero in every row (as MNIST's unlit pixels):
    # those are left out of the class's products, with the same statistics
    rng = np.random.default_rng(10)
    n, p, k = 3000, 12, 3
    y = rng.integers(0, k, n)
    X = rng.normal(size=(n, p)) + 3.0
    for j in range(k):
        X[np.ix_(y == j, np.arange(j, p, 4))] = 0.0
    X[5, 0] = 0.0  # a zero in a live column changes nothing
    w = rng.uniform(0.0, 2.0, n)
    s = ScatterStats.from_data(X, y, w)
    for j in range(k):
        rows = y == j
        wj = w[rows]
        mean = wj @ X[rows] / wj.sum()
        R = X[rows] - mean
        np.testing.assert_allclose(s.means[j], mean, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(s.scatter[j], (R * wj[:, None]).T @ R, rtol=1e-11, atol=1e-10)
        r2 = np.einsum("ij,ij->i", R, R)
        np.testing.assert_allclose(s.m4[j], wj @ (r2 * r2), rtol=1e-11)
        np.testing.assert_allclose(s.m3[j], (wj * r2) @ R, rtol=1e-9, atol=1e-8)
        dead = np.arange(j, p, 4)
        assert np.all(s.scatter[j][dead] == 0.0) and np.all(s.means[j][dead] == 0.0)


def test_a_non_finite_value_in_a_zero_column_is_not_skipped():
    X = np.zeros((200, 3))
    X[:, 0] = np.arange(200.0)
    y = np.arange(200) % 2
    X[7, 2] = np.nan
    s = ScatterStats.from_data(X, y)
    assert np.isnan(s.means[1, 2])

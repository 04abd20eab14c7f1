"""The naive Bayes families under the statistics contract.

``Family.from_stats`` against scipy.stats, goodness of fit of ``sample``
against ``log_prob``, the errors of the derivations, and the two naive Bayes
bugs of the contract's issue (4: all-missing rows of the multinomial models;
8: the diagonal Gaussian far from the origin with a declared, unseen class).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats as st

import bayesrule as br
from bayesrule.models import (
    Bernoulli,
    Categorical,
    ComplementWeights,
    DiagonalGaussian,
    KernelDensity,
    Multinomial,
    Poisson,
)
from bayesrule.stats import CategoryStats, CountStats, DiagonalStats, ValueCountStats


# ------------------------------------------------------------------ data
def _gauss(seed=0, n=90, p=3):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    X = rng.normal(size=(n, p)) * (1.0 + y[:, None]) + 3.0 * y[:, None]
    return X, y


def _counts(seed=1, n=120, p=4):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    rates = rng.gamma(2.0, 1.5, size=(3, p))
    return rng.poisson(rates[y]).astype(float), y


# ============================================================ bug 4
# A row with nothing observed gets the priors; missing features carrying most
# of the mass lose no accuracy.
MULTINOMIAL = [
    br.MultinomialNB(),
    br.ComplementNB(add_prior=True),
    br.ComplementNB(norm=True, add_prior=True),
]


@pytest.mark.parametrize("est", MULTINOMIAL, ids=repr)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_all_missing_row_gets_the_priors(est, sparse):
    X, y = _counts()
    w = np.where(y == 0, 3.0, 1.0)  # priors far from uniform
    model = est.__class__(**est.get_params()).fit(X, y, sample_weight=w)
    T = X[:3].copy()
    T[1] = np.nan
    proba = model.predict_proba(sp.csr_matrix(T) if sparse else T)
    np.testing.assert_allclose(proba[1], model.priors_, rtol=1e-12)


@pytest.mark.parametrize("est", MULTINOMIAL, ids=repr)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_missing_heavy_features_equal_the_model_without_them(est, sparse):
    # features 0 and 1 hold nearly all the counts: with them missing, the
    # observed mass is ~1e-11 of the whole, where 1 - (missing mass) loses digits
    rng = np.random.default_rng(2)
    X, y = _counts(seed=3, p=6)
    X[:, :2] = rng.poisson(1e12, size=(y.size, 2))
    full = est.__class__(**est.get_params()).fit(X, y)
    without = est.__class__(**est.get_params()).fit(X[:, 2:], y)
    T = X.copy()
    T[:, :2] = np.nan
    got = full.predict_proba(sp.csr_matrix(T) if sparse else T)
    np.testing.assert_allclose(got, without.predict_proba(X[:, 2:]), rtol=1e-9, atol=1e-12)


def test_multinomial_log_prob_of_nothing_observed_is_zero():
    model = Multinomial(np.log([[0.2, 0.8], [0.5, 0.5]]))
    np.testing.assert_array_equal(model.log_prob(np.full((1, 2), np.nan)), [[0.0, 0.0]])


# ============================================================ bug 8
@pytest.mark.parametrize("cls", [br.GaussianNB, br.DiagonalLDA])
def test_far_from_origin_with_an_unseen_declared_class(cls):
    X, y = _gauss(seed=4)
    ref = cls().partial_fit(X, y, classes=[0, 1, 2, 3])
    far = cls().partial_fit(X + 1e8, y, classes=[0, 1, 2, 3])
    np.testing.assert_allclose(far.predict_proba(X + 1e8), ref.predict_proba(X), atol=1e-8)


def test_diagonal_gaussian_is_centred_on_the_present_classes():
    X, y = _gauss(seed=5)
    s = DiagonalStats.from_data(X + 1e8, y, classes=[0, 1, 2, 3])
    model = DiagonalGaussian.from_stats(s, var_smoothing=0.0)
    assert len(model) == 3
    np.testing.assert_allclose(model.center, (X + 1e8).mean(axis=0), rtol=1e-15)


# ===================================================== from_stats vs scipy
def test_diagonal_gaussian_from_stats_is_normal():
    X, y = _gauss(seed=6)
    model = DiagonalGaussian.from_stats(DiagonalStats.from_data(X, y), var_smoothing=0.0)
    T = np.random.default_rng(7).normal(size=(20, 3)) * 3
    for k in range(3):
        ref = st.norm(X[y == k].mean(axis=0), X[y == k].std(axis=0)).logpdf(T).sum(axis=1)
        np.testing.assert_allclose(model.log_prob(T)[:, k], ref, rtol=1e-10)


def test_diagonal_gaussian_from_stats_pooled_shares_the_variance():
    X, y = _gauss(seed=8)
    model = DiagonalGaussian.from_stats(
        DiagonalStats.from_data(X, y), var_smoothing=0.0, pooled=True, ddof=1.0
    )
    resid = X - np.stack([X[y == k].mean(axis=0) for k in range(3)])[y]
    var = (resid**2).sum(axis=0) / (y.size - 3)
    T = np.random.default_rng(9).normal(size=(10, 3))
    for k in range(3):
        ref = st.norm(X[y == k].mean(axis=0), np.sqrt(var)).logpdf(T).sum(axis=1)
        np.testing.assert_allclose(model.log_prob(T)[:, k], ref, rtol=1e-10)


@pytest.mark.parametrize("alpha", [1.0, 0.3])
def test_bernoulli_from_stats_is_bernoulli(alpha):
    X, y = _counts(seed=10)
    B = (X > 2).astype(float)
    model = Bernoulli.from_stats(CountStats.from_data(B, y), alpha=alpha)
    for k in range(3):
        p = (B[y == k].sum(axis=0) + alpha) / ((y == k).sum() + 2 * alpha)
        ref = st.bernoulli(p).logpmf(B).sum(axis=1)
        np.testing.assert_allclose(model.log_prob(B)[:, k], ref, rtol=1e-10)


@pytest.mark.parametrize("alpha", [1.0, np.array([0.5, 1.0, 2.0, 0.1])])
def test_multinomial_from_stats_is_multinomial(alpha):
    X, y = _counts(seed=11)
    model = Multinomial.from_stats(CountStats.from_data(X, y), alpha=alpha)
    for k in range(3):
        theta = X[y == k].sum(axis=0) + alpha
        theta /= theta.sum()
        ref = [st.multinomial(int(row.sum()), theta).logpmf(row) for row in X[:10]]
        np.testing.assert_allclose(model.log_prob(X[:10])[:, k], ref, rtol=1e-10)
        assert model.mean_total[k] == pytest.approx(X[y == k].sum(axis=1).mean())


def test_poisson_from_stats_is_poisson():
    X, y = _counts(seed=12)
    model = Poisson.from_stats(CountStats.from_data(X, y), alpha=0.5)
    for k in range(3):
        rate = (X[y == k].sum(axis=0) + 0.5) / (y == k).sum()
        ref = st.poisson(rate).logpmf(X).sum(axis=1)
        np.testing.assert_allclose(model.log_prob(X)[:, k], ref, rtol=1e-10)


def test_categorical_from_stats_is_smoothed_frequencies():
    X, y = _counts(seed=13)
    X = np.minimum(X, 4.0)
    model = Categorical.from_stats(CategoryStats.from_data(X, y), alpha=0.5, min_categories=6)
    for k in range(3):
        ref = np.zeros(X.shape[0])
        for j in range(X.shape[1]):
            counts = np.bincount(X[y == k, j].astype(int), minlength=6)
            ref += np.log((counts + 0.5) / (counts.sum() + 0.5 * 6))[X[:, j].astype(int)]
        np.testing.assert_allclose(model.log_prob(X)[:, k], ref, rtol=1e-12)


def test_kernel_density_from_stats_is_gaussian_kde():
    X, y = _gauss(seed=14)
    model = KernelDensity.from_stats(
        ValueCountStats.from_data(X, y), bandwidth_floor=0.0, method="exact"
    )
    T = np.linspace(-4, 12, 15)[:, None].repeat(3, axis=1)
    for k in range(3):
        ref = sum(st.gaussian_kde(X[y == k, j]).logpdf(T[:, j]) for j in range(3))
        np.testing.assert_allclose(model.log_prob(T)[:, k], ref, rtol=1e-10)


def test_complement_weights_from_stats_are_rennie_weights():
    X, y = _counts(seed=15)
    model = ComplementWeights.from_stats(CountStats.from_data(X, y), alpha=1.0)
    for k in range(3):
        comp = X[y != k].sum(axis=0) + 1.0
        np.testing.assert_allclose(
            model.log_prob(X)[:, k], -X @ np.log(comp / comp.sum()), rtol=1e-12
        )
    assert isinstance(model[1], Multinomial)


# ============================================ only the classes with data
FAMILIES = [
    (DiagonalGaussian, DiagonalStats, "gauss", {}),
    (DiagonalGaussian, DiagonalStats, "gauss", {"pooled": True}),
    (Bernoulli, CountStats, "binary", {}),
    (Multinomial, CountStats, "counts", {}),
    (ComplementWeights, CountStats, "counts", {}),
    (Poisson, CountStats, "counts", {}),
    (Categorical, CategoryStats, "counts", {}),
    (KernelDensity, ValueCountStats, "gauss", {}),
]


def _family_data(kind):
    if kind == "gauss":
        return _gauss(seed=16)
    X, y = _counts(seed=17)
    return ((X > 2).astype(float), y) if kind == "binary" else (X, y)


@pytest.mark.parametrize(
    "family, stat, kind, hyper", FAMILIES, ids=lambda v: getattr(v, "__name__", str(v))
)
def test_from_stats_models_the_classes_with_weight(family, stat, kind, hyper):
    X, y = _family_data(kind)
    s = stat.from_data(X, y, classes=[0, 1, 2, 7])
    model = family.from_stats(s, **hyper)
    assert len(model) == 3
    assert model.log_prob(X[:5]).shape == (5, 3)
    assert model[2].sample(4, np.random.default_rng(0)).shape == (4, X.shape[1])


# ===================================================== errors of derivation
def test_errors_name_the_parameter_and_feature():
    X, y = _counts(seed=18)
    names = ["a", "b", "c", "d"]
    counts = CountStats.from_data(X, y)
    with pytest.raises(ValueError, match=r"alpha must be non-negative.*feature 'c'"):
        Multinomial.from_stats(counts, alpha=[1.0, 1.0, -1.0, 1.0], feature_names=names)
    with pytest.raises(ValueError, match=r"alpha must be a float or an array of one value"):
        Bernoulli.from_stats(counts, alpha=[1.0, 1.0])
    with pytest.raises(ValueError, match=r"alpha=0.0 leaves feature 'b' with rate 0"):
        Xz = X.copy()
        Xz[:, 1] = 0.0
        Poisson.from_stats(CountStats.from_data(Xz, y), alpha=0.0, feature_names=names)
    Xn = X.copy()
    Xn[y == 2, 3] = np.nan
    with pytest.raises(ValueError, match=r"feature 'd' is missing .* class 2"):
        Categorical.from_stats(CategoryStats.from_data(Xn, y), feature_names=names)
    with pytest.raises(ValueError, match=r"min_categories must be"):
        Categorical.from_stats(CategoryStats.from_data(X, y), min_categories=[2, 2])
    G, gy = _gauss(seed=19)
    with pytest.raises(ValueError, match=r"bandwidth must be positive for feature 'b'"):
        KernelDensity.from_stats(
            ValueCountStats.from_data(G, gy), bandwidth=[1.0, 0.0, 1.0], feature_names=names
        )
    with pytest.raises(ValueError, match=r"var_smoothing must be a non-negative float"):
        DiagonalGaussian.from_stats(DiagonalStats.from_data(G, gy), var_smoothing=-1.0)
    G[gy == 1, 0] = 5.0
    with pytest.raises(ValueError, match=r"feature 'a' has zero variance .* class 1"):
        DiagonalGaussian.from_stats(
            DiagonalStats.from_data(G, gy), var_smoothing=0.0, feature_names=names
        )


# ===================================================== sample vs log_prob
def _chi2_pvalue(observed, expected):
    keep = expected > 5
    obs, exp = observed[keep], expected[keep]
    return st.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


def _continuous_fit(model, x, lo, hi, bins=30):
    """Chi-square of a 1-D sample's histogram against the integral of exp(log_prob)."""
    edges = np.linspace(lo, hi, bins + 1)
    grid = np.linspace(lo, hi, bins * 200 + 1)
    dens = np.exp(model.log_prob(grid[:, None]))
    cdf = np.concatenate([[0.0], np.cumsum((dens[1:] + dens[:-1]) / 2 * np.diff(grid))])
    expected = np.diff(np.interp(edges, grid, cdf)) * x.size
    observed = np.histogram(x, edges)[0]
    return _chi2_pvalue(observed.astype(float), expected)


def test_diagonal_gaussian_sample_matches_log_prob():
    X, y = _gauss(seed=20, p=1)
    model = DiagonalGaussian.from_stats(DiagonalStats.from_data(X, y))[2]
    x = model.sample(4000, np.random.default_rng(21))[:, 0]
    m, sd = model.mean[0, 0], np.sqrt(model.var[0, 0])
    assert _continuous_fit(model, x, m - 4 * sd, m + 4 * sd) > 1e-3


def test_kernel_density_sample_matches_log_prob():
    X, y = _gauss(seed=22, p=1)
    model = KernelDensity.from_stats(ValueCountStats.from_data(X, y), bandwidth=0.4)[1]
    x = model.sample(4000, np.random.default_rng(23))[:, 0]
    assert _continuous_fit(model, x, x.min() - 1, x.max() + 1) > 1e-3


def _discrete_fit(model, x):
    """Chi-square of the distinct sampled rows against exp(log_prob) of each."""
    rows, counts = np.unique(x, axis=0, return_counts=True)
    expected = np.exp(model.log_prob(rows)) * x.shape[0]
    assert expected.sum() <= x.shape[0] * (1 + 1e-9)  # log_prob is a probability
    return _chi2_pvalue(counts.astype(float), expected)


def test_bernoulli_sample_matches_log_prob():
    B = (_counts(seed=24)[0] > 2).astype(float)
    model = Bernoulli.from_stats(CountStats.from_data(B, _counts(seed=24)[1]))[0]
    x = model.sample(4000, np.random.default_rng(25))
    assert _discrete_fit(model, x) > 1e-3


def test_poisson_sample_matches_log_prob():
    X, y = _counts(seed=26, p=2)
    model = Poisson.from_stats(CountStats.from_data(X, y))[1]
    assert _discrete_fit(model, model.sample(4000, np.random.default_rng(27))) > 1e-3


def test_categorical_sample_matches_log_prob():
    X, y = _counts(seed=28, p=2)
    model = Categorical.from_stats(CategoryStats.from_data(np.minimum(X, 3.0), y))[0]
    assert _discrete_fit(model, model.sample(4000, np.random.default_rng(29))) > 1e-3


def test_multinomial_sample_matches_log_prob_given_the_total():
    X, y = _counts(seed=30, p=3)
    model = Multinomial.from_stats(CountStats.from_data(X, y))[2]
    x = model.sample(6000, np.random.default_rng(31))
    assert model.mean_total[0] == pytest.approx(x.sum(axis=1).mean(), rel=0.05)
    t = int(np.median(x.sum(axis=1)))
    assert _discrete_fit(model, x[x.sum(axis=1) == t]) > 1e-3


# ============================================================ _prepare_X
def test_binarizing_is_a_preparation_that_changes_nothing():
    X, y = _counts(seed=32)
    est = br.BernoulliNB(binarize=2.0)
    before = X.copy()
    prepared = est._prepare_X(X)
    np.testing.assert_array_equal(prepared, (X > 2.0).astype(float))
    np.testing.assert_array_equal(X, before)
    assert est.get_params()["binarize"] == 2.0 and not hasattr(est, "stats_")
    fitted = est.fit(X, y)
    np.testing.assert_array_equal(fitted.feature_count_, [
        (X[y == k] > 2.0).sum(axis=0) for k in range(3)
    ])  # fmt: skip


def test_categorical_codes_are_checked_when_prepared():
    X, y = _counts(seed=33)
    model = br.CategoricalNB().fit(X, y)
    T = X[:2].copy()
    T[1, 2] = 1.5
    with pytest.raises(ValueError, match=r"column 2 .*non-negative integer.*1.5"):
        model.predict(T)

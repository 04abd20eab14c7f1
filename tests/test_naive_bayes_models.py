"""Class models of the naive Bayes family against scipy.stats, and their samplers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayesrule.models import (
    Bernoulli,
    Categorical,
    DiagonalGaussian,
    KernelDensity,
    Multinomial,
    Poisson,
)

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("mean, var", [([0.0, 1.0], [1.0, 4.0]), ([1e4, -3.0], [0.01, 2.0])])
def test_diagonal_gaussian_log_prob(mean, var):
    X = RNG.normal(mean, np.sqrt(var), size=(20, 2))
    expected = stats.norm(mean, np.sqrt(var)).logpdf(X).sum(axis=1)
    np.testing.assert_allclose(DiagonalGaussian(mean, var).log_prob(X), expected, rtol=1e-10)
    X[0, 1] = np.nan
    assert DiagonalGaussian(mean, var).log_prob(X)[0] == pytest.approx(
        stats.norm(mean[0], np.sqrt(var[0])).logpdf(X[0, 0]), rel=1e-10
    )


@pytest.mark.parametrize("p", [[0.1, 0.5, 0.9], [0.01, 0.3, 0.99]])
def test_bernoulli_log_prob(p):
    X = (RNG.random((30, 3)) < 0.5).astype(float)
    expected = stats.bernoulli(p).logpmf(X).sum(axis=1)
    np.testing.assert_allclose(Bernoulli(np.log(p)).log_prob(X), expected, rtol=1e-10)


@pytest.mark.parametrize("theta", [[0.2, 0.3, 0.5], [0.7, 0.1, 0.2]])
def test_multinomial_log_prob(theta):
    X = RNG.multinomial(10, theta, size=15).astype(float)
    expected = stats.multinomial(10, theta).logpmf(X)
    np.testing.assert_allclose(Multinomial(np.log(theta)).log_prob(X), expected, rtol=1e-10)


@pytest.mark.parametrize("rate", [[0.5, 3.0], [10.0, 0.1]])
def test_poisson_log_prob(rate):
    X = RNG.poisson(rate, size=(20, 2)).astype(float)
    expected = stats.poisson(rate).logpmf(X).sum(axis=1)
    np.testing.assert_allclose(Poisson(rate).log_prob(X), expected, rtol=1e-10)


def test_categorical_log_prob():
    probs = np.array([[0.2, 0.5, 0.3], [0.6, 0.4, 0.0]])
    with np.errstate(divide="ignore"):
        model = Categorical(np.log(probs), np.log([0.01, 0.02]))
    X = np.array([[0.0, 1.0], [2.0, 0.0], [5.0, 7.0]])
    np.testing.assert_allclose(
        model.log_prob(X), np.log([0.2 * 0.4, 0.3 * 0.6, 0.01 * 0.02]), rtol=1e-12
    )


def test_kernel_density_log_prob():
    x = RNG.normal(size=50)
    kde = stats.gaussian_kde(x)
    v, c = np.unique(x, return_counts=True)
    model = KernelDensity([0, v.size], v, c.astype(float), [np.sqrt(kde.covariance[0, 0])])
    T = np.linspace(-4, 4, 25)[:, None]
    np.testing.assert_allclose(model.log_prob(T), kde.logpdf(T[:, 0]), rtol=1e-10)


# ----------------------------------------------------------------- samplers
def _chi2_pvalue(observed, expected):
    keep = expected > 5
    return stats.chisquare(
        observed[keep], expected[keep] * observed[keep].sum() / expected[keep].sum()
    ).pvalue


def test_diagonal_gaussian_sample_fits():
    x = DiagonalGaussian([1.0, -2.0], [4.0, 0.25]).sample(2000, np.random.default_rng(1))
    assert stats.kstest(x[:, 0], stats.norm(1.0, 2.0).cdf).pvalue > 1e-3
    assert stats.kstest(x[:, 1], stats.norm(-2.0, 0.5).cdf).pvalue > 1e-3


def test_discrete_samples_fit():
    rng = np.random.default_rng(2)
    b = Bernoulli(np.log([0.3])).sample(4000, rng)
    assert stats.binomtest(int(b.sum()), 4000, 0.3).pvalue > 1e-3
    rate = 2.5
    x = Poisson([rate]).sample(4000, rng)[:, 0].astype(int)
    k = np.arange(12)
    assert _chi2_pvalue(np.bincount(x, minlength=12)[:12], 4000 * stats.poisson(rate).pmf(k)) > 1e-3
    theta = np.array([0.2, 0.3, 0.5])
    m = Multinomial(np.log(theta), mean_total=20.0).sample(2000, rng)
    assert _chi2_pvalue(m.sum(axis=0), theta * m.sum()) > 1e-3
    c = Categorical(np.log([[0.1, 0.6, 0.3]]), [np.log(0.01)]).sample(3000, rng)[:, 0].astype(int)
    assert _chi2_pvalue(np.bincount(c, minlength=3), 3000 * np.array([0.1, 0.6, 0.3])) > 1e-3


def test_kernel_density_sample_fits():
    v = np.array([-1.0, 2.0])
    model = KernelDensity([0, 2], v, [1.0, 3.0], [0.5])
    x = model.sample(3000, np.random.default_rng(3))[:, 0]

    def cdf(t):
        return 0.25 * stats.norm(-1, 0.5).cdf(t) + 0.75 * stats.norm(2, 0.5).cdf(t)

    assert stats.kstest(x, cdf).pvalue > 1e-3

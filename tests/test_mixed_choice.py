"""The leave-one-out scores behind MixedNB's choice of kinds, against refits without each row."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayesrule.estimators._mixed_choice import (
    _categorical_loo,
    _gaussian_loo,
    _kernel_loo,
    _poisson_loo,
    kind_parts,
)
from bayesrule.stats import CategoryStats, CountStats, DiagonalStats, ValueCountStats


def _rows(seed: int, integers: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, 60)
    x = rng.poisson(2.0 + y) * 1.0 if integers else rng.normal(y, 1.0 + y)
    return x, y


def _table(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values and their per-class counts (the statistics' form)."""
    v = np.unique(x)
    W = np.stack([np.array([np.sum((x == u) & (y == k)) for u in v], float) for k in range(3)])
    return v, W


def _each_held_out(x, y, score):
    """Per class and distinct value, ``score(rest_of_class, value)`` with one such row out."""
    v, W = _table(x, y)
    out = np.zeros(W.shape)
    for k in range(3):
        for i, u in enumerate(v):
            if W[k, i] == 0:
                continue
            rows = np.flatnonzero(y == k)
            drop = rows[np.flatnonzero(x[rows] == u)[0]]
            out[k, i] = score(np.delete(x, drop)[np.delete(y, drop) == k], u)
    return v, W, out


@pytest.mark.parametrize("seed", range(3))
def test_gaussian_score_is_the_refit_without_the_row(seed):
    x, y = _rows(seed, False)
    eps = 1e-3

    def refit(rest, u):
        return stats.norm.logpdf(u, rest.mean(), np.sqrt(rest.var() + eps))

    v, W, expected = _each_held_out(x, y, refit)
    got = _gaussian_loo(v, W, eps, 0.0)
    np.testing.assert_allclose(np.where(W > 0, got, 0.0), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("integers", [False, True])
def test_kernel_score_is_the_density_of_the_other_rows(seed, integers):
    x, y = _rows(seed, integers)
    h = np.array([0.4, 0.7, 1.1])
    step = 1.0 if integers else 0.0

    def refit_for(k):
        def refit(rest, u):
            if step:
                mass = stats.norm.cdf(u + 0.5, rest, h[k]) - stats.norm.cdf(u - 0.5, rest, h[k])
                return np.log(mass.mean())
            return np.log(stats.norm.pdf(u, rest, h[k]).mean())

        return refit

    v, W = _table(x, y)
    got = _kernel_loo(v, W, h, step)
    for k in range(3):
        _, _, expected = _each_held_out(x, y, refit_for(k))
        np.testing.assert_allclose(
            np.where(W[k] > 0, got[k], 0.0), expected[k], rtol=1e-7, atol=1e-10
        )


def test_categorical_and_poisson_scores_are_their_refits():
    x, y = _rows(5, True)
    v, W = _table(x, y)
    alpha, d = 1.0, v.size
    total = W.sum(axis=0)

    def categorical(rest, u):
        if total[v == u][0] <= 1:  # its only row held out: a category never seen
            cells = v[-1] - v[0] + 1
            return np.log(alpha / (rest.size + alpha * (d - 1)) / (cells - (d - 1)))
        return np.log((np.sum(rest == u) + alpha) / (rest.size + alpha * d))

    def poisson(rest, u):
        return stats.poisson.logpmf(u, (rest.sum() + alpha) / rest.size)

    cells = float(v[-1] - v[0] + 1)
    for fn, got in (
        (categorical, _categorical_loo(W, total, alpha, cells)),
        (poisson, _poisson_loo(v, W, alpha)),
    ):
        _, _, expected = _each_held_out(x, y, fn)
        np.testing.assert_allclose(np.where(W > 0, got, 0.0), expected, rtol=1e-9, atol=1e-12)


def test_each_kinds_statistics_equal_those_gathered_directly():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 3, 200)
    X = np.c_[rng.normal(y, 1), rng.poisson(1 + y), rng.integers(0, 4, 200) * 10.0 + 5]
    part = ValueCountStats.from_data(X, y)
    parts = kind_parts(part, ["gaussian", "poisson", "categorical"])
    gauss = DiagonalStats.from_data(X[:, :1], y)
    assert parts["gaussian"][1].allclose(
        gauss.with_bounds(np.nan * gauss.lower, np.nan * gauss.upper)
    )
    counts = CountStats.from_data(X[:, 1:2], y)
    assert parts["poisson"][1].allclose(
        counts.with_bounds(np.nan * counts.lower, np.nan * counts.upper)
    )
    vocab = parts["categorical"][2][0]
    np.testing.assert_array_equal(vocab, [5.0, 15.0, 25.0, 35.0])
    codes = np.searchsorted(vocab, X[:, 2])[:, None].astype(float)
    direct = CategoryStats.from_data(codes, y)
    unknown = np.full(1, np.nan)  # derived statistics carry no range
    assert parts["categorical"][1].allclose(direct.with_bounds(unknown, unknown))

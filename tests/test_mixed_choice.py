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
)
from bayesrule.estimators._mixed_families import kind_parts
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


def _t_predictive(rest: np.ndarray, eps: float) -> stats.rv_continuous:
    """What a normal model of unknown mean and variance predicts from the rows ``rest``."""
    m = rest.size
    return stats.t(m - 1, rest.mean(), np.sqrt(rest.var(ddof=1) * (1 + 1 / m) + eps))


@pytest.mark.parametrize("seed", range(3))
def test_gaussian_score_is_the_t_predictive_of_a_refit_without_the_row(seed):
    # the normal model's held-out score is its predictive density (Student's t
    # from the rows kept), not the plug-in normal that small classes make too narrow
    x, y = _rows(seed, False)
    eps = 1e-3

    def refit(rest, u):
        return _t_predictive(rest, eps).logpdf(u)

    v, W, expected = _each_held_out(x, y, refit)
    got = _gaussian_loo(v, W, eps, 0.0)
    np.testing.assert_allclose(np.where(W > 0, got, 0.0), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_gaussian_cell_score_is_the_t_predictive_cell_of_a_refit(seed):
    # on a lattice the score is the t predictive's mass of the value's cell,
    # accurate in both tails (values far above and below the class mean)
    x, y = _rows(seed, True)
    x = x * 10.0 - 30.0  # far from 0 on both sides, step 10

    def refit(rest, u):
        t = _t_predictive(rest, 0.0)
        return np.log(t.sf(u - 5.0) - t.sf(u + 5.0))

    v, W, expected = _each_held_out(x, y, refit)
    got = _gaussian_loo(v, W, 0.0, 10.0)
    np.testing.assert_allclose(np.where(W > 0, got, 0.0), expected, rtol=1e-8, atol=1e-10)


def test_gaussian_score_tends_to_the_plug_in_normal_with_many_rows():
    # with 20,000 rows in the class the t predictive is the plug-in normal
    x = np.random.default_rng(0).normal(0.0, 1.0, 20000)
    v = np.unique(x)
    got = _gaussian_loo(v, np.ones((1, v.size)), 0.0, 0.0)[0]
    for i in (0, v.size // 2, v.size - 1):  # both tails and the middle
        rest = np.delete(v, i)
        assert got[i] == pytest.approx(stats.norm.logpdf(v[i], rest.mean(), rest.std()), rel=1e-3)


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


@pytest.mark.parametrize("integers", [False, True])
def test_kernel_score_with_held_out_bandwidths_is_the_refit_with_the_rows_kept(integers):
    # each held-out row is scored by a kernel of Scott's bandwidth of the rows
    # kept (the row does not widen the kernel that scores it)
    from bayesrule.estimators._mixed_choice import _held_bandwidths

    x, y = _rows(7, integers)
    step = 1.0 if integers else 0.0
    v, W = _table(x, y)
    h = np.array([np.std(x[y == k], ddof=1) * np.sum(y == k) ** -0.2 for k in range(3)])
    got = _kernel_loo(v, W, h, step, h_rows=_held_bandwidths(v, W, h, 1e-3 * h))

    def refit(rest, u):
        hr = np.std(rest, ddof=1) * rest.size**-0.2
        if step:
            return np.log(
                np.mean(stats.norm.cdf(u + 0.5, rest, hr) - stats.norm.cdf(u - 0.5, rest, hr))
            )
        return np.log(stats.norm.pdf(u, rest, hr).mean())

    _, _, expected = _each_held_out(x, y, refit)
    np.testing.assert_allclose(np.where(W > 0, got, 0.0), expected, rtol=1e-7, atol=1e-10)


def test_kernel_score_of_a_far_value_is_finite_and_not_floored():
    # one value far from its class's others: its held-out density is tiny but
    # summed in logs (no cancellation of the row's own kernel against the total)
    v = np.array([0.0, 0.1, 0.2, 0.3, 3.2])  # 14.5 bandwidths from the nearest
    W = np.ones((1, 5))
    got = _kernel_loo(v, W, np.array([0.2]), 0.0)[0, -1]
    expected = np.log(stats.norm.pdf(3.2, v[:-1], 0.2).mean())  # about -107
    assert np.isfinite(got) and got == pytest.approx(expected, rel=1e-9)


def test_the_class_check_scores_a_poisson_candidate_with_each_class_poisson():
    # _full gives, per class and value, the whole class model's log probability: for
    # 'poisson' that is Poisson(rate (S + alpha) / V), not a normal of the counts
    from bayesrule.estimators._mixed_choice import _full

    rng = np.random.default_rng(4)
    v = np.arange(0.0, 12.0)
    W = rng.integers(0, 9, size=(3, v.size)).astype(float)
    alpha = 0.5
    got = _full("poisson", v, W, eps=1e-9, h=np.ones(3), step=1.0, alpha=alpha)
    rate = ((W @ v) + alpha) / W.sum(axis=1)
    expected = stats.poisson.logpmf(v[None, :], rate[:, None])
    np.testing.assert_allclose(got, expected, rtol=1e-12)

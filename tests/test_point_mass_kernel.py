"""KernelNB's class model: point masses plus a kernel density (PointMassKernelDensity)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import bayesrule as br
from bayesrule.models import PointMassKernelDensity
from bayesrule.stats import ValueCountStats


def _zero_inflated(rng, n, p_zero, loc):
    x = rng.normal(loc, 1.0, n)
    x[rng.random(n) < p_zero] = 0.0
    return x


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    x0 = _zero_inflated(rng, 60, 0.7, 2.0)
    x1 = _zero_inflated(rng, 40, 0.2, -1.0)
    x1[:3] = 5.0  # a second atom, in class 1 only
    X = np.concatenate([x0, x1])[:, None]
    y = np.repeat([0, 1], [60, 40])
    return X, y


def _kde(values, weights, h, x):
    return np.sum(weights * stats.norm.pdf(x, values, h)) / weights.sum()


def test_point_mass_density_equals_direct_computation(data):
    X, y = data
    alpha, share = 0.5, 0.05
    model = PointMassKernelDensity.from_stats(
        ValueCountStats.from_data(X, y), point_mass=share, alpha=alpha, method="exact"
    )
    np.testing.assert_array_equal(model.atoms[0], [0.0, 5.0])
    x = X[:, 0]
    atom = (x == 0.0) | (x == 5.0)
    V, Vp = np.array([60.0, 40.0]), 100.0
    G = {a: np.sum(x == a) / (Vp + 1.0) for a in (0.0, 5.0)}
    Cp = np.sum(~atom)
    G_c = (Cp + 1.0) / (Vp + 1.0)
    h_pool = model.kde.bandwidth[2, 0]
    T = np.array([0.0, 5.0, 0.3, -2.0, 9.0])
    expected = np.empty((T.size, 2))
    for k in range(2):
        xk = x[y == k]
        cont = xk[(xk != 0.0) & (xk != 5.0)]
        h = model.bandwidth[k, 0]
        for i, t in enumerate(T):
            if t in G:
                p = (np.sum(xk == t) + alpha * G[t]) / (V[k] + alpha)
            else:
                f_k = _kde(cont, np.ones(cont.size), h, t)
                g = _kde(x[~atom], np.ones(Cp), h_pool, t)
                p = (cont.size * f_k + alpha * G_c * g) / (V[k] + alpha)
            expected[i, k] = np.log(p)
    np.testing.assert_allclose(model.log_prob(T[:, None]), expected, rtol=1e-10)
    # the class models (one class each) give the same densities
    np.testing.assert_allclose(model[1].log_prob(T[:, None]), expected[:, 1], rtol=1e-10)


def test_a_class_that_never_had_an_atom_still_gives_it_a_probability(data):
    X, y = data
    model = PointMassKernelDensity.from_stats(ValueCountStats.from_data(X, y), point_mass=0.05)
    lp = model.log_prob(np.array([[5.0]]))
    assert np.all(np.isfinite(lp)) and lp[0, 0] < lp[0, 1] - 3


def test_continuous_data_have_no_atoms_and_alpha_0_is_the_kernel_density():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(80, 2)), np.repeat([0, 1], 40)
    plain = br.KernelNB(point_mass=2.0, alpha=0.0, method="exact").fit(X, y)
    model = br.KernelNB(alpha=0.0, method="exact").fit(X, y)
    assert model._model.atoms.shape[1] == 0
    T = rng.normal(size=(20, 2))
    np.testing.assert_allclose(
        model.predict_joint_log_proba(T), plain.predict_joint_log_proba(T), rtol=1e-12
    )


def test_grid_and_exact_agree_with_point_masses(data):
    X, y = data
    s = ValueCountStats.from_data(X, y)
    T = np.array([[0.0], [5.0], [0.3], [-2.0], [9.0], [-40.0]])
    exact = PointMassKernelDensity.from_stats(s, method="exact").log_prob(T)
    grid = PointMassKernelDensity.from_stats(s, method="grid").log_prob(T)
    np.testing.assert_allclose(grid, exact, rtol=1e-3)


def test_sample_fits_the_density(data):
    X, y = data
    model = PointMassKernelDensity.from_stats(
        ValueCountStats.from_data(X, y), point_mass=0.05, alpha=0.5
    )[1]
    n = 20000
    x = model.sample(n, np.random.default_rng(4))[:, 0]
    p_atoms = np.exp(model.log_prob(np.array([[0.0], [5.0]])))
    for a, p in zip((0.0, 5.0), p_atoms, strict=True):
        assert stats.binomtest(int(np.sum(x == a)), n, p).pvalue > 1e-3
    # off the atoms, the draws follow the continuous part: compare binned masses
    cont = x[(x != 0.0) & (x != 5.0)]
    edges = np.linspace(-6, 10, 33)
    mid = np.linspace(-6, 10, 3201)
    dens = np.exp(model.log_prob(mid[:, None]))
    mass = np.array(
        [
            np.trapezoid(dens[(mid >= a) & (mid <= b)], mid[(mid >= a) & (mid <= b)])
            for a, b in zip(edges[:-1], edges[1:], strict=True)
        ]
    )
    observed = np.histogram(cont, edges)[0]
    keep = mass * n > 5
    expected = mass[keep] * observed[keep].sum() / mass[keep].sum()
    assert stats.chisquare(observed[keep], expected).pvalue > 1e-3


def test_partial_fit_and_merge_equal_fit(data):
    X, y = data
    T = np.array([[0.0], [5.0], [0.3], [-2.0]])
    full = br.KernelNB(point_mass=0.05).fit(X, y)
    parts = br.KernelNB(point_mass=0.05).partial_fit(X[::2], y[::2], classes=[0, 1])
    parts.partial_fit(X[1::2], y[1::2])
    merged = (
        br.KernelNB(point_mass=0.05)
        .fit(X[::3], y[::3])
        .merge(
            br.KernelNB(point_mass=0.05).fit(np.delete(X, np.s_[::3], 0), np.delete(y, np.s_[::3]))
        )
    )
    for other in (parts, merged):
        np.testing.assert_allclose(
            other.predict_joint_log_proba(T), full.predict_joint_log_proba(T), rtol=1e-10
        )


@pytest.mark.mnist
def test_kernel_nb_defaults_on_mnist(mnist):
    Xtr, ytr, Xte, yte = mnist
    assert br.KernelNB().fit(Xtr, ytr).score(Xte, yte) >= 0.83

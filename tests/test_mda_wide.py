"""MixtureDiscriminantAnalysis with more features than rows: sensible densities, consistent outputs.

With ``n <= d`` the training rows have no residual outside the projection,
so the residual variance measured on them is 0; it is floored at the ridge
(``reg_covar_`` times the mean variance of a scaled feature).
"""

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.naive_bayes import GaussianNB

from bayesrule import MixtureDiscriminantAnalysis


def _data(n, p, K, seed, n_test=40):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    rng.shuffle(y)
    shift = 0.3 * rng.normal(size=(K, p))
    X = rng.normal(size=(n, p)) + shift[y]
    yt = rng.integers(0, K, n_test)
    XT = rng.normal(size=(n_test, p)) + shift[yt]
    return X, y, XT


SHAPES = [(30, 60, 2), (30, 300, 3), (40, 80, 4), (50, 500, 5), (30, 100, 3)]


@pytest.mark.parametrize("n,p,K", SHAPES)
def test_wide_outputs_consistent_and_densities_sensible(n, p, K):
    X, y, XT = _data(n, p, K, seed=n + p + K)
    m = MixtureDiscriminantAnalysis().fit(X, y)
    J = m.predict_joint_log_proba(XT)
    assert np.all(np.isfinite(J))
    L = m.predict_log_proba(XT)
    np.testing.assert_allclose(L, J - logsumexp(J, axis=1, keepdims=True), rtol=0, atol=1e-10)
    S = m.score_samples(XT)
    assert np.all(np.isfinite(S))
    np.testing.assert_allclose(S, logsumexp(J, axis=1), rtol=1e-12, atol=1e-9)
    # the scale: a GaussianNB (diagonal, per class) on the same rows; the
    # mixture's density may be worse, but by less than a nat per feature
    gnb = logsumexp(GaussianNB().fit(X, y).predict_joint_log_proba(XT), axis=1)
    assert S.mean() > gnb.mean() - 1.0 * p
    assert S.mean() < gnb.mean() + 1.0 * p
    # the floor: the ridge times the mean variance of a scaled feature
    s = m.stats_
    if s.basis.shape[1] >= p:  # the projection keeps every feature: no residual
        return
    Xs = (X - np.average(X, axis=0)) / s.scale
    unseen = 1.0 - max(n - 1 - s.basis.shape[1], 0) / (p - s.basis.shape[1])
    floor = m.reg_covar_ * Xs.var(axis=0).sum() / p * unseen
    assert float(s.residual_var[0]) >= floor * (1 - 1e-9)


def test_audit_example():
    rng = np.random.default_rng(8)
    y = rng.integers(0, 3, 30)
    X = rng.normal(size=(30, 100)) + y[:, None] * 0.3
    XT = rng.normal(size=(20, 100))
    m = MixtureDiscriminantAnalysis().fit(X, y)
    J = m.predict_joint_log_proba(XT)
    assert J.min() > -1e3
    L = m.predict_log_proba(XT)
    assert np.abs(L - (J - logsumexp(J, 1, keepdims=True))).max() < 1e-10
    # the true density (standard normal) is about -142 nats a row
    assert -400 < m.score_samples(XT).mean() < -100


@pytest.mark.parametrize("n,p,K", [(30, 100, 3), (40, 400, 2)])
def test_wide_units_do_not_matter(n, p, K):
    X, y, XT = _data(n, p, K, seed=3)
    # powers of two: the scaled features are the same numbers, so is the model
    a = 2.0 ** np.random.default_rng(0).integers(-20, 20, size=p)
    m1 = MixtureDiscriminantAnalysis().fit(X, y)
    m2 = MixtureDiscriminantAnalysis().fit(X * a, y)
    np.testing.assert_array_equal(m1.predict(XT), m2.predict(XT * a))
    np.testing.assert_allclose(m1.predict_proba(XT), m2.predict_proba(XT * a), atol=1e-12)
    # densities in x change by the Jacobian of the rescaling only
    np.testing.assert_allclose(
        m1.score_samples(XT), m2.score_samples(XT * a) + np.log(a).sum(), rtol=1e-10, atol=1e-8
    )
    assert m1.stats_.residual_var[0] == m2.stats_.residual_var[0]
    # any scales: the residual variance is unit-free
    b = np.exp(np.random.default_rng(1).uniform(-6, 6, size=p))
    m3 = MixtureDiscriminantAnalysis().fit(X * b, y)
    assert m3.stats_.residual_var[0] == pytest.approx(m1.stats_.residual_var[0], rel=1e-8)


def test_no_floor_where_rows_span_every_feature():
    # n > p: the rows' own residual is measured, and kept (data in a subspace stay there)
    rng = np.random.default_rng(1)
    y = np.arange(300) % 3
    X = rng.normal(size=(300, 12)) + y[:, None]
    m = MixtureDiscriminantAnalysis(n_dims=6).fit(X, y)
    s = m.stats_
    Xs = (X - X.mean(0)) / s.scale
    T = np.cov(Xs.T, bias=True)
    rest = np.sort(np.linalg.eigvalsh(T))[:6].sum() / 6
    assert float(s.residual_var[0]) == pytest.approx(rest, rel=1e-8)

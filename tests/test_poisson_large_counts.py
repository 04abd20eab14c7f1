"""PoissonNB's posteriors for large counts, against an exact (60-digit) reference.

``x log(rate_k) - rate_k`` is about 1e17 for counts of 4.5e15: computed per
class in float64, the classes' differences (a few units) drown in its
rounding. The Poisson model compares the classes relative to a reference
rate of each feature (:func:`bayesrule.models.poisson.poisson_reference`),
which keeps those digits; these tests hold its posteriors, those of
MixedNB's Poisson columns and those of the array API path to 1e-9 of the
exact values, and its full log probabilities (``score_samples``) to SciPy's.
"""

from __future__ import annotations

import warnings
from decimal import Decimal, getcontext

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import gammaln, logsumexp
from scipy.stats import poisson

import bayesrule
from _array_api_rerun import needs_dispatch, rerun_with_scipy_array_api
from bayesrule.models import combine_terms

SCALES = [1.0, 1e6, 1e9, 1e12, 4.5e15]


def counts(scale, n=120, seed=8):
    """Counts near ``scale`` whose class rates differ by a few hundred at most."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = (scale + rng.integers(0, 100, (n, 3)) * (1 + y[:, None])).astype(float)
    return X, y


def exact_log_joint(rate, X, log_prior=None):
    """``log pi_k + sum_j x_j log rate_kj - rate_kj`` (no factorials) in 60-digit decimals.

    NaN entries are left out; ``log_prior`` (n, K) floats added as given.
    """
    getcontext().prec = 60
    R = [[Decimal(float(v)) for v in r] for r in np.asarray(rate)]
    L = [[v.ln() for v in r] for r in R]
    out = []
    for i, x in enumerate(np.asarray(X)):
        row = []
        for k in range(len(R)):
            s = Decimal(0)
            for j, xj in enumerate(x):
                if not np.isnan(xj):
                    s += Decimal(float(xj)) * L[k][j] - R[k][j]
            if log_prior is not None:
                s += Decimal(float(log_prior[i, k]))
            row.append(s)
        out.append(row)
    return out


def exact_proba(rate, priors, X, extra=None):
    """Posteriors from :func:`exact_log_joint`; ``extra`` (n, K) log terms added (floats)."""
    getcontext().prec = 60
    n, K = len(X), len(rate)
    lp = np.log(np.asarray(priors, dtype=float))[None, :] + (0.0 if extra is None else extra)
    lp = np.broadcast_to(lp, (n, K))
    out = np.empty((n, K))
    for i, row in enumerate(exact_log_joint(rate, X, lp)):
        top = max(row)
        e = [(v - top).exp() for v in row]
        t = sum(e)
        out[i] = [float(v / t) for v in e]
    return out


def test_posteriors_match_the_exact_ones_at_every_count_scale():
    worst = {}
    for scale in SCALES:
        X, y = counts(scale)
        m = bayesrule.PoissonNB().fit(X, y)
        want = exact_proba(m.rate_, m.priors_, X[:30])
        got = m.predict_proba(X[:30])
        worst[scale] = float(np.max(np.abs(got - want)))
        np.testing.assert_allclose(
            np.exp(m.predict_log_proba(X[:30])), want, rtol=0, atol=1e-9, err_msg=f"{scale:g}"
        )
    assert max(worst.values()) < 1e-9, worst


def test_the_reproducer_of_the_audit():
    rng = np.random.default_rng(8)
    y = rng.integers(0, 3, 300)
    X = (2.0**52 + rng.integers(0, 100, (300, 3)) * (1 + y[:, None])).astype(float)
    m = bayesrule.PoissonNB().fit(X, y)
    got = m.predict_log_proba(X[:3])
    want = np.log(exact_proba(m.rate_, m.priors_, X[:3]))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    assert np.all(got > -1.3), got  # near [-1.171, -0.994, -1.139], not [-0.69, -64.69, -0.69]


def test_scaled_terms_agree_with_the_model():
    """``log_prob_terms`` (the repair of rows that overflow) gives the same values."""
    for scale in SCALES:
        X, y = counts(scale)
        model = bayesrule.PoissonNB().fit(X, y)._model
        rows = X[:30]
        relative, absolute = combine_terms(model.log_prob_terms(rows), (30, 3))
        lp = model.log_prob(rows)
        # the absolute values: to the rounding of their terms (x log rate, log x!)
        size = np.max(rows @ np.abs(np.log(model.ref)) + gammaln(rows + 1).sum(axis=1))
        np.testing.assert_allclose(absolute, lp, rtol=0, atol=1e-14 * size, err_msg=f"{scale:g}")
        exact = exact_log_joint(model.rate, rows)
        want = np.array([[float(v - max(r)) for v in r] for r in exact])
        np.testing.assert_allclose(relative, want, rtol=0, atol=1e-9, err_msg=f"{scale:g}")
    # a row far beyond float64's logarithms still gets definite posteriors
    X, y = counts(4.5e15)
    m = bayesrule.PoissonNB().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proba = m.predict_proba(np.array([[1e300, 1e300, 1e300], X[0]]))
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_score_samples_are_scipy_log_pmfs_and_the_relative_form_is_documented():
    rng = np.random.default_rng(3)
    rates = np.array([[1.0, 5.0, 2.0, 0.3], [4.0, 1.0, 2.0, 7.0], [2.5, 2.5, 9.0, 1.0]])
    y = rng.integers(0, 3, 400)
    X = rng.poisson(rates[y]).astype(float)
    m = bayesrule.PoissonNB().fit(X, y)
    logpmf = np.stack(
        [poisson.logpmf(X, m.rate_[k]).sum(axis=1) for k in range(3)], axis=1
    )  # (n, K)
    want = logsumexp(logpmf + np.log(m.priors_), axis=1)
    np.testing.assert_allclose(m.score_samples(X), want, rtol=1e-10, atol=0)
    model = m._model
    np.testing.assert_allclose(model.log_prob(X), logpmf, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.log_prob(sp.csr_matrix(X)), logpmf, rtol=1e-10, atol=1e-12)
    # relative_log_prob leaves out sum_j x_j log ref_j - ref_j - log x_j!, ref_j the
    # largest rate of feature j
    np.testing.assert_array_equal(model.ref, m.rate_.max(axis=0))
    left_out = X @ np.log(model.ref) - model.ref.sum() - gammaln(X + 1).sum(axis=1)
    np.testing.assert_allclose(
        model.log_prob(X) - model.relative_log_prob(X),
        np.broadcast_to(left_out[:, None], logpmf.shape),
        rtol=1e-12,
        atol=1e-10,
    )


def test_missing_entries_are_the_model_without_the_column():
    for scale in (3.0, 4.5e15):
        X, y = counts(scale)
        m = bayesrule.PoissonNB().fit(X, y)
        m2 = bayesrule.PoissonNB().fit(X[:, :2], y)
        rows = X[:30].copy()
        rows[::2, 2] = np.nan
        rows[1::4, 0] = np.nan
        got = m.predict_proba(rows)
        want = m2.predict_proba(rows[:, :2])
        sub = np.isnan(rows[:, 2])
        np.testing.assert_allclose(got[sub], want[sub], rtol=0, atol=1e-12)
        exact = exact_proba(m.rate_, m.priors_, rows)
        np.testing.assert_allclose(got, exact, rtol=0, atol=1e-9, err_msg=f"{scale:g}")
        if scale < 10:
            np.testing.assert_allclose(
                m.score_samples(rows[sub]), m2.score_samples(rows[sub][:, :2]), rtol=1e-10
            )
            full = np.stack(
                [
                    np.nansum(poisson.logpmf(rows, m.rate_[k]), axis=1) + np.log(m.priors_[k])
                    for k in range(3)
                ],
                axis=1,
            )
            np.testing.assert_allclose(m.score_samples(rows), logsumexp(full, axis=1), rtol=1e-10)


def test_mixed_nb_poisson_columns_of_large_counts():
    X, y = counts(4.5e15)
    rng = np.random.default_rng(5)
    g = rng.normal(size=(X.shape[0], 1)) + 0.5 * y[:, None]
    Xm = np.hstack([X, g])
    m = bayesrule.MixedNB(columns=["poisson"] * 3 + ["gaussian"]).fit(Xm, y)
    rate = bayesrule.PoissonNB(alpha=m.alpha).fit(X, y).rate_
    gauss = bayesrule.MixedNB(columns=["gaussian"]).fit(g, y)
    # the Gaussian column's joint (priors included) in float64: a few units, accurate
    extra = gauss.predict_joint_log_proba(g[:30]) - np.log(gauss.priors_)
    want = exact_proba(rate, m.priors_, X[:30], extra=extra)
    np.testing.assert_allclose(m.predict_proba(Xm[:30]), want, rtol=0, atol=1e-9)


def test_mixed_nb_ordinary_counts_unchanged():
    rng = np.random.default_rng(4)
    rates = np.array([[1.0, 5.0], [4.0, 1.0]])
    y = rng.integers(0, 2, 300)
    X = np.hstack([rng.poisson(rates[y]), rng.normal(size=(300, 1)) + y[:, None]])
    X[::7, 1] = np.nan
    m = bayesrule.MixedNB(columns=["poisson", "poisson", "gaussian"]).fit(X, y)
    joint = m.predict_joint_log_proba(X)
    np.testing.assert_allclose(
        m.predict_log_proba(X), joint - logsumexp(joint, axis=1, keepdims=True), atol=1e-12
    )
    # the full density keeps every term: the Poisson columns' and the Gaussian's
    pois = bayesrule.PoissonNB(alpha=m.alpha).fit(X[:, :2], y)
    gauss = bayesrule.MixedNB(columns=["gaussian"]).fit(X[:, 2:], y)
    want = pois._model.log_prob(X[:, :2]) + gauss.predict_joint_log_proba(X[:, 2:])
    np.testing.assert_allclose(joint, want, rtol=1e-12, atol=1e-12)
    # the relative form leaves out a term the same for every class
    rel = m._model.relative_log_prob(X)
    diff = m._model.log_prob(X) - rel
    assert not np.allclose(diff, 0.0)
    np.testing.assert_allclose(diff, diff[:, :1] + np.zeros_like(diff), rtol=0, atol=1e-9)


# ---------------------------------------------------------------- array API
def _device_proba(est, X, lib):
    """The array API path's posteriors from its terms (``_host_terms``, ``_jll``) in ``lib``."""
    from bayesrule.backends.array_api.arrays import namespace_and_device, to_host
    from bayesrule.backends.array_api.predict import _host_terms, _jll, _log_softmax, _moved

    terms = _host_terms(est)
    assert terms is not None
    if lib is np:
        return np.exp(_log_softmax(np, _jll(np, X, terms)))
    Xd = lib.asarray(np.ascontiguousarray(X))
    xp, dev = namespace_and_device(Xd)
    out = _log_softmax(xp, _jll(xp, Xd, _moved(terms, xp, dev, xp.float64)))
    return np.exp(np.asarray(to_host(out)))


@pytest.mark.parametrize("name", ["numpy", "torch", "array_api_strict"])
def test_array_api_terms_are_accurate_for_large_counts(name):
    lib = np if name == "numpy" else pytest.importorskip(name)
    for scale in SCALES:
        X, y = counts(scale)
        m = bayesrule.PoissonNB().fit(X, y)
        want = exact_proba(m.rate_, m.priors_, X[:30])
        got = _device_proba(m, X[:30], lib)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9, err_msg=f"{scale:g}")


def test_array_api_terms_leave_out_a_class_without_data():
    from bayesrule.backends.array_api.predict import _host_terms, _jll

    X, y = counts(1e12)
    m = bayesrule.PoissonNB().partial_fit(X, y, classes=[0, 1, 2, 3])
    terms = _host_terms(m)
    jll = _jll(np, X[:5], terms)
    assert np.all(jll[:, 3] == -np.inf)
    got = np.exp(jll[:, :3] - logsumexp(jll[:, :3], axis=1, keepdims=True))
    np.testing.assert_allclose(got, m.predict_proba(X[:5])[:, :3], rtol=0, atol=1e-12)


test_in_a_process_with_scipy_array_api = rerun_with_scipy_array_api(__file__)


@needs_dispatch
@pytest.mark.parametrize("ns", ["torch", "strict"])
def test_device_predictions_of_large_counts(ns):
    import sklearn

    if ns == "torch":
        lib = pytest.importorskip("torch")
    else:
        lib = pytest.importorskip("array_api_strict")
    from bayesrule.backends.array_api.arrays import namespace_and_device, to_host
    from bayesrule.backends.array_api.predict import cached_terms

    X, y = counts(4.5e15)
    ref = bayesrule.PoissonNB().fit(X, y)
    want = exact_proba(ref.rate_, ref.priors_, X[:30])
    with sklearn.config_context(array_api_dispatch=True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Xd = lib.asarray(np.ascontiguousarray(X))
        model = bayesrule.PoissonNB().fit(Xd, y)
        got = np.asarray(to_host(model.predict_proba(Xd[:30, ...])))
        xp, dev = namespace_and_device(Xd)
        cached = cached_terms(model, xp, dev)
    # predicted from the device terms (their probe check passed), not by the host
    assert cached is not None and cached["proba"]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)

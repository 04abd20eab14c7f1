"""The passes that used to read a host copy, now on the device: Ledoit-Wolf's fourth moments
and mixture discriminant analysis' seeding and E-step passes.

As in test_array_api.py, the tests need scikit-learn's array API dispatch,
which needs ``SCIPY_ARRAY_API=1`` before SciPy is imported: they run in a
fresh process started by ``test_in_a_process_with_scipy_array_api`` and
skip in the suite's own process.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone

import bayesrule
from _array_api_rerun import rerun_with_scipy_array_api
from bayesrule.backends.array_api import fit as device_fit
from bayesrule.backends.array_api import mda as device_mda
from test_array_api import dispatch, host, library, needs_dispatch, strict

torch = pytest.importorskip("torch")
xps = pytest.importorskip("array_api_strict")


test_in_a_process_with_scipy_array_api = rerun_with_scipy_array_api(__file__)


def _generated(seed, positive=False):
    """Shapes, scales far from the origin, weights with zeros, one declared class without rows."""
    rng = np.random.default_rng(seed)
    n, p, K = int(rng.integers(20, 300)), int(rng.integers(1, 7)), int(rng.integers(2, 5))
    y = np.arange(n) % K
    X = rng.normal(loc=rng.normal(scale=1e3, size=p), size=(n, p)) * rng.uniform(0.1, 10, p)
    X = X + y[:, None] * rng.uniform(0, 3, p)
    w = rng.integers(0, 4, size=n).astype(float)
    w[:K] = 1.0
    return X, y, w, np.arange(K + 1)


@needs_dispatch
@pytest.mark.parametrize("seed", range(8))
def test_fourth_moments_on_the_device_equal_numpys(seed, monkeypatch):
    X, y, w, classes = _generated(seed)
    est = bayesrule.LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto")
    ref = clone(est).statistics(X, y, w, classes=classes)
    copies = []
    monkeypatch.setattr(device_fit._Data, "host", lambda self: copies.append(1) or self.X)
    with dispatch():
        got = clone(est).statistics(torch.asarray(X), y, torch.asarray(w), classes)
    assert type(got).__name__ == "FourthMomentStats" and not copies
    assert got.allclose(ref, rtol=1e-9, atol=1e-9)


@needs_dispatch
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("solver", ["eigen", "lsqr"])
def test_ledoit_wolf_lda_on_the_device_is_the_numpy_model(seed, solver):
    X, y, w, _ = _generated(seed)
    est = bayesrule.LinearDiscriminantAnalysis(solver=solver, shrinkage="auto")
    ref = clone(est).fit(X, y, sample_weight=w)
    with dispatch():
        model = clone(est).fit(torch.asarray(X), y, sample_weight=torch.asarray(w))
        proba = host(model.predict_proba(torch.asarray(X)))
        labels = host(model.predict(torch.asarray(X)))
    np.testing.assert_allclose(host(model.shrinkage_), ref.shrinkage_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(labels, ref.predict(X))
    np.testing.assert_allclose(proba, ref.predict_proba(X), atol=1e-8)


MDA = [
    {},  # every default: components, ridge and structure chosen on the host's sample
    {"n_components": 2},
    {"n_components": 3, "covariance_type": "diag"},
    {"n_components": 2, "covariance_type": "spherical"},
    {"n_components": 2, "covariance_type": "shared"},
    {"n_components": 2, "covariance_type": "ppca"},
    {"n_components": 2, "n_dims": 2},
    {"n_components": "bic", "max_components": 3},
]


def _mda_data(seed, n=400, p=5):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    sub = rng.integers(0, 2, size=n)  # two sub-classes per class
    centres = rng.normal(scale=3.0, size=(3, 2, p))
    X = centres[y, sub] + rng.normal(size=(n, p)) * rng.uniform(0.5, 2.0, p) + 50.0
    return X, y


@needs_dispatch
@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("params", MDA, ids=[str(sorted(p.items())) for p in MDA])
def test_mda_em_on_the_device_is_the_numpy_fit(params, seed, monkeypatch):
    X, y = _mda_data(seed)
    est = bayesrule.MixtureDiscriminantAnalysis(random_state=seed, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = clone(est).fit(X, y)
    passes = []
    real = device_mda.summarise

    def counted(task, rows):
        passes.append(task.em_pass)
        return real(task, rows)

    monkeypatch.setattr(device_fit, "summarise", counted)
    with dispatch(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Xd = torch.asarray(X)
        model = clone(est).fit(Xd, y)
        proba, labels = model.predict_proba(Xd), model.predict(Xd)
    # every pass but the survey and the sample ran on the device
    assert len(passes) == int(model.n_passes_) - 2 and passes[0] == "assign"
    assert passes.count("estep") >= int(model.n_iter_)
    assert model.n_iter_ == ref.n_iter_ and model.converged_ == ref.converged_
    assert library(proba) == library(Xd)
    np.testing.assert_array_equal(host(labels), ref.predict(X))
    np.testing.assert_allclose(host(proba), ref.predict_proba(X), atol=1e-8)
    np.testing.assert_allclose(model.lower_bound_, ref.lower_bound_, rtol=1e-9)


@needs_dispatch
def test_mda_on_array_api_strict_and_float32():
    X, y = _mda_data(0)
    est = bayesrule.MixtureDiscriminantAnalysis(n_components=2, random_state=0)
    ref = clone(est).fit(X.astype(np.float32), y)
    with dispatch():
        one = xps.Device("device1")
        model = clone(est).fit(strict(X.astype(np.float32), device=one), y)
        proba = model.predict_proba(strict(X.astype(np.float32), device=one))
    assert proba.device == one
    np.testing.assert_allclose(host(proba), ref.predict_proba(X.astype(np.float32)), atol=1e-4)
    np.testing.assert_array_equal(model.stats_.owner, ref.stats_.owner)


@needs_dispatch
def test_mda_with_weights_and_an_unreached_row():
    """Zero weights, and a far row no component reaches: the NumPy pass's repairs."""
    X, y = _mda_data(1)
    X[7] = 1e4
    w = np.random.default_rng(0).integers(0, 3, size=len(y)).astype(float)
    w[:3] = 1.0
    est = bayesrule.MixtureDiscriminantAnalysis(n_components=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = clone(est).fit(X, y, sample_weight=w)
        with dispatch():
            model = clone(est).fit(torch.asarray(X), y, sample_weight=torch.asarray(w))
            proba = host(model.predict_proba(torch.asarray(X)))
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba, ref.predict_proba(X), atol=1e-8)

"""RDA-CV's search and MDA's predictions on device arrays (PyTorch CPU, array-api-strict).

RDA-CV's folds' statistics and held-out scoring run in the input's namespace
(:mod:`bayesrule.backends.array_api.rda_cv`), MDA's predictions from its
components on the device (:mod:`bayesrule.backends.array_api.predict`).
Both must give the NumPy model: the same chosen parameters and labels, the
probabilities to 1e-8 in float64. Like the other array API modules, this one
runs itself in a process with ``SCIPY_ARRAY_API=1`` (``tests/_array_api_rerun.py``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import ShuffleSplit

import bayesrule
from _array_api_rerun import needs_dispatch, rerun_with_scipy_array_api

torch = pytest.importorskip("torch")
xps = pytest.importorskip("array_api_strict")

test_in_a_process_with_scipy_array_api = rerun_with_scipy_array_api(__file__)

NAMESPACES = {
    "torch": lambda a: torch.asarray(np.ascontiguousarray(a)),
    "strict": lambda a: xps.asarray(np.ascontiguousarray(a)),
}
METHODS = (
    "predict_proba",
    "predict_log_proba",
    "decision_function",
    "score_samples",
    "predict_joint_log_proba",
)


def dispatch():
    import sklearn

    return sklearn.config_context(array_api_dispatch=True)


def host(a):
    from bayesrule.backends.array_api.arrays import to_host

    return np.asarray(to_host(a))


def library(a):
    from sklearn.externals.array_api_compat import array_namespace

    return array_namespace(a).__name__


def generated(seed, n=150, p=4, K=3, dead=False, dtype=np.float64):
    """Gaussian classes of different shapes and scales; ``dead``: a constant feature too."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n // K)
    X = rng.standard_normal((y.size, p)) * rng.uniform(0.5, 3.0, p)
    X = X + 1.5 * rng.standard_normal((K, p))[y]
    X[y == 0, :] *= rng.uniform(0.3, 2.0)
    if dead:
        X[:, 1] = 7.0  # no variance in any class: the closed-form blocks of the search
    return X.astype(dtype), y


@pytest.fixture
def no_host_copy(monkeypatch):
    """Fail if a fit copies the whole data to the host."""
    from bayesrule.backends.array_api import fit as device_fit

    def refuse(self):
        raise AssertionError("the fit copied the data to the host")

    monkeypatch.setattr(device_fit._Data, "host", refuse)


@pytest.fixture
def held_out_calls(monkeypatch):
    """The held-out row sets the device search gathered."""
    from bayesrule.backends.array_api import rda_cv as device_search

    calls = []
    original = device_search.DeviceRows.held_out

    def spy(self, idx):
        out = original(self, idx)
        calls.append(out)
        return out

    monkeypatch.setattr(device_search.DeviceRows, "held_out", spy)
    return calls


def _both(est, X, y, ns, **fit):
    ref = clone(est).fit(X, y, **fit)
    with dispatch(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Xd = NAMESPACES[ns](X)
        model = clone(est).fit(Xd, y, **fit)
        labels = model.predict(Xd)
        outs = {m: getattr(model, m)(Xd) for m in METHODS}
    return ref, model, Xd, labels, outs


def _same_outputs(ref, X, Xd, labels, outs, tol=1e-8):
    assert library(labels) == library(Xd)
    np.testing.assert_array_equal(host(labels), ref.predict(X))
    for m, out in outs.items():
        assert library(out) == library(Xd), m
        want, got = getattr(ref, m)(X), host(out)
        assert got.dtype == want.dtype and np.all(np.isfinite(got)), m
        scale = 1.0 if m == "predict_proba" else max(1.0, float(np.max(np.abs(want))))
        np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale, err_msg=m)
    np.testing.assert_allclose(host(outs["predict_proba"]).sum(axis=1), 1.0, atol=1e-12)


# ------------------------------------------------------------------ RDA-CV
RDACV = [
    bayesrule.RegularizedDiscriminantAnalysisCV(),
    bayesrule.RegularizedDiscriminantAnalysisCV(target="identity", scoring="log_likelihood"),
    bayesrule.RegularizedDiscriminantAnalysisCV(refine=False, cv=3, random_state=3),
    bayesrule.RegularizedDiscriminantAnalysisCV(
        reg_param=0.1, alphas=(0.0, 0.5, 1.0), gammas=(0.0, 0.2), ridges=(0.0, 0.1), refine=False
    ),
    bayesrule.RegularizedDiscriminantAnalysisCV(cv=ShuffleSplit(3, test_size=0.3, random_state=0)),
]


@needs_dispatch
@pytest.mark.parametrize("ns", sorted(NAMESPACES))
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(
    "est", RDACV, ids=["default", "identity-loglik", "cv3", "reg_param", "shufflesplit"]
)
def test_rda_cv_search_on_the_device_is_the_numpy_search(
    est, seed, ns, no_host_copy, held_out_calls
):
    X, y = generated(seed, dead=seed == 1)
    w = np.random.default_rng(seed).uniform(0.2, 2.0, y.size) if seed else None
    fit = {} if w is None else {"sample_weight": w}
    ref, model, Xd, labels, outs = _both(est, X, y, ns, **fit)
    assert held_out_calls and all(library(a) == library(Xd) for a in held_out_calls)
    assert (model.alpha_, model.gamma_, model.ridge_) == (ref.alpha_, ref.gamma_, ref.ridge_)
    np.testing.assert_array_equal(host(model.cv_points_), ref.cv_points_)
    np.testing.assert_allclose(host(model.cv_scores_), ref.cv_scores_, rtol=0, atol=1e-10)
    assert model.stats_.total.allclose(ref.stats_.total, rtol=1e-10)
    _same_outputs(ref, X, Xd, labels, outs)


@needs_dispatch
@pytest.mark.parametrize("ns", sorted(NAMESPACES))
def test_rda_cv_on_float32_rows_is_the_numpy_search_on_them(ns, no_host_copy):
    X, y = generated(2, dtype=np.float32)
    est = bayesrule.RegularizedDiscriminantAnalysisCV()
    ref, model, Xd, labels, outs = _both(est, X, y, ns)
    assert (model.alpha_, model.gamma_, model.ridge_) == (ref.alpha_, ref.gamma_, ref.ridge_)
    np.testing.assert_allclose(host(model.cv_scores_), ref.cv_scores_, rtol=0, atol=1e-8)
    _same_outputs(ref, X, Xd, labels, outs, tol=1e-4)


@needs_dispatch
@pytest.mark.parametrize("ns", sorted(NAMESPACES))
def test_rda_cv_refuses_non_finite_rows_on_the_device_as_in_numpy(ns):
    X, y = generated(0)
    X[5, 2] = np.nan
    est = bayesrule.RegularizedDiscriminantAnalysisCV()
    with pytest.raises(ValueError) as numpy_error:
        clone(est).fit(X, y)
    with dispatch(), pytest.raises(ValueError) as device_error:
        clone(est).fit(NAMESPACES[ns](X), y)
    assert str(device_error.value) == str(numpy_error.value)


@needs_dispatch
def test_rda_cv_needs_two_classes_on_the_device_too():
    X, y = generated(0)
    with dispatch(), pytest.raises(ValueError, match="at least 2 classes"):
        bayesrule.RegularizedDiscriminantAnalysisCV().fit(NAMESPACES["torch"](X), np.zeros(len(y)))


# --------------------------------------------------------------------- MDA
MDA = [
    bayesrule.MixtureDiscriminantAnalysis(n_components=2, random_state=0),
    bayesrule.MixtureDiscriminantAnalysis(n_components=3, covariance_type="diag", random_state=0),
    bayesrule.MixtureDiscriminantAnalysis(
        n_components=2, covariance_type="spherical", random_state=0
    ),
    bayesrule.MixtureDiscriminantAnalysis(
        n_components=2, covariance_type="shared", dimension=2, random_state=0
    ),
]


@needs_dispatch
@pytest.mark.parametrize("ns", sorted(NAMESPACES))
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("est", MDA, ids=["full", "diag", "spherical", "shared-dim2"])
def test_mda_predictions_on_the_device_are_the_numpy_models(est, seed, ns, monkeypatch):
    from bayesrule.backends.array_api import predict as device_predict

    X, y = generated(seed, n=240, p=5)
    ref = clone(est).fit(X, y)
    with dispatch(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Xd = NAMESPACES[ns](X)
        model = clone(est).fit(Xd, y)
        # the posteriors never go through the host (the absolute joint may,
        # where the probe check refuses an ill-conditioned residual)
        original = device_predict._back

        def no_host(out, xp, dev):
            raise AssertionError("predicted on the host")

        monkeypatch.setattr(device_predict, "_back", no_host)
        labels = model.predict(Xd)
        outs = {m: model.__getattribute__(m)(Xd) for m in METHODS[:3]}
        monkeypatch.setattr(device_predict, "_back", original)
        outs.update({m: getattr(model, m)(Xd) for m in METHODS[3:]})
    _same_outputs(ref, X, Xd, labels, outs)


@needs_dispatch
def test_mda_far_rows_on_the_device_are_repaired_as_in_numpy():
    X, y = generated(3, n=240, p=5)
    est = bayesrule.MixtureDiscriminantAnalysis(n_components=2, random_state=0)
    ref = clone(est).fit(X, y)
    far = X[:6] * 1e200
    with dispatch(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = clone(est).fit(NAMESPACES["torch"](X), y)
        proba = host(model.predict_proba(NAMESPACES["torch"](far)))
        labels = host(model.predict(NAMESPACES["torch"](far)))
        want = ref.predict_proba(far)
    np.testing.assert_allclose(proba, want, atol=1e-8)
    np.testing.assert_array_equal(labels, ref.predict(far))


@needs_dispatch
@pytest.mark.parametrize(
    "est",
    [bayesrule.RegularizedDiscriminantAnalysisCV(gammas=(0.0, 0.2), ridges=(0.0, 0.1)), MDA[0]],
    ids=["RDA-CV", "MDA"],
)
def test_a_second_device_keeps_the_search_and_the_predictions_there(est):
    """array-api-strict's second device: the outputs there; data elsewhere refused, naming both."""
    other = xps.Device("device1")
    X, y = generated(5, n=180)
    ref = clone(est).fit(X, y)
    with dispatch(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Xd = xps.asarray(X, device=other)
        model = clone(est).fit(Xd, y, sample_weight=xps.asarray(np.ones(y.size), device=other))
        proba = model.predict_proba(Xd)
        labels = model.predict(Xd)
        assert proba.device == other and labels.device == other
        with pytest.raises(
            ValueError, match="fitted on array_api_strict on device.*device1.*cannot"
        ):
            model.predict(xps.asarray(X))
        with pytest.raises(ValueError, match="one namespace on one device"):
            clone(est).fit(Xd, y, sample_weight=xps.asarray(np.ones(y.size)))
    np.testing.assert_allclose(host(proba), ref.predict_proba(X), rtol=0, atol=1e-8)
    np.testing.assert_array_equal(host(labels), ref.predict(X))


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@needs_dispatch
@cuda
def test_cuda_rda_cv_search_and_mda_predictions_give_the_numpy_models():
    X, y = generated(4, n=240, p=5)
    for est in (bayesrule.RegularizedDiscriminantAnalysisCV(), MDA[0]):
        ref = clone(est).fit(X, y)
        with dispatch(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Xd = torch.asarray(X, device="cuda")
            model = clone(est).fit(Xd, y)
            proba, labels = model.predict_proba(Xd), model.predict(Xd)
        assert proba.device.type == "cuda" and labels.device.type == "cuda"
        np.testing.assert_allclose(host(proba), ref.predict_proba(X), rtol=0, atol=1e-8)
        np.testing.assert_array_equal(host(labels), ref.predict(X))
        if hasattr(ref, "alpha_"):
            assert (model.alpha_, model.gamma_, model.ridge_) == (
                ref.alpha_,
                ref.gamma_,
                ref.ridge_,
            )

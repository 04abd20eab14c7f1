"""PyTorch and array-api-strict arrays through the array API backend (bayesrule.backends.array_api).

scikit-learn turns its array API dispatch on only when SciPy's own support
was enabled (``SCIPY_ARRAY_API=1``) before SciPy was first imported, which
a test process has long done by now. This module therefore runs itself in a
fresh process with the variable set (``test_in_a_process_with_scipy_array_api``)
and, in that process, runs every other test; in the suite's own process
those are skipped. Run it directly with ``SCIPY_ARRAY_API=1 pytest
tests/test_array_api.py`` to see each test.

Tolerances: float64 input gives the NumPy model's probabilities to 1e-8
(the statistics differ from NumPy's in the order of their sums only).
float32 input is compared with the NumPy model fitted on the same float32
data: the statistics to 1e-8 (the device casts the blocks to float64, as
NumPy does), the probabilities to 1e-4, because the fitted attributes the
device predictions start from are float32, as scikit-learn's are (docs/gpu.md).
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

import bayesrule
from _array_api_rerun import needs_dispatch, rerun_with_scipy_array_api
from bayesrule.backends.array_api import fit as device_fit
from bayesrule.backends.array_api import predict as device_predict

torch = pytest.importorskip("torch")
xps = pytest.importorskip("array_api_strict")


test_in_a_process_with_scipy_array_api = rerun_with_scipy_array_api(__file__)


# ------------------------------------------------------------------ helpers
def dispatch():
    import sklearn

    return sklearn.config_context(array_api_dispatch=True)


def strict(a, dtype=None, device=None):
    a = np.asarray(a)
    return xps.asarray(a, dtype=dtype, device=device)


NAMESPACES = {
    "torch": lambda a: torch.asarray(np.ascontiguousarray(a)),
    "strict": lambda a: xps.asarray(np.ascontiguousarray(a)),
}


def host(a):
    from bayesrule.backends.array_api.arrays import to_host

    return np.asarray(to_host(a))


def library(a):
    from sklearn.externals.array_api_compat import array_namespace

    return array_namespace(a).__name__


def gaussian_data(seed=0, n=240, p=5, K=3, dtype=np.float64):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=2.0, size=(K, p))
    y = rng.integers(0, K, size=n)
    X = centres[y] + rng.normal(size=(n, p)) * (1.0 + 0.3 * y[:, None])
    return X.astype(dtype), y


def count_data(seed=0, n=240, p=6, K=3, dtype=np.float64):
    rng = np.random.default_rng(seed)
    rates = rng.gamma(2.0, 2.0, size=(K, p))
    y = rng.integers(0, K, size=n)
    return rng.poisson(rates[y]).astype(dtype), y


GAUSSIAN = [
    bayesrule.LinearDiscriminantAnalysis(),
    bayesrule.LinearDiscriminantAnalysis(solver="lsqr"),
    bayesrule.LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto"),
    bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.05),
    bayesrule.RegularizedDiscriminantAnalysis(alpha=0.5, gamma=0.1),
    bayesrule.RegularizedDiscriminantAnalysisCV(alphas=[0.0, 1.0], gammas=[0.0, 0.5], cv=3),
    bayesrule.DiagonalLDA(),
    bayesrule.GaussianNB(),
    bayesrule.MixtureDiscriminantAnalysis(n_components=2, random_state=0),
]
COUNTS = [
    bayesrule.MultinomialNB(),
    bayesrule.ComplementNB(),
    bayesrule.BernoulliNB(binarize=2.0),
    bayesrule.PoissonNB(),
]
#: estimators whose statistics and predictions run on the device (the rest: host passes)
DEVICE_FIT = (
    "LinearDiscriminantAnalysis",
    "QuadraticDiscriminantAnalysis",
    "RegularizedDiscriminantAnalysis",
    "DiagonalLDA",
    "GaussianNB",
    "MultinomialNB",
    "ComplementNB",
    "BernoulliNB",
    "PoissonNB",
    "RegularizedDiscriminantAnalysisCV",  # its folds and held-out scoring
)
DEVICE_PREDICT = DEVICE_FIT + ("MixtureDiscriminantAnalysis",)
METHODS = (
    "predict_proba",
    "predict_log_proba",
    "decision_function",
    "score_samples",
    "predict_joint_log_proba",
)


def _data_for(est, dtype=np.float64):
    counts = est.input_spec().positive or "binarize" in est.get_params()
    return (count_data if counts else gaussian_data)(dtype=dtype)


def _ids(ests):
    return [repr(e).replace(" ", "") for e in ests]


# ----------------------------------------------------- the NumPy results
@needs_dispatch
@pytest.mark.parametrize("ns", sorted(NAMESPACES))
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("est", GAUSSIAN + COUNTS, ids=_ids(GAUSSIAN + COUNTS))
def test_device_input_gives_the_numpy_model(est, dtype, ns):
    X, y = _data_for(est, dtype)
    ref = clone(est).fit(X, y)
    tol = 1e-8 if dtype == np.float64 else 1e-4
    with dispatch(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Xd = NAMESPACES[ns](X)
        model = clone(est).fit(Xd, y)
        labels = model.predict(Xd)
        outs = {m: getattr(model, m)(Xd) for m in METHODS if hasattr(model, m)}
    assert library(labels) == library(Xd)
    np.testing.assert_array_equal(host(labels), ref.predict(X))
    assert model.stats_.allclose(ref.stats_, rtol=1e-8)
    for m, out in outs.items():
        assert library(out) == library(Xd), m
        want = getattr(ref, m)(X)
        got = host(out)
        assert got.dtype == want.dtype, m
        assert np.all(np.isfinite(got)), m
        scale = 1.0 if m == "predict_proba" else max(1.0, float(np.max(np.abs(want))))
        np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale, err_msg=m)
    np.testing.assert_allclose(host(outs["predict_proba"]).sum(axis=1), 1.0, atol=1e-6)


@needs_dispatch
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize(
    "params",
    [{}, {"solver": "eigen"}, {"solver": "eigen", "shrinkage": "auto"}, {"n_components": 1}],
    ids=["svd", "eigen", "eigen-auto", "one-component"],
)
def test_lda_transform_on_device_is_the_numpy_transform(params, dtype):
    X, y = gaussian_data(dtype=dtype)
    ref = bayesrule.LinearDiscriminantAnalysis(**params).fit(X, y)
    with dispatch():
        Xd = torch.asarray(X)
        model = bayesrule.LinearDiscriminantAnalysis(**params).fit(Xd, y)
        Z = model.transform(Xd)
        used = device_predict.cached_terms(model, *_where(Xd))["transform"]
    want = ref.transform(X)
    assert used and host(Z).dtype == want.dtype
    np.testing.assert_allclose(host(Z), want, rtol=0, atol=1e-8 if dtype == np.float64 else 1e-4)


@needs_dispatch
@pytest.mark.parametrize("ns", sorted(NAMESPACES))
def test_lda_transform_and_sample_come_back_in_the_input_namespace(ns):
    X, y = gaussian_data()
    ref = bayesrule.LinearDiscriminantAnalysis().fit(X, y)
    with dispatch():
        Xd = NAMESPACES[ns](X)
        model = bayesrule.LinearDiscriminantAnalysis().fit(Xd, y)
        Z = model.transform(Xd)
        Xs, ys = model.sample(7, y=NAMESPACES[ns](np.array([0, 1, 2, 0, 1, 2, 0])), random_state=0)
    assert library(Z) == library(Xd) == library(Xs)
    np.testing.assert_allclose(host(Z), ref.transform(X), atol=1e-8)
    assert host(Xs).shape == (7, X.shape[1])


@needs_dispatch
@pytest.mark.parametrize("est", GAUSSIAN + COUNTS, ids=_ids(GAUSSIAN + COUNTS))
def test_the_statistics_and_predictions_run_on_the_device(est, monkeypatch):
    """No host copy of X for the one-pass statistics; device terms for the predictions."""
    name = type(est).__name__
    X, y = _data_for(est)
    copies = []
    real = device_fit._Data.host

    def counted(self):
        copies.append(1)
        return real(self)

    monkeypatch.setattr(device_fit._Data, "host", counted)
    with dispatch():
        Xd = torch.asarray(X)
        model = clone(est).fit(Xd, y)
        terms = device_predict.cached_terms(model, *_where(Xd))
    fits_on_device = name in DEVICE_FIT  # Ledoit-Wolf's fourth moments too
    assert (not copies) == fits_on_device
    assert (terms is not None) == (name in DEVICE_PREDICT)


def _where(a):
    from bayesrule.backends.array_api.arrays import namespace_and_device

    return namespace_and_device(a)


@needs_dispatch
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "est",
    [bayesrule.QuadraticDiscriminantAnalysis(), bayesrule.GaussianNB(), bayesrule.PoissonNB()],
    ids=["QDA", "GaussianNB", "PoissonNB"],
)
def test_device_statistics_equal_numpy_over_shapes_weights_and_absent_classes(est, seed):
    """Generated shapes, weights on the device (zeros among them), a declared class without rows."""
    rng = np.random.default_rng(seed)
    n, p, K = int(rng.integers(8, 200)), int(rng.integers(1, 9)), int(rng.integers(2, 5))
    y = np.arange(n) % K  # every class has rows ...
    X = rng.normal(loc=rng.normal(scale=50.0, size=p), size=(n, p)) * rng.uniform(0.1, 10, p)
    if est.input_spec().positive:
        X = np.floor(np.abs(X))
    w = rng.integers(0, 4, size=n).astype(float)
    w[:K] = 1.0  # ... with positive weight
    classes = np.arange(K + 1)  # ... and one more is declared
    ref = clone(est).statistics(X, y, w, classes=classes)
    with dispatch():
        got = clone(est).statistics(torch.asarray(X), torch.asarray(y), torch.asarray(w), classes)
    assert got.allclose(ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(got.counts, ref.counts)
    np.testing.assert_array_equal(got.lower, ref.lower)
    np.testing.assert_array_equal(got.upper, ref.upper)


# ---------------------------------------------------- updates and merges
@needs_dispatch
@pytest.mark.parametrize(
    "est",
    [
        bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.05),
        bayesrule.GaussianNB(),
        bayesrule.MultinomialNB(),
    ],
    ids=["QDA", "GaussianNB", "MultinomialNB"],
)
def test_partial_fit_merge_and_forget_on_device(est):
    X, y = _data_for(est)
    a, b = slice(0, 100), slice(100, None)
    ref = clone(est).fit(X, y)
    with dispatch():
        Xd = torch.asarray(X)
        part = clone(est).partial_fit(Xd[a], y[a], classes=np.unique(y))
        part.partial_fit(Xd[b], y[b])
        other = clone(est).fit(Xd[b], torch.asarray(y[b]))
        merged = clone(est).fit(Xd[a], y[a]).merge(other)
        forgot = clone(est).fit(Xd, y).forget(Xd[b], y[b])
        p_part, p_merged = host(part.predict_proba(Xd)), host(merged.predict_proba(Xd))
    np.testing.assert_allclose(p_part, ref.predict_proba(X), atol=1e-8)
    np.testing.assert_allclose(p_merged, ref.predict_proba(X), atol=1e-8)
    assert forgot.stats_.allclose(clone(est).fit(X, y).forget(X[b], y[b]).stats_, rtol=1e-8)


# ------------------------------------------------------------ refusals
UNSUPPORTED = [bayesrule.KernelNB(), bayesrule.CategoricalNB(), bayesrule.MixedNB()]


@needs_dispatch
@pytest.mark.parametrize("est", UNSUPPORTED, ids=_ids(UNSUPPORTED))
def test_estimators_without_support_say_so(est):
    X, y = count_data()
    assert est.__sklearn_tags__().array_api_support is False
    with (
        dispatch(),
        pytest.raises(TypeError, match=f"{type(est).__name__} does not support array API"),
    ):
        clone(est).fit(torch.asarray(X), y)
    fitted = clone(est).fit(X, y)
    with dispatch(), pytest.raises(TypeError, match="does not support array API inputs"):
        fitted.predict(xps.asarray(X))


@pytest.mark.parametrize("est", GAUSSIAN + COUNTS, ids=_ids(GAUSSIAN + COUNTS))
def test_supported_estimators_carry_the_tag(est):
    assert est.__sklearn_tags__().array_api_support is True


@needs_dispatch
def test_mixed_namespaces_and_devices_are_refused():
    X, y = gaussian_data()
    est = bayesrule.GaussianNB()
    with dispatch():
        with pytest.raises(ValueError, match="torch on device cpu and of array_api_strict"):
            clone(est).fit(torch.asarray(X), xps.asarray(y))
        other = xps.Device("device1")
        with pytest.raises(ValueError, match=r"array_api_strict on device .*CPU_DEVICE.*device1"):
            clone(est).fit(strict(X), y, sample_weight=strict(np.ones(len(y)), device=other))
        clone(est).fit(torch.asarray(X), y)  # NumPy y with torch X: fine


@needs_dispatch
@pytest.mark.parametrize(
    "dtype, est, match",
    [
        (np.complex128, bayesrule.GaussianNB(), "float32 or float64 X .*complex"),
        (np.int64, bayesrule.QuadraticDiscriminantAnalysis(), "float32 or float64 X .*int64"),
        (np.bool_, bayesrule.GaussianNB(), "float32 or float64 X .*bool"),
    ],
)
def test_unsupported_dtypes_are_refused(dtype, est, match):
    X, y = gaussian_data()
    with dispatch(), pytest.raises(TypeError, match=match):
        clone(est).fit(torch.asarray(X.astype(dtype)), y)


@needs_dispatch
@pytest.mark.parametrize("est", COUNTS[:2] + COUNTS[3:], ids=_ids(COUNTS[:2] + COUNTS[3:]))
def test_negative_counts_are_refused_on_device_as_in_numpy(est):
    X, y = count_data()
    bad = X.copy()
    bad[3, 1] = -1.0
    with pytest.raises(ValueError) as numpy_error:
        clone(est).fit(X, y).predict(bad)
    with dispatch():
        with pytest.raises(ValueError, match="[Nn]egative"):
            clone(est).fit(torch.asarray(bad), y)
        model = clone(est).fit(torch.asarray(X), y)
        for method in ("predict", "predict_proba"):
            with pytest.raises(ValueError) as device_error:
                getattr(model, method)(torch.asarray(bad))
            assert str(device_error.value) == str(numpy_error.value)


@needs_dispatch
@pytest.mark.parametrize(
    "est",
    [bayesrule.BernoulliNB(binarize=2.0), bayesrule.GaussianNB(), bayesrule.MultinomialNB()],
    ids=["BernoulliNB", "GaussianNB", "MultinomialNB"],
)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_and_infinity_meet_the_numpy_models_handling(est, bad):
    """Never binarised or multiplied away on the device: the NumPy model's result or error."""
    X, y = count_data()
    Xbad = X.copy()
    Xbad[5, 2] = bad

    def outcome(fit_X, pred_X, convert):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = clone(est).fit(convert(fit_X), y)
                return host(model.predict_proba(convert(pred_X)))
        except ValueError as exc:
            return str(exc)

    for fit_X, pred_X in ((Xbad, X), (X, Xbad)):
        want = outcome(fit_X, pred_X, lambda a: a)
        with dispatch():
            got = outcome(fit_X, pred_X, torch.asarray)
        if isinstance(want, str):
            assert got == want
        else:
            np.testing.assert_allclose(got, want, atol=1e-8)


@needs_dispatch
def test_integer_counts_are_counts():
    X, y = count_data()
    ref = bayesrule.MultinomialNB().fit(X, y)
    with dispatch():
        model = bayesrule.MultinomialNB().fit(torch.asarray(X.astype(np.int64)), y)
    np.testing.assert_allclose(model.feature_count_, ref.feature_count_)


@needs_dispatch
def test_a_model_fitted_on_one_device_predicts_on_another_only_once_moved():
    X, y = gaussian_data()
    one, two = xps.Device("device1"), xps.Device("CPU_DEVICE")
    ref = bayesrule.QuadraticDiscriminantAnalysis().fit(X, y)
    with dispatch():
        model = bayesrule.QuadraticDiscriminantAnalysis().fit(strict(X, device=one), y)
        model.predict(strict(X, device=one))
        with pytest.raises(
            ValueError,
            match=r"fitted on array_api_strict on device .*device1.* cannot predict_proba data on array_api_strict on device .*CPU_DEVICE",
        ):
            model.predict_proba(strict(X, device=two))
        assert bayesrule.move_to(model, strict(X[:1], device=two)) is model
        out = model.predict_proba(strict(X, device=two))
        assert out.device == two
        with pytest.raises(ValueError, match="fitted on array_api_strict"):
            model.predict(torch.asarray(X))
        bayesrule.move_to(model, torch, device="cpu")
        got = host(model.predict_proba(torch.asarray(X)))
        bayesrule.move_to(model, np)
        model.predict(strict(X, device=one))  # a host model predicts anywhere
    np.testing.assert_allclose(host(out), ref.predict_proba(X), atol=1e-8)
    np.testing.assert_allclose(got, ref.predict_proba(X), atol=1e-8)
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))


@needs_dispatch
def test_a_models_device_follows_its_fits_and_updates():
    X, y = gaussian_data()
    one, two = xps.Device("device1"), xps.Device("CPU_DEVICE")
    refused = pytest.raises(ValueError, match="fitted on array_api_strict")
    with dispatch():
        model = bayesrule.GaussianNB().fit(strict(X, device=one), y)
        model.statistics(strict(X, device=two), y)  # installs nothing: the home stays
        with refused:
            model.predict(strict(X, device=two))
        model.partial_fit(strict(X[:50], device=one), y[:50])  # an update on its device
        with refused:
            model.predict(strict(X, device=two))
        model.fit(X, y)  # a NumPy fit: a host model
        model.predict(strict(X, device=two))
        model.partial_fit(strict(X[:50], device=two), y[:50])
        with refused:
            model.predict(strict(X, device=one))
        with pytest.raises(ValueError, match="every sample weight is zero"):
            model.fit(strict(X, device=one), y, sample_weight=np.zeros(len(y)))  # unchanged
        with refused:
            model.predict(strict(X, device=one))


@needs_dispatch
def test_sklearn_move_estimator_to_points_a_copy_at_the_device():
    from sklearn.utils._array_api import move_estimator_to

    X, y = gaussian_data()
    one, two = xps.Device("device1"), xps.Device("CPU_DEVICE")
    with dispatch():
        model = bayesrule.GaussianNB().fit(strict(X, device=one), y)
        moved = move_estimator_to(model, xps, two)
        assert moved is not model and moved.theta_.device == two
        assert model.theta_.device == one  # the original stays where it was
        out = moved.predict_proba(strict(X, device=two))
        assert out.device == two
        with pytest.raises(ValueError, match="fitted on array_api_strict"):
            model.predict_proba(strict(X, device=two))
        back = move_estimator_to(model, np, None)
        assert isinstance(back.theta_, np.ndarray) and isinstance(back.var_, np.ndarray)
        back.predict(torch.asarray(X))  # a host model: predicts anywhere
    np.testing.assert_allclose(host(out), bayesrule.GaussianNB().fit(X, y).predict_proba(X))


@needs_dispatch
def test_predicting_on_device_changes_nothing_on_the_model():
    X, y = gaussian_data()
    with dispatch():
        for est in (bayesrule.LinearDiscriminantAnalysis(), bayesrule.GaussianNB()):
            model = est.fit(torch.asarray(X), y)
            before_dict, before = dict(model.__dict__), pickle.dumps(model)
            # (score_samples left out: the NumPy LDA's own score_samples caches a term)
            for m in ("predict", "predict_proba", "predict_log_proba", "decision_function"):
                if hasattr(model, m):  # naive Bayes has no decision_function
                    getattr(model, m)(torch.asarray(X))
            assert model.__dict__.keys() == before_dict.keys()
            assert pickle.dumps(model) == before


# ------------------------------------------------------------- files
@needs_dispatch
def test_a_model_file_from_a_device_fit_loads_as_a_numpy_model(tmp_path):
    X, y = gaussian_data()
    with dispatch():
        model = bayesrule.LinearDiscriminantAnalysis().fit(torch.asarray(X), y)
        bayesrule.save(model, tmp_path / "m.bayesrule")
    loaded = bayesrule.load(tmp_path / "m.bayesrule")
    out = loaded.predict_proba(X)
    assert isinstance(out, np.ndarray) and isinstance(loaded.coef_, np.ndarray)
    np.testing.assert_allclose(
        out, bayesrule.LinearDiscriminantAnalysis().fit(X, y).predict_proba(X), atol=1e-10
    )


# ----------------------------------------------- NumPy input unchanged
@needs_dispatch
def test_numpy_input_and_dispatch_off_are_unchanged():
    X, y = gaussian_data()
    ref = bayesrule.QuadraticDiscriminantAnalysis().fit(X, y).predict_proba(X)
    with dispatch():
        on = bayesrule.QuadraticDiscriminantAnalysis().fit(X, y).predict_proba(X)
    off = bayesrule.QuadraticDiscriminantAnalysis().fit(torch.asarray(X), y)
    assert isinstance(on, np.ndarray) and isinstance(
        off.predict_proba(torch.asarray(X)), np.ndarray
    )
    np.testing.assert_array_equal(on, ref)


@needs_dispatch
def test_non_finite_rows_take_the_host_repairs():
    X, y = gaussian_data()
    Xfar = X.copy()
    Xfar[0] = 1e300
    ref = bayesrule.GaussianNB().fit(X, y)
    with dispatch(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = bayesrule.GaussianNB().fit(torch.asarray(X), y)
        got = host(model.predict_proba(torch.asarray(Xfar)))
        want = ref.predict_proba(Xfar)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, atol=1e-8)


@needs_dispatch
@pytest.mark.parametrize("n", [50, 5000])
def test_device_predictions_warn_out_of_range_as_numpy_does(n):
    rng = np.random.default_rng(0)
    X, y = rng.random((n, 4)), np.arange(n) % 3
    with dispatch():
        for est in (bayesrule.GaussianNB(), bayesrule.QuadraticDiscriminantAnalysis()):
            model = est.fit(torch.asarray(X), y)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                model.predict_proba(torch.asarray(X))  # in range: no warning
            with pytest.warns(bayesrule.OutOfRangeWarning, match="feature 2"):
                model.predict_proba(torch.asarray(X * np.array([1.0, 1.0, 255.0, 1.0])))


@needs_dispatch
@pytest.mark.parametrize("ns", ["torch", "array_api_strict"])
@pytest.mark.parametrize("est", GAUSSIAN + COUNTS, ids=_ids(GAUSSIAN + COUNTS))
def test_sklearn_check_array_api_input(est, ns):
    """scikit-learn's check: every fitted array and every output in X's namespace and device."""
    from sklearn.utils.estimator_checks import check_array_api_input

    device = "cpu" if ns == "torch" else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if getattr(est, "solver", None) == "lsqr":
            # the check calls every method the estimator has, and lsqr's transform
            # refuses (as scikit-learn's does, for NumPy input too): the attributes
            # and the other methods are checked before it
            with pytest.raises(NotImplementedError, match="transform not implemented for 'lsqr'"):
                check_array_api_input("LDA", est, array_namespace=ns, device_name=device)
            return
        check_array_api_input(type(est).__name__, est, array_namespace=ns, device_name=device)


# --------------------------------------------------------------- CUDA
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@needs_dispatch
@cuda
@pytest.mark.parametrize("est", GAUSSIAN + COUNTS, ids=_ids(GAUSSIAN + COUNTS))
def test_cuda_gives_the_numpy_model(est):
    X, y = _data_for(est)
    ref = clone(est).fit(X, y)
    with dispatch():
        Xd = torch.asarray(X, device="cuda")
        model = clone(est).fit(Xd, y)
        proba = model.predict_proba(Xd)
        labels = model.predict(Xd)
    assert proba.device.type == "cuda" and labels.device.type == "cuda"
    np.testing.assert_allclose(host(proba), ref.predict_proba(X), atol=1e-8)
    np.testing.assert_array_equal(host(labels), ref.predict(X))

"""A model fitted on device arrays: its fitted arrays live there, its host side stays NumPy.

As in test_array_api.py, the tests need scikit-learn's array API dispatch,
which needs ``SCIPY_ARRAY_API=1`` before SciPy is imported: they run in a
fresh process started by ``test_in_a_process_with_scipy_array_api`` and
skip in the suite's own process.
"""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

import bayesrule
from _array_api_rerun import rerun_with_scipy_array_api
from bayesrule._util import dispatch as seam
from test_array_api import (
    COUNTS,
    GAUSSIAN,
    _data_for,
    _ids,
    dispatch,
    gaussian_data,
    host,
    library,
    needs_dispatch,
    strict,
)

torch = pytest.importorskip("torch")
xps = pytest.importorskip("array_api_strict")


test_in_a_process_with_scipy_array_api = rerun_with_scipy_array_api(__file__)


def _numeric_arrays(est):
    """The fitted arrays scikit-learn's check looks at (classes_ apart)."""
    return {
        k: v
        for k, v in vars(est).items()
        if isinstance(v, np.ndarray) and v.dtype.kind in "biuf" and k != "classes_"
    }


def _fit_both(est, ns_array, dtype=np.float64):
    X, y = _data_for(est, dtype)
    ref = clone(est).fit(X, y)
    with dispatch(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = clone(est).fit(ns_array(X), y)
    return ref, model, X, y


@needs_dispatch
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("est", GAUSSIAN + COUNTS, ids=_ids(GAUSSIAN + COUNTS))
def test_fitted_arrays_live_on_the_device_and_equal_the_numpy_models(est, dtype):
    one = xps.Device("device1")
    ref, model, X, y = _fit_both(est, lambda a: strict(a, device=one), dtype)
    arrays = _numeric_arrays(ref)
    assert arrays, "no fitted array to check"
    for key, want in arrays.items():
        got = getattr(model, key)
        assert library(got) == "array_api_strict" and got.device == one, key
        assert host(got).dtype == want.dtype, key
        np.testing.assert_allclose(host(got), want, rtol=1e-7, atol=1e-8, err_msg=key)
    # what the host needs stays there: labels, statistics, class models
    assert isinstance(model.classes_, np.ndarray)
    assert model.stats_.allclose(ref.stats_, rtol=1e-8)


@needs_dispatch
@pytest.mark.parametrize(
    "est",
    [bayesrule.LinearDiscriminantAnalysis(), bayesrule.GaussianNB(), bayesrule.MultinomialNB()],
    ids=["LDA", "GaussianNB", "MultinomialNB"],
)
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_pickled_device_model_comes_back_on_its_device(est, how):
    one = xps.Device("device1")
    ref, model, X, _ = _fit_both(est, lambda a: strict(a, device=one))
    again = pickle.loads(pickle.dumps(model)) if how == "pickle" else copy.deepcopy(model)
    for key in _numeric_arrays(ref):
        assert getattr(again, key).device == one, key
    with dispatch():
        out = again.predict_proba(strict(X, device=one))
        with pytest.raises(ValueError, match="fitted on array_api_strict"):
            again.predict_proba(strict(X, device=xps.Device("CPU_DEVICE")))
    assert out.device == one
    np.testing.assert_allclose(host(out), ref.predict_proba(X), atol=1e-8)
    assert again.__dict__.keys() == model.__dict__.keys()
    assert again.stats_.allclose(model.stats_, rtol=0, atol=0)


@needs_dispatch
def test_move_to_numpy_and_back_moves_the_fitted_arrays():
    ref, model, X, _ = _fit_both(bayesrule.QuadraticDiscriminantAnalysis(), torch.asarray)
    assert bayesrule.move_to(model, np) is model
    for key, want in _numeric_arrays(ref).items():
        got = getattr(model, key)
        assert isinstance(got, np.ndarray), key
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=key)
    np.testing.assert_allclose(model.predict_proba(X), ref.predict_proba(X), atol=1e-8)
    assert model not in seam._WATCHED
    two = xps.Device("device1")
    bayesrule.move_to(model, strict(X[:1], device=two))
    assert all(getattr(model, k).device == two for k in _numeric_arrays(ref))
    with dispatch():
        out = model.predict_proba(strict(X, device=two))
    np.testing.assert_allclose(host(out), ref.predict_proba(X), atol=1e-8)


@needs_dispatch
@pytest.mark.parametrize("on", [True, False], ids=["dispatch-on", "dispatch-off"])
def test_numpy_input_to_a_device_model_is_refused_naming_both(on):
    _, model, X, _ = _fit_both(bayesrule.GaussianNB(), torch.asarray)
    ctx = dispatch() if on else warnings.catch_warnings()
    with ctx:
        for method in ("predict", "predict_proba", "score_samples"):
            with pytest.raises(
                ValueError,
                match=rf"GaussianNB\.{method}\(\) must use the same namespace and device.*"
                r"torch on device cpu.*ndarray.*move_to\(model, numpy\)",
            ):
                getattr(model, method)(X)
        # its own device's arrays are predicted there, dispatch on or off
        assert library(model.predict(torch.asarray(X))) == library(torch.asarray(X))


@needs_dispatch
def test_the_host_copy_of_a_fitted_array_is_the_numpy_models():
    """What NumPy code of the estimators reads for a device model (``_host_array``)."""
    est = bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.05)
    ref, model, _, _ = _fit_both(est, lambda a: strict(a, device=xps.Device("device1")))
    got = model._host_array("_covs_")
    assert isinstance(got, np.ndarray) and library(model._covs_) == "array_api_strict"
    np.testing.assert_allclose(got, ref._covs_, rtol=1e-9, atol=1e-12)
    assert ref._host_array("_covs_") is ref._covs_


@needs_dispatch
def test_rotations_of_a_device_qda_come_from_the_host_copy():
    """QDA's lazily computed eigenvectors read the host twin, so array-api-strict works."""
    est = bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.05)
    ref, model, _, _ = _fit_both(est, lambda a: strict(a, device=xps.Device("device1")))
    for got, want in zip(model.rotations_, ref.rotations_, strict=True):
        # eigenvectors are defined up to sign
        np.testing.assert_allclose(np.abs(got), np.abs(want), rtol=1e-7, atol=1e-9)
    for got, want in zip(model.scalings_, ref.scalings_, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@needs_dispatch
def test_numpy_fits_are_never_held():
    X, y = gaussian_data()
    with dispatch():
        model = bayesrule.LinearDiscriminantAnalysis().fit(X, y)
    assert model not in seam._WATCHED
    assert all(isinstance(v, np.ndarray) for v in _numeric_arrays(model).values())
    # a device model refitted on NumPy data is a NumPy model again
    with dispatch():
        model.fit(torch.asarray(X), y)
        assert library(model.coef_) == library(torch.asarray(X))
        model.fit(X, y)
    assert isinstance(model.coef_, np.ndarray) and model not in seam._WATCHED
    np.testing.assert_array_equal(model.predict(X), model.predict(X.copy()))


@needs_dispatch
def test_updates_keep_the_arrays_on_the_device_and_merges_give_a_host_model():
    X, y = gaussian_data()
    ref = bayesrule.GaussianNB().fit(X, y)
    with dispatch():
        Xd = torch.asarray(X)
        model = bayesrule.GaussianNB().partial_fit(Xd[:100], y[:100], classes=np.unique(y))
        model.partial_fit(Xd[100:], y[100:])
        merged = bayesrule.GaussianNB().fit(Xd[:100], y[:100])
        merged = merged.merge(bayesrule.GaussianNB().fit(Xd[100:], y[100:]))
    assert library(model.theta_) == library(Xd) and library(model.var_) == library(Xd)
    np.testing.assert_allclose(host(model.var_), ref.var_, rtol=1e-9)
    # merge builds a new model from two statistics: NumPy, until moved
    assert isinstance(merged.theta_, np.ndarray)
    np.testing.assert_allclose(merged.theta_, ref.theta_, rtol=1e-9)


@needs_dispatch
@pytest.mark.parametrize("ns", ["torch", "strict"])
@pytest.mark.parametrize(
    "est",
    [
        bayesrule.LinearDiscriminantAnalysis(),
        bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.05),
        bayesrule.GaussianNB(),
        bayesrule.PoissonNB(),
    ],
    ids=["LDA", "QDA", "GaussianNB", "PoissonNB"],
)
def test_sample_of_a_device_model_comes_back_on_its_device(est, ns):
    convert = (
        torch.asarray if ns == "torch" else (lambda a: strict(a, device=xps.Device("device1")))
    )
    ref, model, X, y = _fit_both(est, convert)
    Xs, ys = model.sample(500, random_state=3)
    Xr, yr = ref.sample(500, random_state=3)
    assert library(Xs) == library(ys) == library(convert(X))
    if ns == "strict":
        assert Xs.device == ys.device == xps.Device("device1")
    np.testing.assert_array_equal(host(ys), yr)
    np.testing.assert_allclose(host(Xs), Xr, rtol=1e-9, atol=1e-9)
    labels = np.array([0, 2, 2, 1])
    Xl, yl = model.sample(y=labels, random_state=0)
    assert library(Xl) == library(convert(X)) and host(Xl).shape == (4, X.shape[1])
    np.testing.assert_array_equal(host(yl), labels)


@needs_dispatch
def test_sample_with_string_labels_keeps_them_numpy():
    X, y = gaussian_data()
    names = np.array(["a", "b", "c"])[y]
    with dispatch():
        model = bayesrule.GaussianNB().fit(torch.asarray(X), names)
    Xs, ys = model.sample(20, random_state=0)
    assert library(Xs) == library(torch.asarray(X))
    assert isinstance(ys, np.ndarray) and set(ys) <= {"a", "b", "c"}


@needs_dispatch
@pytest.mark.parametrize(
    "est",
    [bayesrule.LinearDiscriminantAnalysis(), bayesrule.GaussianNB(), bayesrule.BernoulliNB()],
    ids=["LDA", "GaussianNB", "BernoulliNB"],
)
def test_a_model_file_of_a_device_model_holds_host_arrays(est, tmp_path):
    ref, model, X, _ = _fit_both(est, torch.asarray)
    bayesrule.save(model, tmp_path / "m.bayesrule")
    loaded = bayesrule.load(tmp_path / "m.bayesrule")
    assert loaded not in seam._WATCHED
    for key, want in _numeric_arrays(ref).items():
        got = getattr(loaded, key)
        assert isinstance(got, np.ndarray), key
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=key)
    np.testing.assert_allclose(loaded.predict_proba(X), ref.predict_proba(X), atol=1e-10)


# --------------------------------------------------------------- CUDA
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@needs_dispatch
@cuda
@pytest.mark.parametrize(
    "est",
    [
        bayesrule.LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto"),
        bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.05),
        bayesrule.GaussianNB(),
        bayesrule.MultinomialNB(),
        bayesrule.MixtureDiscriminantAnalysis(n_components=2, random_state=0),
    ],
    ids=["LDA-auto", "QDA", "GaussianNB", "MultinomialNB", "MDA"],
)
def test_cuda_models_hold_their_arrays_there(est, tmp_path):
    ref, model, X, _ = _fit_both(est, lambda a: torch.asarray(a, device="cuda"))
    for key, want in _numeric_arrays(ref).items():
        got = getattr(model, key)
        assert got.device.type == "cuda", key
        np.testing.assert_allclose(host(got), want, rtol=1e-7, atol=1e-8, err_msg=key)
    Xs, ys = model.sample(50, random_state=0)
    assert Xs.device.type == "cuda" and ys.device.type == "cuda"
    again = pickle.loads(pickle.dumps(model))
    with dispatch():
        proba = again.predict_proba(torch.asarray(X, device="cuda"))
    assert proba.device.type == "cuda"
    np.testing.assert_allclose(host(proba), ref.predict_proba(X), atol=1e-8)
    bayesrule.save(model, tmp_path / "m.bayesrule")
    assert isinstance(bayesrule.load(tmp_path / "m.bayesrule").classes_, np.ndarray)
    bayesrule.move_to(model, np)
    assert all(isinstance(getattr(model, k), np.ndarray) for k in _numeric_arrays(ref))
    np.testing.assert_allclose(model.predict_proba(X), ref.predict_proba(X), atol=1e-8)

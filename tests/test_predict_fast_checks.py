"""The prediction's input checks skipped where their outcome is known, and only there.

The count models take rows that scikit-learn's ``validate_data`` would return
unchanged without calling it (:func:`bayesrule._util.validation.plain_rows`),
and the prediction methods skip ``check_is_fitted``'s tags where ``classes_``
is set. Whatever the input (dtypes, orders, shapes, subclasses, lists, feature
names, wrong widths, an unfitted model), the rows the model sees, its results,
its warnings and its errors are those of the full checks.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

import bayesrule as br
from bayesrule._util.validation import plain_rows

MODELS = ["MultinomialNB", "ComplementNB", "BernoulliNB"]


def _fitted(name: str, p: int, names: bool):
    rng = np.random.default_rng(p)
    X = rng.poisson(2.0, size=(40, p)).astype(np.float64)
    y = np.arange(40) % 3
    if names:
        X = pd.DataFrame(X, columns=[f"f{j}" for j in range(p)])
    return getattr(br, name)().fit(X, y)


def _seen(est, X, fast: bool):
    """What ``_numeric_X`` gives (or raises) and warns, with the skip on or off."""
    cls = type(est)
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mp.setattr(cls, "_plain_rows_pass", fast)
        try:
            got: object = est._numeric_X(X, reset=False)
        except (TypeError, ValueError) as exc:
            got = (type(exc), str(exc))
    return got, [(type(x.message), str(x.message)) for x in w]


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(MODELS),
    p=st.integers(1, 6),
    n=st.integers(0, 5),
    width=st.integers(-1, 1),
    dtype=st.sampled_from(["float64", "float32", "float16", "int64", ">f8", "object"]),
    order=st.sampled_from(["C", "F"]),
    kind=st.sampled_from(["array", "strided", "matrix", "list", "1d", "3d", "frame"]),
    names=st.booleans(),
)
def test_the_skip_gives_what_validate_data_gives(name, p, n, width, dtype, order, kind, names):
    est = _fitted(name, p, names)
    q = max(1, p + width)
    base = np.arange(n * q * 2, dtype=np.float64).reshape(2 * n, q) % 5
    X: object = np.array(base[::2] if kind == "strided" else base[:n], dtype=dtype, order=order)
    if kind == "matrix":
        X = np.asmatrix(X)
    elif kind == "list":
        X = np.asarray(X).tolist()
    elif kind == "1d":
        X = np.asarray(X).ravel()
    elif kind == "3d":
        X = np.asarray(X)[None]
    elif kind == "frame":
        X = pd.DataFrame(np.asarray(X), columns=[f"f{j}" for j in range(q)])
    fast, fast_w = _seen(est, X, True)
    full, full_w = _seen(est, X, False)
    assert fast_w == full_w
    if isinstance(full, tuple):
        assert fast == full  # the same error, with the same message
        return
    assert type(fast) is type(full) and fast.dtype == full.dtype
    np.testing.assert_array_equal(fast, full)
    if plain_rows(X, est.n_features_in_) and not names:
        assert fast is X  # no copy, no conversion


@pytest.mark.parametrize("name", MODELS)
def test_predictions_are_those_of_the_full_checks(name, monkeypatch):
    est = _fitted(name, 7, False)
    X = np.random.default_rng(0).poisson(2.0, size=(30, 7)).astype(np.float64)
    fast = {m: getattr(est, m)(X) for m in ("predict", "predict_proba", "predict_log_proba")}
    monkeypatch.setattr(type(est), "_plain_rows_pass", False)
    for m, got in fast.items():
        np.testing.assert_array_equal(got, getattr(est, m)(X))
    if name == "BernoulliNB":
        return  # binarized: any sign is a value
    X[3, 2] = -1.0
    with pytest.raises(ValueError, match=r"Negative values .*column 2"):
        est.predict(X)  # the value checks still follow the skipped validation
    monkeypatch.setattr(type(est), "_plain_rows_pass", True)
    with pytest.raises(ValueError, match=r"Negative values .*column 2"):
        est.predict(X)


@pytest.mark.parametrize("name", MODELS + ["GaussianNB", "LinearDiscriminantAnalysis"])
def test_an_unfitted_model_is_refused_as_before(name):
    est = getattr(br, name)()
    for m in ("predict", "predict_proba", "predict_joint_log_proba", "class_log_density"):
        with pytest.raises(NotFittedError, match="not fitted yet"):
            getattr(est, m)(np.ones((2, 3)))

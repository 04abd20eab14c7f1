"""BernoulliNB's rows to predict checked by one sum: the same answers and refusals as before."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import bayesrule as br
from bayesrule.estimators._nb import _BaseNB

_METHODS = ("predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba")


def _fitted(threshold):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 6))
    y = rng.integers(0, 3, size=300)
    return br.BernoulliNB(binarize=threshold).fit(X, y)


def _outcome(est, X, method):
    """The method's result, or the error's type and message."""
    try:
        return getattr(est, method)(X)
    except ValueError as exc:
        return (type(exc), str(exc))


def _separate(est, X, method):
    """The same call through the base's checks (a minimum, a maximum, a NaN search)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(br.BernoulliNB, "_input", _BaseNB._input)
        return _outcome(est, X, method)


_ENTRY = st.one_of(
    st.floats(-3, 3),
    st.sampled_from([np.nan, np.inf, -np.inf, 1e308, -1e308, 0.0]),
)


@settings(max_examples=120, deadline=None)
@given(
    arr=hnp.arrays(np.float64, st.tuples(st.integers(1, 25), st.just(6)), elements=_ENTRY),
    dtype=st.sampled_from(["float64", "float32"]),
    fortran=st.booleans(),
    sparse=st.booleans(),
    threshold=st.sampled_from([0.0, 0.5, -1.0]),
    method=st.sampled_from(_METHODS),
)
def test_one_sum_check_equals_the_separate_checks(arr, dtype, fortran, sparse, threshold, method):
    """NaN (missing), infinities (refused, same message), sums that overflow, any layout."""
    est = _fitted(threshold)
    with np.errstate(over="ignore"):
        X = arr.astype(dtype)
    X = np.asfortranarray(X) if fortran else X
    if sparse:
        X = sp.csr_matrix(np.nan_to_num(X, nan=0.0, posinf=0.0, neginf=0.0))
    got, want = _outcome(est, X, method), _separate(est, X, method)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and got == want
    else:
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_infinity_is_refused_naming_its_row_and_column():
    est = _fitted(0.0)
    X = np.zeros((40, 6))
    X[17, 4] = np.inf
    with pytest.raises(ValueError, match=re.escape("X")) as err:
        est.predict(X)
    assert "17" in str(err.value) and "4" in str(err.value)


def test_integer_rows_and_nan_rows_predict_as_float64():
    est = _fitted(0.0)
    X = np.random.default_rng(2).integers(-2, 3, size=(500, 6))
    np.testing.assert_array_equal(est.predict(X), est.predict(X.astype(np.float64)))
    Xn = X.astype(np.float64)
    Xn[::3, 2] = np.nan  # missing: the model without that feature decides
    np.testing.assert_allclose(
        est.predict_proba(Xn), _separate(est, Xn, "predict_proba"), rtol=1e-10
    )


def test_finite_dense_rows_skip_the_separate_checks():
    """Finite dense rows are settled by the sum: the minimum/maximum checks are not run."""
    est = _fitted(0.0)
    X = np.random.default_rng(4).normal(size=(200, 6))
    calls = []
    real = br.BernoulliNB._check_values
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(br.BernoulliNB, "_check_values", lambda s, Xv: calls.append(1) or real(s, Xv))
        est.predict(X)
        assert calls == []
        X[5, 1] = np.nan
        est.predict(X)
        assert calls == [1]

"""check_categories judged by blocks of rows: the same verdict and message as entry by entry."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import bayesrule as br
from bayesrule.stats import _categories
from bayesrule.stats._categories import check_categories


def _reference(X, columns=None, max_categories=2**16):
    """The verdict entry by entry over the whole array: None, or (row, column) of the first bad."""
    X = np.asarray(X, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bad = ~np.isnan(X) & ((X < 0) | (X != np.floor(X)) | (X >= max_categories))
    if not bad.any():
        return None
    r, j = (int(v[0]) for v in np.nonzero(bad))
    return r, j


_ENTRY = st.one_of(
    st.integers(0, 6).map(float),
    st.sampled_from([np.nan, -1.0, 0.5, 2.25, 7.0, 1e300, np.inf, -np.inf, -0.0]),
)


@settings(max_examples=300, deadline=None)
@given(
    arr=hnp.arrays(np.float64, st.tuples(st.integers(1, 30), st.integers(1, 7)), elements=_ENTRY),
    dtype=st.sampled_from(["float64", "float32", "int64", "int32"]),
    fortran=st.booleans(),
    block=st.sampled_from([1, 5, 16, 2**18]),
    max_categories=st.sampled_from([3, 7, 2**16]),
)
def test_blocked_check_agrees_with_the_entrywise_one(arr, dtype, fortran, block, max_categories):
    """Every dtype, layout and block size: raises exactly when some entry is not a valid code,
    naming the first such entry (row-major) as the entry-by-entry check does."""
    if dtype.startswith("int"):
        arr = np.where(np.isfinite(arr) & (np.abs(arr) < 1e9), np.trunc(arr), 0).astype(dtype)
    else:
        with np.errstate(over="ignore"):  # 1e300 in float32 is inf: still refused
            arr = arr.astype(dtype)
    X = np.asfortranarray(arr) if fortran else arr
    want = _reference(X, max_categories=max_categories)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_categories, "CHECK_BLOCK", block)
        if want is None:
            check_categories(X, max_categories=max_categories)
            return
        r, j = want
        with pytest.raises(ValueError, match=rf"column {j} .* at row {r}\b"):
            check_categories(X, max_categories=max_categories)


def test_messages_name_the_column_the_value_and_the_row():
    X = np.zeros((500, 4))
    X[321, 2] = 1.5
    with pytest.raises(
        ValueError, match=r"column 'c' must hold non-negative integer .* 1.5 at row 321"
    ):
        check_categories(X, columns=["a", "b", "c", "d"])
    X[321, 2] = 70000.0
    with pytest.raises(ValueError, match=r"column 2 holds category code 70000 at row 321"):
        check_categories(X)
    X[321, 2] = np.nan  # missing: passes
    check_categories(X)


def test_categorical_nb_predicts_and_refuses_as_before():
    """CategoricalNB on codes with NaN: predictions unchanged; a fraction in a later block refused."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(3000, 90)).astype(np.float64)
    y = rng.integers(0, 3, size=3000)
    est = br.CategoricalNB().fit(X, y)
    Xn = X.copy()
    Xn[::7, 5] = np.nan
    np.testing.assert_array_equal(est.predict(Xn), est.predict(Xn.astype(np.float32)))
    Xn[2500, 40] = 2.5
    with pytest.raises(ValueError, match=r"column 40 must hold .* 2.5 at row 2500"):
        est.predict(Xn)

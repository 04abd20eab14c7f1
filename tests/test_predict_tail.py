"""The (n, K) end of every prediction: the row argmax and the softmax equal NumPy's forms."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import bayesrule as br
from bayesrule.estimators import _predict
from bayesrule.estimators._predict import ARGMAX_COLUMNS, log_softmax, row_argmax, softmax

# values with many ties and every kind of non-finite entry
_VALUES = st.one_of(
    st.sampled_from([0.0, 1.0, -1.0, 2.5, -1e300, 1e300, np.inf, -np.inf, np.nan]),
    st.floats(-10, 10),
)


@settings(max_examples=200, deadline=None)
@given(
    arr=hnp.arrays(
        np.float64,
        st.tuples(st.integers(0, 40), st.integers(1, ARGMAX_COLUMNS + 3)),
        elements=_VALUES,
    ),
    fortran=st.booleans(),
)
def test_row_argmax_is_numpys(arr, fortran):
    """The first index of each row's maximum, as np.argmax (ties, NaN, infinities, any layout)."""
    values = np.asfortranarray(arr) if fortran else np.ascontiguousarray(arr)
    if values.shape[0] == 0:
        assert row_argmax(values).shape == (0,)
        return
    np.testing.assert_array_equal(row_argmax(values), np.argmax(arr, axis=1))


@settings(max_examples=150, deadline=None)
@given(
    arr=hnp.arrays(
        np.float64,
        st.tuples(st.integers(8, 60), st.integers(1, ARGMAX_COLUMNS + 3)),
        elements=_VALUES,
    ),
    tile=st.integers(1, 9),
)
def test_row_argmax_of_rows_in_tiles_is_numpys(arr, tile):
    """Row-major values read a tile of rows at a time (tiles shrunk to a few rows, so that
    ties, NaN and infinities fall on every tile's edges): np.argmax's answer."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_predict, "ARGMAX_TILE", tile)
        np.testing.assert_array_equal(row_argmax(np.ascontiguousarray(arr)), np.argmax(arr, axis=1))


def test_row_argmax_of_many_rows_in_tiles():
    """At the real tile size: a partial last tile, ties and NaN rows across tile edges."""
    rng = np.random.default_rng(1)
    n = 3 * _predict.ARGMAX_TILE + 17
    values = rng.integers(-2, 3, size=(n, 5)).astype(np.float64)  # many ties
    values[rng.integers(0, n, 40), rng.integers(0, 5, 40)] = np.nan
    values[_predict.ARGMAX_TILE - 1 : _predict.ARGMAX_TILE + 1] = np.nan
    assert values.flags.c_contiguous
    np.testing.assert_array_equal(row_argmax(values), np.argmax(values, axis=1))


def test_row_argmax_of_a_strided_view():
    """A view that is neither C- nor F-contiguous takes NumPy's path and gives its answer."""
    base = np.random.default_rng(0).standard_normal((50, 12))
    view = np.asfortranarray(base)[::2, ::3]
    np.testing.assert_array_equal(row_argmax(view), np.argmax(view, axis=1))


@settings(max_examples=150, deadline=None)
@given(
    arr=hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 30), st.integers(1, 12)),
        elements=st.one_of(
            st.floats(-1e3, 1e3), st.sampled_from([-np.inf, -1e300, -1e300 * 0.999, 0.0])
        ),
    ),
    fortran=st.booleans(),
)
def test_softmax_is_the_exponential_of_log_softmax(arr, fortran):
    """Rows with a finite maximum: probabilities within 1e-12 of exp(log_softmax), summing to 1."""
    arr[:, 0] = np.where(np.isfinite(arr[:, 0]), arr[:, 0], 0.0)  # a finite maximum per row
    values = np.asfortranarray(arr) if fortran else arr
    got = softmax(values.copy())
    np.testing.assert_allclose(got, np.exp(log_softmax(values)), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-13)
    assert np.all(got >= 0)


def _counts(rng, n, p, k):
    y = np.arange(n) % k
    lam = rng.uniform(0.5, 4.0, size=(k, p))
    return rng.poisson(lam[y]).astype(np.float64), y


@pytest.mark.parametrize(
    "make",
    [br.MultinomialNB, br.ComplementNB, br.BernoulliNB, br.GaussianNB],
    ids=lambda c: c.__name__,
)
@pytest.mark.parametrize("n", [10, 3000])
def test_estimators_predict_the_argmax_of_their_probabilities(make, n):
    """predict is the argmax of predict_log_proba and predict_proba its exponential (1e-10),
    for narrow rows (column-major products) and a few rows."""
    rng = np.random.default_rng(n)
    X, y = _counts(rng, n, 20, 5)
    est = make().fit(X, y)
    log_p = est.predict_log_proba(X)
    np.testing.assert_array_equal(est.predict(X), est.classes_[np.argmax(log_p, axis=1)])
    np.testing.assert_allclose(est.predict_proba(X), np.exp(log_p), rtol=1e-10, atol=1e-300)

"""Narrow rows' products in the plain shape, the fast per-row add, and NaN rows left alone.

``products._narrow_dot`` multiplies rows of at most ``NARROW`` features as
``X @ A.T`` and hands the result over column-major, or row-major within
``rows_wanted`` (the joint log likelihood and the decision function, which
return it); ``_predict.add_to_rows`` adds a row to each row of a row-major
array a tile of rows at a time. Each equals the plain NumPy expression; a
NaN in one row of a count model's input leaves every other row's answer
exactly as without it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import discriminant_analysis as skda
from sklearn import naive_bayes as sknb

import bayesrule as br
from _generated import poisson_counts
from bayesrule._util import products
from bayesrule.estimators._predict import TILE_ROWS, add_to_rows


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 3 * TILE_ROWS + 7),
    K=st.integers(1, 20),
    order=st.sampled_from("CF"),
    into=st.sampled_from(["new", "self", "other"]),
    seed=st.integers(0, 2**16),
)
def test_add_to_rows_equals_numpy(n, K, order, into, seed):
    rng = np.random.default_rng(seed)
    values = np.asarray(rng.normal(scale=100.0, size=(n, K)), order=order)
    row = rng.normal(size=K)
    expected = values + row
    if into == "new":
        got = add_to_rows(values, row)
    elif into == "self":
        got = add_to_rows(values, row, values)
        assert got is values
    else:
        out = np.empty((n, K), order=order)
        got = add_to_rows(values, row, out)
        assert got is out
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 3000),
    p=st.integers(1, products.NARROW),
    K=st.integers(1, 12),
    order=st.sampled_from("CF"),
    seed=st.integers(0, 2**16),
)
def test_narrow_products_equal_numpy_in_either_layout(n, p, K, order, seed):
    rng = np.random.default_rng(seed)
    X = np.asarray(rng.poisson(3.0, size=(n, p)).astype(np.float64), order=order)
    A = rng.normal(size=(K, p))
    expected = X @ A.T
    got = products.rows_dot(X, A)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert got.flags.f_contiguous  # the reductions over the classes run over columns
    with products.rows_wanted():
        kept = products.rows_dot(X, A)
    np.testing.assert_allclose(kept, expected, rtol=1e-12, atol=1e-12)
    assert not getattr(products._fused, "rows", False)  # the flag ends with the block


@pytest.mark.parametrize("idle", [True, False])
def test_the_shape_of_narrow_products_follows_the_machine(idle, monkeypatch):
    # idle (or one BLAS thread): the plain shape, row-major within rows_wanted; busy
    # with a multi-threaded BLAS: the transposed shape, column-major either way
    monkeypatch.setattr(products, "blas_has_the_cores", lambda: idle)
    monkeypatch.setattr(products, "blas_threads", lambda: 2)
    rng = np.random.default_rng(2)
    X, A = rng.poisson(2.0, size=(5000, 20)).astype(np.float64), rng.normal(size=(5, 20))
    expected = X @ A.T
    with products.rows_wanted():
        kept = products.rows_dot(X, A)
    got = products.rows_dot(X, A)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(kept, expected, rtol=1e-12)
    assert got.flags.f_contiguous
    assert kept.flags.c_contiguous if idle else kept.flags.f_contiguous


def test_rows_wanted_is_restored_after_an_error():
    with pytest.raises(RuntimeError), products.rows_wanted():
        assert products._fused.rows
        raise RuntimeError("boom")
    assert not getattr(products._fused, "rows", False)


NARROW_MODELS = [
    ("MultinomialNB", sknb.MultinomialNB),
    ("ComplementNB", sknb.ComplementNB),
    ("BernoulliNB", sknb.BernoulliNB),
]


@pytest.mark.parametrize("name,theirs", NARROW_MODELS)
@pytest.mark.parametrize("n", [700, 40_000])  # the one product, and the tracked paths
def test_narrow_count_models_equal_scikit_learn(name, theirs, n):
    X, y = poisson_counts(5, 3000, 20, 5)
    Xt = poisson_counts(6, n, 20, 5)[0]
    ours, ref = getattr(br, name)().fit(X, y), theirs().fit(X, y)
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(Xt))
    np.testing.assert_allclose(
        ours.predict_proba(Xt), ref.predict_proba(Xt), rtol=1e-10, atol=1e-12
    )
    np.testing.assert_allclose(
        ours.predict_joint_log_proba(Xt), ref.predict_joint_log_proba(Xt), rtol=1e-10
    )
    np.testing.assert_allclose(
        ours.predict_log_proba(Xt), ref.predict_log_proba(Xt), rtol=1e-10, atol=1e-10
    )


@pytest.mark.parametrize("solver", ["svd", "lsqr"])
def test_narrow_lda_decision_function_equals_scikit_learn(solver):
    rng = np.random.default_rng(8)
    y = np.arange(5000) % 4
    X = rng.normal(size=(5000, 12)) + y[:, None] * 0.3
    Xt = rng.normal(size=(30_000, 12))
    # bias=True: scikit-learn's covariance estimate (the default is MASS's unbiased one);
    # each solver's decision_function is X @ coef_.T + intercept_ of its own coef_ (the
    # svd solver's about xbar_, the others' about the origin)
    ours = br.LinearDiscriminantAnalysis(solver=solver, bias=True).fit(X, y)
    ref = skda.LinearDiscriminantAnalysis(solver=solver).fit(X, y)
    got, want = ours.decision_function(Xt), ref.decision_function(Xt)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
    np.testing.assert_allclose(
        ours.coef_, ref.coef_, rtol=1e-9, atol=1e-9 * np.abs(ref.coef_).max()
    )
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(Xt))


@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB"])
@pytest.mark.parametrize("sparse", [False, True])
def test_a_nan_leaves_every_other_row_exactly_as_it_was(name, sparse):
    X, y = poisson_counts(9, 2000, 20, 4)
    Xt = poisson_counts(10, 1500, 20, 4)[0]
    est = getattr(br, name)().fit(X, y)
    Xn = Xt.copy()
    Xn[[3, 700, 1499], [2, 0, 19]] = np.nan
    others = np.ones(len(Xt), dtype=bool)
    others[[3, 700, 1499]] = False
    as_input = sp.csr_matrix if sparse else np.asarray
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in ("predict_proba", "predict_joint_log_proba"):
            with_nan = getattr(est, method)(as_input(Xn))
            clean = getattr(est, method)(as_input(Xt))
            np.testing.assert_array_equal(with_nan[others], clean[others])
            # the rows with a NaN: as the model without that feature would score them
            assert np.all(np.isfinite(with_nan))


_ENTRIES = st.one_of(
    st.floats(0.0, 1e6),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, -1e-300, 5e-324, 1e308, np.inf, -np.inf, np.nan]),
)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(_ENTRIES, min_size=1, max_size=60))
def test_low_top_bounds_every_value(values):
    """One reduction of the bits: for finite values that are not negative, 0 and the largest
    value; for any other block, the least value (NaN if one is NaN) and no largest."""
    block = np.array(values, dtype=np.float64)
    low, top = products._low_top(block)
    if np.isnan(block).any():
        assert np.isnan(low) and top == np.inf
        return
    assert low <= block.min()
    assert (low >= 0) == bool(block.min() >= 0)  # the sign check's answer is kept
    if np.isfinite(top):
        assert np.all(np.isfinite(block)) and top == block.max()
    else:
        assert not (np.all(np.isfinite(block)) and not np.signbit(block).any())


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 400),
    big=st.sampled_from([1.0, 1e100, 1e290, 1e306, 1e308, np.inf, np.nan, -1.0]),
    scale=st.sampled_from([1.0, 1e10, 1e300]),
    seed=st.integers(0, 2**16),
)
def test_a_product_is_noted_finite_only_when_it_is(n, big, scale, seed):
    """The tracked product notes its result finite only where it is: every entry finite
    (values near float64's largest, infinities, NaN and negative values included)."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(3.0, size=(n, 20)).astype(np.float64)
    X[rng.integers(0, n), rng.integers(0, 20)] = big
    A = -rng.uniform(0.1, 5.0, size=(4, 20)) * scale
    products.track_low(X)
    with products.rows_wanted(), np.errstate(all="ignore"):
        out = products._checked_rows_dot(X, A)
        noted = products.noted_finite(out)
        np.testing.assert_array_equal(out, X @ A.T)
        if noted:
            assert np.all(np.isfinite(out))
        bounded = 20 * np.max(X) * np.max(np.abs(A)) < 2.0**1000
    low, _ = products.tracked_low()
    assert noted == bool(big >= 0 and np.isfinite(big) and bounded)
    assert (low >= 0) == bool(big >= 0)


@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB"])
def test_rows_near_the_largest_float_are_repaired_not_noted_finite(name):
    """Counts of 1e306 overflow the product: the results stay those of scikit-learn's rows
    scaled down (the repair), with no infinity, on the fused path as on the plain one."""
    X, y = poisson_counts(11, 2000, 20, 4)
    est = getattr(br, name)().fit(X, y)
    Xt = poisson_counts(12, 40_000, 20, 4)[0]
    Xt[7] = 1e306
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proba = est.predict_proba(Xt)
        small = est.predict_proba(Xt[:100])
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba[:100], small, rtol=1e-12, atol=1e-15)

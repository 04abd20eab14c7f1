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


def test_narrow_lda_decision_function_equals_scikit_learn():
    rng = np.random.default_rng(8)
    y = np.arange(5000) % 4
    X = rng.normal(size=(5000, 12)) + y[:, None] * 0.3
    Xt = rng.normal(size=(30_000, 12))
    # bias=True: scikit-learn's covariance estimate (the default is MASS's unbiased one);
    # the svd solver's decision_function is its own per-row shift of X @ coef_.T + intercept_
    ours = br.LinearDiscriminantAnalysis(bias=True).fit(X, y)
    ref = skda.LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)  # X @ coef_.T + intercept_
    np.testing.assert_allclose(ours.decision_function(Xt), ref.decision_function(Xt), rtol=1e-9)
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

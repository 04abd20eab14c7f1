"""rows_dot of rows converted by blocks: the float64 product, laid out by columns."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import bayesrule as br
from bayesrule._util import products
from bayesrule._util.products import rows_dot


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(products.CONVERT_ROWS + 1, 3 * products.CONVERT_ROWS + 7),
    p=st.integers(1, 90),
    k=st.integers(1, 12),
    dtype=st.sampled_from([np.float32, np.int64, np.int32, np.uint8, np.bool_]),
    fortran=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_converted_blocks_equal_the_float64_product(n, p, k, dtype, fortran, seed):
    """Any dtype converted by blocks, C or F order: X.astype(float64) @ A.T to 1e-12."""
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, p)) * 5).astype(dtype)
    X = np.asfortranarray(X) if fortran else X
    A = rng.standard_normal((k, p))
    got = rows_dot(X, A)
    want = X.astype(np.float64) @ A.T
    assert got.shape == (n, k) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max(initial=1.0))


def test_converted_blocks_give_column_major_results():
    """The (n, K) result of converted rows is column-major (its class reductions run by column)."""
    X = np.ones((4 * products.CONVERT_ROWS, 30), dtype=np.float32)
    out = rows_dot(X, np.arange(90.0).reshape(3, 30))
    assert out.flags.f_contiguous


def test_bernoulli_nb_on_float32_equals_float64():
    """BernoulliNB binarizes to float32 (converted by blocks): every prediction method agrees
    with the same rows given as float64 (probabilities to 1e-10)."""
    rng = np.random.default_rng(3)
    X = rng.poisson(1.0, size=(5000, 20)).astype(np.float64)
    y = rng.integers(0, 5, size=5000)
    est = br.BernoulliNB().fit(X, y)
    X32 = X.astype(np.float32)
    np.testing.assert_array_equal(est.predict(X32), est.predict(X))
    for method in ("predict_proba", "predict_log_proba", "predict_joint_log_proba"):
        np.testing.assert_allclose(
            getattr(est, method)(X32), getattr(est, method)(X), rtol=1e-10, atol=1e-12
        )

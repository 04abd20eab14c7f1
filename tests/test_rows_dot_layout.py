"""rows_dot of rows converted by blocks: the float64 product, laid out by columns."""

from __future__ import annotations

import numpy as np
import pytest
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
    # blocks of at least 7 or 512 rows, of 0, 4 KB or the default 3 MB of float64 rows:
    # blocks sized by rows, by bytes (narrow rows), or one block; ends inside the table
    least=st.sampled_from([7, products.CONVERT_ROWS]),
    block_bytes=st.sampled_from([0, 4096, products.CONVERT_BYTES]),
)
def test_converted_blocks_equal_the_float64_product(
    n, p, k, dtype, fortran, seed, least, block_bytes
):
    """Any dtype converted by blocks, C or F order: X.astype(float64) @ A.T to 1e-12."""
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, p)) * 5).astype(dtype)
    X = np.asfortranarray(X) if fortran else X
    A = rng.standard_normal((k, p))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(products, "CONVERT_ROWS", least)
        mp.setattr(products, "CONVERT_BYTES", block_bytes)
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


def test_narrow_converted_rows_take_blocks_of_a_few_megabytes(monkeypatch):
    """Narrow rows are converted in blocks of CONVERT_BYTES (thousands of rows), wide ones in
    blocks of CONVERT_ROWS at least: few calls either way."""
    seen: list[int] = []
    real = products.in_parallel
    monkeypatch.setattr(
        products,
        "in_parallel",
        lambda fn, items, work: seen.append(len(items)) or real(fn, items, work),
    )
    for p, n in ((20, 200_000), (784, 3_000)):
        seen.clear()
        X = np.ones((n, p), dtype=np.float32)
        out = rows_dot(X, np.ones((5, p)))
        np.testing.assert_array_equal(out, np.full((n, 5), float(p)))
        rows = max(products.CONVERT_ROWS, products.CONVERT_BYTES // (8 * p))
        assert seen == [-(-n // rows)]
    assert products.CONVERT_BYTES // (8 * 20) > 10 * products.CONVERT_ROWS  # narrow: bytes rule

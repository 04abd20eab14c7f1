"""LDA's one-product decision of narrow rows on a busy machine, a block at a time.

``bayesrule._util.affine_blocks.affine_rows`` computes ``X @ A.T + b`` in blocks
(each on one BLAS thread, its constants added and its values checked in cache)
where the machine is busy; everywhere else it declines (None) and the former
path runs. Its result must equal the plain product, and a value that is not
finite must send the call to the general path (which repairs or reports it).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA
from threadpoolctl import threadpool_limits

import bayesrule as br
from bayesrule._util import affine_blocks

BUSY = dict(blas_has_the_cores=lambda: False, _openblas_only=lambda: True)


def _busy(mp: pytest.MonkeyPatch, rows: int = 7, min_rows: int = 10) -> None:
    """The busy machine's conditions, with small blocks and tables."""
    for name, value in BUSY.items():
        mp.setattr(affine_blocks, name, value)
    mp.setattr(affine_blocks, "available_cores", lambda: 2)
    mp.setattr(affine_blocks, "blas_threads", lambda: 2)
    mp.setattr(affine_blocks, "capped_block_rows", lambda p: rows)
    mp.setattr(affine_blocks, "NARROW_MIN_ROWS", min_rows)


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(10, 200),
    p=st.integers(1, 12),
    k=st.integers(1, 8),
    rows=st.integers(1, 60),
    seed=st.integers(0, 2**16),
)
def test_blocks_equal_the_plain_product(n, p, k, rows, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.uniform(0.1, 100, size=p)
    A, b = rng.normal(size=(k, p)), rng.normal(size=k)
    with pytest.MonkeyPatch.context() as mp, threadpool_limits(2):
        _busy(mp, rows)
        out = affine_blocks.affine_rows(X, A, b)
    assert out is not None and out.flags.c_contiguous and out.shape == (n, k)
    np.testing.assert_allclose(out, X @ A.T + b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan, 1e308])
def test_a_value_that_is_not_finite_declines(bad, monkeypatch):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 5))
    X[57, 2] = bad  # in a block of its own
    A, b = rng.normal(size=(3, 5)) * 10, rng.normal(size=3)
    with threadpool_limits(2):
        _busy(monkeypatch)
        assert affine_blocks.affine_rows(X, A, b) is None


def test_it_declines_where_the_former_path_is_faster_or_needed(monkeypatch):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 5))
    A, b = rng.normal(size=(3, 5)), rng.normal(size=3)
    with threadpool_limits(2):
        _busy(monkeypatch)
        assert affine_blocks.affine_rows(X, A, b) is not None
        for other in (
            np.asfortranarray(X),
            X.astype(np.float32),
            X[:5],  # too few rows
            np.hstack([X] * 20),  # wide rows
        ):
            B = A if other.shape[1] == 5 else np.hstack([A] * 20)
            assert affine_blocks.affine_rows(other, B, b) is None
        assert affine_blocks.affine_rows(X, np.vstack([A] * 6), np.tile(b, 6)) is None  # 18 classes
        with br.config_context(limit_blas=False):
            assert affine_blocks.affine_rows(X, A, b) is None
        monkeypatch.setattr(affine_blocks, "blas_has_the_cores", lambda: True)  # idle
        assert affine_blocks.affine_rows(X, A, b) is None
    monkeypatch.setattr(affine_blocks, "blas_has_the_cores", lambda: False)
    monkeypatch.setattr(affine_blocks, "blas_threads", lambda: 1)  # one BLAS thread
    assert affine_blocks.affine_rows(X, A, b) is None
    monkeypatch.setattr(affine_blocks, "blas_threads", lambda: 2)
    monkeypatch.setattr(affine_blocks, "available_cores", lambda: 1)  # one core
    assert affine_blocks.affine_rows(X, A, b) is None


def test_lda_decides_the_same_on_a_busy_machine(monkeypatch):
    """Through LDA: the blocked decision equals the idle one and scikit-learn's; a row
    far from every class still takes the general path (finite, repaired)."""
    rng = np.random.default_rng(3)
    y = np.arange(3000) % 4
    X = rng.normal(size=(3000, 6)) + y[:, None] * 0.7
    model = br.LinearDiscriminantAnalysis(bias=True).fit(X, y)
    sk = SkLDA().fit(X, y)  # the svd solver's decision, about xbar_, as bayesrule's default
    Xt = rng.normal(size=(1500, 6)) + 0.5
    expected = model.decision_function(Xt)
    calls: list[int] = []
    real = affine_blocks.affine_rows
    from bayesrule.estimators import lda

    monkeypatch.setattr(lda, "affine_rows", lambda *a: calls.append(1) or real(*a))
    with threadpool_limits(2):
        _busy(monkeypatch, rows=64, min_rows=100)
        got = model.decision_function(Xt)
        labels = model.predict(Xt)
        far = Xt.copy()
        far[7] = 1e200
        repaired = model.decision_function(far)
    assert calls  # the blocks were taken
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got, sk.decision_function(Xt), rtol=1e-8, atol=1e-8)
    np.testing.assert_array_equal(labels, sk.predict(Xt))
    assert np.all(~np.isnan(repaired)) and np.all(np.isfinite(repaired[np.arange(1500) != 7]))

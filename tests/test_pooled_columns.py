"""LDA's pooled statistics from feature-major blocks and from a block's columns (Arrow's buffers).

``PooledScatterStats.from_data`` of an F-ordered block builds each block of
the product transposed, and leaves out of it the features that are zero in
all its rows (and the classes without a row in it);
``PooledScatterStats.from_columns`` gathers the columns once in class order
and runs that pass on blocks of one class each (the Spark backend's LDA
tasks hand it a Parquet block's columns). Here, over generated data with
features zero everywhere, zero in some classes only, or nowhere: the
statistics equal those of the C-ordered block and of the per-class
statistics pooled (to 1e-12 relative, bounds exactly), for float32 and
float64, data far from the origin (the pass about pilot means), weights,
many classes (the residual sums taken apart), declared classes without
rows, sorted and unsorted labels; parts merge to the whole; a NaN or an
infinity reaches the means; and the products are narrower than the block
where features are zero.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _generated import class_rows
from bayesrule._util.config import config_context
from bayesrule.stats import PooledScatterStats, ScatterStats, _pooled

RTOL = 1e-12


def _data(n, p, k, dtype, offset, seed, sort=False, dead=0.0, sparse=0.0):
    """Rows with features zero everywhere (share ``dead``) and zero in some classes' rows."""
    return class_rows(n, p, k, dtype, offset, seed, sort=sort, dead=dead, sparse=sparse)


def _columns(X):
    return [np.ascontiguousarray(X[:, j]) for j in range(X.shape[1])]


@contextmanager
def _blocks(small):
    """With ``small``, products over blocks of 64 rows (many blocks per pass), else as set."""
    with pytest.MonkeyPatch.context() as mp:
        if small:
            mp.setattr(_pooled, "BLOCK_VALUES", 1)
        yield


def _same(a, b, rtol=RTOL):
    assert a.allclose(b, rtol=rtol)
    np.testing.assert_array_equal(a.classes, b.classes)
    np.testing.assert_array_equal(a.counts, b.counts)
    np.testing.assert_array_equal(a.lower, b.lower)
    np.testing.assert_array_equal(a.upper, b.upper)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 3000),
    p=st.integers(1, 12),
    k=st.sampled_from([1, 2, 3, 5, 40]),
    dtype=st.sampled_from([np.float32, np.float64]),
    offset=st.sampled_from([0.0, 1e4]),
    dead=st.sampled_from([0.0, 0.4]),
    sparse=st.sampled_from([0.0, 0.5]),
    weighted=st.booleans(),
    threads=st.sampled_from([1, 2]),
    small=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_feature_major_block_gives_the_statistics_of_the_row_major_one(
    n, p, k, dtype, offset, dead, sparse, weighted, threads, small, seed
):
    X, y = _data(n, p, k, dtype, offset, seed, dead=dead, sparse=sparse)
    w = None
    if weighted:
        w = np.random.default_rng(seed).uniform(0.0, 2.0, n)
        w[::7] = 0.0  # rows of no weight
    with config_context(n_threads=threads), _blocks(small):
        rows = PooledScatterStats.from_data(np.ascontiguousarray(X), y, w)
        cols = PooledScatterStats.from_data(np.asfortranarray(X), y, w)
    _same(cols, rows)
    pooled = PooledScatterStats.from_scatter(ScatterStats.from_data(X, y, w))
    assert cols.allclose(pooled, rtol=1e-10)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 3000),
    p=st.integers(1, 12),
    k=st.sampled_from([1, 2, 3, 5, 40]),
    dtype=st.sampled_from([np.float32, np.float64]),
    offset=st.sampled_from([0.0, 1e4]),
    dead=st.sampled_from([0.0, 0.4]),
    sparse=st.sampled_from([0.0, 0.5]),
    declared=st.booleans(),
    sort=st.booleans(),
    small=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_from_columns_equals_from_data(
    n, p, k, dtype, offset, dead, sparse, declared, sort, small, seed
):
    X, y = _data(n, p, k, dtype, offset, seed, sort, dead, sparse)
    classes = np.arange(k + 1) if declared else None  # class k has no row
    whole = PooledScatterStats.from_data(X, y, classes=classes)
    with _blocks(small):
        cols = PooledScatterStats.from_columns(_columns(X), y, classes=classes)
    assert type(cols) is PooledScatterStats
    _same(cols, whole)


def test_from_columns_of_no_row_is_the_empty_statistic():
    got = PooledScatterStats.from_columns([np.empty(0), np.empty(0)], np.empty(0), classes=[3, 4])
    _same(got, PooledScatterStats.empty(np.array([3, 4]), 2))


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(4, 2000),
    p=st.integers(1, 7),
    k=st.integers(1, 4),
    dtype=st.sampled_from([np.float32, np.float64]),
    cut=st.floats(0.1, 0.9),
    seed=st.integers(0, 2**16),
)
def test_parts_from_columns_merge_to_the_whole(n, p, k, dtype, cut, seed):
    X, y = _data(n, p, k, dtype, 100.0, seed, dead=0.3, sparse=0.3)
    m = max(1, min(n - 1, int(cut * n)))
    c = np.arange(k)
    parts = PooledScatterStats.from_columns(_columns(X[:m]), y[:m], classes=c).merge(
        PooledScatterStats.from_columns(_columns(X[m:]), y[m:], classes=c)
    )
    assert parts.allclose(PooledScatterStats.from_data(X, y, classes=c), rtol=1e-10)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 300),
    p=st.integers(1, 5),
    bad=st.sampled_from([np.nan, np.inf, -np.inf]),
    dtype=st.sampled_from([np.float32, np.float64]),
    zero=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_nan_or_infinity_reaches_the_means_and_the_range_skips_it(n, p, bad, dtype, zero, seed):
    """Also in a feature otherwise zero (which the products would leave out): never lost."""
    X, y = _data(n, p, 2, dtype, 0.0, seed)
    rng = np.random.default_rng(seed)
    i, j = rng.integers(n), rng.integers(p)
    if zero:
        X[:, j] = 0.0
    X[i, j] = bad
    with np.errstate(invalid="ignore", over="ignore"):
        whole = PooledScatterStats.from_data(X, y)
        cols = PooledScatterStats.from_columns(_columns(X), y)
        major = PooledScatterStats.from_data(np.asfortranarray(X), y)
    for got in (cols, major):
        assert not np.isfinite(got.means).all()
        np.testing.assert_array_equal(got.lower, whole.lower)
        np.testing.assert_array_equal(got.upper, whole.upper)


def test_from_columns_refuses_what_is_not_one_float_block():
    X, y = _data(20, 3, 2, np.float64, 0.0, 1)
    cols = _columns(X)
    with pytest.raises(ValueError, match="at least one feature"):
        PooledScatterStats.from_columns([], y)
    with pytest.raises(ValueError, match="column 1 is float64 of shape \\(19,\\)"):
        PooledScatterStats.from_columns([cols[0], cols[1][:19], cols[2]], y)
    with pytest.raises(ValueError, match="column 2 is float32"):
        PooledScatterStats.from_columns([cols[0], cols[1], cols[2].astype(np.float32)], y)
    with pytest.raises(ValueError, match="20 labels, one per row; got shape \\(19,\\)"):
        PooledScatterStats.from_columns(cols, y[:19])
    with pytest.raises(ValueError, match="not among"):
        PooledScatterStats.from_columns(cols, y, classes=[0])  # label 1 is not declared


def _widths(monkeypatch, fn):
    """The widths of the symmetric products ``fn`` makes (``np.dot(D', D)``)."""
    seen = []
    real = np.dot

    def spy(a, b, *args):
        if isinstance(a, np.ndarray) and a.ndim == 2 and b is not None and np.shape(b) == a.T.shape:
            seen.append(a.shape[0])
        return real(a, b, *args)

    monkeypatch.setattr(_pooled.np, "dot", spy)
    try:
        out = fn()
    finally:
        monkeypatch.undo()
    return out, seen


def test_features_zero_in_a_block_and_absent_classes_are_left_out_of_its_product(monkeypatch):
    """From columns, each block holds one class and the features its rows use: narrower products."""
    n, p, k = 4000, 10, 3
    rng = np.random.default_rng(5)
    y = rng.integers(0, k, n)
    X = rng.standard_normal((n, p))
    X[:, 9] = 0.0  # zero everywhere
    X[y == 0, :4] = 0.0  # class 0 never uses features 0-3
    got, widths = _widths(monkeypatch, lambda: PooledScatterStats.from_columns(_columns(X), y))
    # class 0: 5 features and its one class; the others: 9 features and one class
    assert sorted(set(widths)) == [6, 10]
    _same(got, PooledScatterStats.from_data(X, y))
    # rows in their own order (feature-major from_data): every class in every block
    got, widths = _widths(
        monkeypatch, lambda: PooledScatterStats.from_data(np.asfortranarray(X), y)
    )
    assert set(widths) == {9 + k}
    _same(got, PooledScatterStats.from_data(X, y))


def test_blocks_of_class_ordered_rows_hold_one_class_each():
    y = np.repeat([0, 1, 2, 4], [5, 1, 12, 3])
    edges = _pooled._sub_blocks(y, (0, y.size), 4)
    assert edges[0][0] == 0 and edges[-1][1] == y.size
    assert all(a < b and b - a <= 4 for a, b in edges)
    assert all(e0[1] == e1[0] for e0, e1 in zip(edges[:-1], edges[1:], strict=True))
    assert all(np.unique(y[a:b]).size == 1 for a, b in edges)
    # unsorted labels: about equal blocks of the range, at most step rows each
    y = np.array([1, 0, 1, 1, 0, 2, 0, 1, 2, 2])
    edges = _pooled._sub_blocks(y, (2, 10), 3)
    assert edges == [(2, 4), (4, 7), (7, 10)]

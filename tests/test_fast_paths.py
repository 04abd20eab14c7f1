"""The fast paths of the statistics and products equal the general ones, and fall back when they must."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import bayesrule as br
from bayesrule._util import parallel as _parallel
from bayesrule._util.products import rows_dot
from bayesrule.stats import DiagonalStats
from bayesrule.stats._diagonal import _unit_moments


def _blobs(n: int, p: int, k: int = 4, seed: int = 0, dtype=np.float64, offset: float = 0.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3.0, size=(k, p))[y] + 5.0 * y[:, None]
    return (X + offset).astype(dtype), y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_unit_weight_moments_equal_the_weighted_path(dtype, order, offset):
    """Rows of weight 1 take the class-ordered pass; weights of 1.0 given explicitly as
    non-unit (a weight vector with one 2, the row then halved) must agree with it."""
    X, y = _blobs(3000, 7, dtype=dtype, offset=offset)
    X = np.asarray(X, order=order)
    fast = DiagonalStats.from_data(X, y)
    # the general (one-hot product) path: weights that are not all 1
    w = np.ones(X.shape[0])
    w[0] = 2.0
    slow = DiagonalStats.from_data(X, y, sample_weight=w)
    one = DiagonalStats.from_data(X[:1], y[:1])
    reference = slow.subtract(one)  # drop the extra copy of row 0
    np.testing.assert_allclose(fast.means, reference.means, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(fast.m2, reference.m2, rtol=1e-9)
    np.testing.assert_array_equal(fast.lower, X.min(axis=0).astype(np.float64))
    np.testing.assert_array_equal(fast.upper, X.max(axis=0).astype(np.float64))
    np.testing.assert_array_equal(fast.counts, np.bincount(y, minlength=4))
    # and the exact two-pass moments, computed directly
    X64 = np.asarray(X, dtype=np.float64)
    for j in range(4):
        rows = X64[y == j]
        np.testing.assert_allclose(fast.means[j], rows.mean(axis=0), rtol=1e-13)
        np.testing.assert_allclose(
            fast.m2[j], ((rows - rows.mean(axis=0)) ** 2).sum(axis=0), rtol=1e-10
        )


def test_unit_moments_refuse_a_block_that_is_not_finite():
    X, y = _blobs(200, 3)
    for bad in (np.nan, np.inf, -np.inf):
        Xb = X.copy()
        Xb[17, 1] = bad
        assert _unit_moments(Xb, y, 4) is None
    assert _unit_moments(X, y, 4) is not None


def test_missing_values_still_take_the_missing_path():
    X, y = _blobs(500, 4)
    X[::7, 2] = np.nan
    stats = DiagonalStats.from_data(X, y)
    for j in range(4):
        col = X[y == j, 2]
        obs = col[~np.isnan(col)]
        assert stats.feature_weights[j, 2] == obs.size
        np.testing.assert_allclose(stats.means[j, 2], obs.mean(), rtol=1e-13)
    assert np.all(stats.feature_weights[:, 0] == np.bincount(y, minlength=4))


def test_classes_absent_from_a_block_are_empty_and_merge():
    X, y = _blobs(800, 5, k=4)
    keep = y != 2
    part = DiagonalStats.from_data(X[keep], y[keep], classes=[0, 1, 2, 3])
    assert part.counts[2] == 0 and np.all(part.m2[2] == 0)
    whole = part.merge(DiagonalStats.from_data(X[~keep], y[~keep], classes=[0, 1, 2, 3]))
    assert whole.allclose(DiagonalStats.from_data(X, y), rtol=1e-10)


@pytest.mark.parametrize("threads", [1, 2])
def test_gaussian_nb_matches_scikit_learn_whatever_the_threads(threads):
    from sklearn.naive_bayes import GaussianNB

    X, y = _blobs(40000, 200, k=5)  # enough work to split the rows over threads
    with br.config_context(n_threads=threads):
        ours = br.GaussianNB().fit(X, y)
    theirs = GaussianNB().fit(X, y)
    np.testing.assert_allclose(ours.theta_, theirs.theta_, rtol=1e-10)
    np.testing.assert_allclose(ours.var_, theirs.var_, rtol=1e-8)
    np.testing.assert_allclose(
        ours.predict_proba(X[:300]), theirs.predict_proba(X[:300]), atol=1e-8
    )


@pytest.mark.parametrize("n", [5, 3000, 20000])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rows_dot_equals_the_product(n, dtype):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, 600)).astype(dtype)
    A = rng.normal(size=(10, 600))
    for threads in (1, 2):
        with br.config_context(n_threads=threads):
            got = rows_dot(X, A)
        assert got.shape == (n, 10) and got.dtype == np.float64
        np.testing.assert_allclose(got, X.astype(np.float64) @ A.T, rtol=1e-10, atol=1e-10)


def test_ordered_map_keeps_order_bounds_what_is_in_flight_and_raises_in_order():
    live, most = [0], [0]
    lock = threading.Lock()

    def slow(i: int) -> int:
        with lock:
            live[0] += 1
            most[0] = max(most[0], live[0])
        try:
            if i == 7:
                raise ValueError("item 7")
            # later items finish first, so order is kept by the map, not by luck
            threading.Event().wait(0.002 * (10 - i))
            assert _parallel._in_worker()
            return i * i
        finally:
            with lock:
                live[0] -= 1

    pulled = []

    def items():
        for i in range(10):
            pulled.append(i)
            yield i

    got = []
    with pytest.raises(ValueError, match="item 7"):
        for item, result in _parallel.ordered_map(slow, items(), 2):
            got.append((item, result))
    assert got == [(i, i * i) for i in range(7)]
    assert most[0] <= 2
    assert len(pulled) <= 10
    assert not _parallel._in_worker()
    # one thread: in the caller, in order
    assert list(_parallel.ordered_map(lambda i: -i, iter(range(4)), 1)) == [
        (0, 0),
        (1, -1),
        (2, -2),
        (3, -3),
    ]


@pytest.mark.parametrize(
    "make, side_by_side",
    [(br.GaussianNB, 2), (br.MultinomialNB, 2), (br.LinearDiscriminantAnalysis, 2)],
)
def test_fit_stream_summarises_blocks_side_by_side_and_equals_fit(monkeypatch, make, side_by_side):
    """Two blocks at a time on two threads, LDA's too (streamed, its scatter does not split
    each block over the threads: see fit_stream's _side_by_side)."""
    X, y = _blobs(20000, 30, k=3, seed=4)
    X = np.abs(X)
    blocks = [(X[s : s + 1500], y[s : s + 1500]) for s in range(0, 20000, 1500)]
    ref = make().fit(X, y)
    seen = []
    real = _parallel.ordered_map

    def spy(fn, items, threads):
        seen.append(threads)
        return real(fn, items, threads)

    monkeypatch.setattr(_parallel, "ordered_map", spy)
    with br.config_context(n_threads=2):
        got = br.fit_stream(make(), blocks)
    assert seen == [side_by_side]
    assert got.stats_.allclose(ref.stats_, rtol=1e-10)
    np.testing.assert_allclose(got.predict_proba(X[:100]), ref.predict_proba(X[:100]), rtol=1e-9)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gaussian_nb_fit_allocates_little_beside_X(dtype):
    """The class-ordered pass works a block at a time: no copy of X, whatever its size."""
    import tracemalloc

    X, y = _blobs(400_000, 40, k=5, dtype=dtype)  # 128 MB in float64, 64 MB in float32
    br.GaussianNB().fit(X[:1000], y[:1000])  # imports and caches outside the measure
    # the pass keeps a block's buffers on each of its threads, so the bound is
    # for a pinned thread count (the default follows the machine's cores)
    tracemalloc.start()
    try:
        with br.config_context(n_threads=2):
            br.GaussianNB().fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # a block's class-ordered copy and residuals on each of two threads (about 40-55 MB),
    # never a copy of the whole of X (128 MB in float64)
    assert peak < 60e6, (peak, X.nbytes)


def test_unit_moments_of_a_row_slice_of_an_f_ordered_block_equal_those_of_a_copy():
    X, y = _blobs(5000, 9, dtype=np.float32)
    F = np.asfortranarray(X)
    part = F[1000:4000]  # neither C- nor F-contiguous: each feature's values contiguous
    assert not part.flags.c_contiguous and not part.flags.f_contiguous
    got = _unit_moments(part, y[1000:4000], 4)
    want = _unit_moments(np.ascontiguousarray(part), y[1000:4000], 4)
    assert got is not None and want is not None
    for a, b in zip(got[:5], want[:5], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(got[5][0], want[5][0])

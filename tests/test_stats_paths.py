"""The fast paths of the statistics give the statistics of the careful ones.

``PooledScatterStats`` takes its products about the origin when a probe shows
that this cancels few digits (checked exactly afterwards), and about pilot
class means otherwise; both statistics run their products on several threads
for large data. Whichever path runs, the numbers agree to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris, load_wine

import bayesrule
from bayesrule._util import parallel as _parallel
from bayesrule.stats import PooledScatterStats, ScatterStats, _common, _pooled


def _close(a, b, rtol):
    scale = max(np.abs(a).max(), np.abs(b).max())
    return np.abs(a - b).max() <= rtol * scale


def _both_paths(X, y):
    X, c, yi, w, unit = _common.prepare(X, y, None, None)
    counts, weights, centres = _common.pilot_means(X, yi, w, c.size)
    origin = _pooled._pooled_products(X, c, yi, w, unit, counts, weights, None)
    pilot = _pooled._pooled_products(X, c, yi, w, unit, counts, weights, centres)
    return origin, pilot


def _standardised():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 20))
    return X, rng.integers(0, 4, 3000)


@pytest.mark.parametrize(
    "data, probe_passes",
    [
        (lambda: load_iris(return_X_y=True), False),  # cm far from 0 next to their spread
        (lambda: load_wine(return_X_y=True), False),
        (lambda: load_digits(return_X_y=True), True),  # never-lit pixels, as in MNIST
        (_standardised, True),
    ],
    ids=["iris", "wine", "digits", "standardised"],
)
def test_products_about_origin_equal_products_about_pilot_means(data, probe_passes):
    X, y = data()
    X = np.asarray(X, dtype=float)
    classes = np.unique(y)
    yi = np.searchsorted(classes, y)
    probe = _common.origin_cancellation(X, yi, np.ones(len(y)), classes.size)
    assert (probe <= _pooled.ORIGIN_CANCELLATION / 10) == probe_passes
    # below ORIGIN_CANCELLATION the origin path is exact to rounding either way
    origin, pilot = _both_paths(X, y)
    assert origin is not None
    assert _close(origin.means, pilot.means, 1e-13)
    assert _close(origin.scatter, pilot.scatter, 1e-12)
    # from_data takes the path the probe chose
    chosen = origin if probe_passes else pilot
    assert _close(PooledScatterStats.from_data(X, y).scatter, chosen.scatter, 0)


def test_data_far_from_origin_are_centred_at_pilot_means():
    rng = np.random.default_rng(1)
    X = 1e6 + rng.normal(size=(2000, 3))
    y = rng.integers(0, 2, 2000)
    yi = y.astype(np.intp)
    assert _common.origin_cancellation(X, yi, np.ones(2000), 2) > _pooled.ORIGIN_CANCELLATION
    # forced about the origin anyway, the exact check refuses the result
    origin, pilot = _both_paths(X, y)
    assert origin is None
    s = PooledScatterStats.from_data(X, y)
    ref = sum(np.cov(X[y == k].T, bias=True) * (y == k).sum() for k in range(2))
    np.testing.assert_allclose(s.scatter, ref, rtol=1e-8)
    assert _close(s.scatter, pilot.scatter, 0)


def test_a_bias_column_is_not_taken_about_the_origin():
    # a constant non-zero column has no within-class spread at all: any raw
    # sum of squares would cancel to noise
    rng = np.random.default_rng(2)
    X = np.column_stack([np.ones(500), rng.normal(size=(500, 2))])
    y = rng.integers(0, 2, 500)
    origin, _ = _both_paths(X, y)
    assert origin is None
    s = PooledScatterStats.from_data(X, y)
    assert np.all(s.scatter[0] == 0.0) and np.all(s.scatter[:, 0] == 0.0)


@pytest.mark.parametrize("cls", [PooledScatterStats, ScatterStats])
@pytest.mark.parametrize("weighted", [False, True])
def test_threads_give_the_serial_statistics(cls, weighted, monkeypatch):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(5000, 30)) + rng.uniform(-3, 3, size=30)
    y = rng.integers(0, 5, 5000)
    w = rng.uniform(0, 2, 5000) if weighted else None
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_WORK", np.inf)
    serial = cls.from_data(X, y, w)
    calls = []

    def three():
        calls.append(1)
        return 3

    monkeypatch.setattr(_parallel, "PARALLEL_MIN_WORK", 0.0)
    monkeypatch.setattr(_parallel, "blas_threads", three)
    threaded = cls.from_data(X, y, w)
    assert calls  # the threaded path really ran
    assert threaded.allclose(serial, rtol=1e-12)


def test_parallel_results_keep_the_order_of_the_items(monkeypatch):
    monkeypatch.setattr(_parallel, "blas_threads", lambda: 4)
    with bayesrule.config_context(n_threads=4):
        out = _parallel.in_parallel(lambda i: i * i, list(range(10)), work=np.inf)
        assert out == [i * i for i in range(10)]
        assert _common.row_ranges(1000, np.inf) == [(0, 250), (250, 500), (500, 750), (750, 1000)]
        assert _common.row_ranges(1000, 0.0) == [(0, 1000)]


def test_overlapping_fits_restore_the_blas_threads(monkeypatch):
    # several threads each run a threaded pass at once; afterwards the BLAS
    # has its original thread count again
    import threading

    from threadpoolctl import threadpool_info

    before = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_WORK", 0.0)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(3000, 40))
    y = rng.integers(0, 3, 3000)
    ref = PooledScatterStats.from_data(X, y)
    results = []

    def fit():
        results.append(PooledScatterStats.from_data(X, y))

    threads = [threading.Thread(target=fit) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    assert after == before
    assert len(results) == 4 and all(r.allclose(ref, rtol=1e-12) for r in results)

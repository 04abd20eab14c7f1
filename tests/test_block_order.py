"""Statistics of feature-major (F-ordered) blocks, as fit_stream reads Parquet columns."""

from __future__ import annotations

import numpy as np
import pytest

import bayesrule
from bayesrule.stats import DiagonalStats, FourthMomentStats, ScatterStats


def _data(seed: int, n: int, dtype):
    rng = np.random.default_rng(seed)
    X = (rng.normal(size=(n, 9)) * rng.uniform(0.1, 5, 9) + rng.normal(0, 50, 9)).astype(dtype)
    y = rng.integers(0, 3, n)
    X[y == 1, 4] = 0.0  # a column that is zero in one class
    w = rng.uniform(0, 2, n) * (rng.uniform(size=n) > 0.2)
    return X, y, w


@pytest.mark.parametrize("stat", [DiagonalStats, ScatterStats, FourthMomentStats])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 40, 5000])
@pytest.mark.parametrize("weighted", [False, True])
def test_f_ordered_blocks_give_the_statistics_of_c_ordered_ones(stat, dtype, n, weighted):
    X, y, w = _data(n, n, dtype)
    w = w if weighted else None
    F = np.asfortranarray(X)
    kept = F.copy(order="F")
    a = stat.from_data(X, y, w, classes=[0, 1, 2])
    b = stat.from_data(F, y, w, classes=[0, 1, 2])
    assert a.allclose(b, rtol=1e-9)
    np.testing.assert_array_equal(a.lower, b.lower)
    np.testing.assert_array_equal(a.upper, b.upper)
    np.testing.assert_array_equal(F, kept)  # the caller's block is left alone


def test_f_ordered_blocks_with_missing_values_in_diagonal_stats():
    X, y, _ = _data(3, 300, np.float64)
    X[::7, 2] = np.nan
    a = DiagonalStats.from_data(X, y, classes=[0, 1, 2])
    b = DiagonalStats.from_data(np.asfortranarray(X), y, classes=[0, 1, 2])
    assert a.allclose(b, rtol=1e-10)


@pytest.mark.parametrize("model", ["GaussianNB", "LinearDiscriminantAnalysis", "QDA"])
def test_fit_stream_over_small_row_groups_equals_fit(tmp_path, model):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    name = {"QDA": "QuadraticDiscriminantAnalysis"}.get(model, model)
    params = {"reg_param": 0.1} if model == "QDA" else {}  # a column is zero in a class
    X, y, _ = _data(5, 1100, np.float32)
    table = pa.table({**{f"f{j}": X[:, j] for j in range(X.shape[1])}, "y": y})
    path = tmp_path / "d.parquet"
    pq.write_table(table, path, row_group_size=97)  # blocks span several batches
    streamed = bayesrule.fit_stream(
        getattr(bayesrule, name)(**params), path, target="y", block_rows=250, progress=False
    )
    whole = getattr(bayesrule, name)(**params).fit(X, y)
    assert streamed.stats_.allclose(whole.stats_, rtol=1e-9)
    np.testing.assert_array_equal(streamed.predict(X), whole.predict(X))

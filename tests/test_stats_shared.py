"""The construction every statistic shares: ``ClassStatistic.from_data`` and the folded range."""

import numpy as np
import pytest
import scipy.sparse as sp

from bayesrule.stats import (
    CategoryStats,
    CountStats,
    DiagonalStats,
    FourthMomentStats,
    MixedStats,
    PooledScatterStats,
    ScatterStats,
    ValueCountStats,
)
from bayesrule.stats._bounds import FoldedRange, block_bounds
from bayesrule.stats._common import Rows, prepare

ALL = [
    CategoryStats,
    CountStats,
    DiagonalStats,
    FourthMomentStats,
    MixedStats,
    PooledScatterStats,
    ScatterStats,
    ValueCountStats,
]


@pytest.mark.parametrize("cls", ALL)
def test_every_statistic_refuses_x_that_is_not_2d_naming_its_shape(cls):
    with pytest.raises(ValueError, match=r"X must be 2-dimensional; got shape \(6,\)"):
        cls.from_data(np.arange(6.0), np.zeros(6))


@pytest.mark.parametrize("cls", ALL)
def test_every_statistic_refuses_a_label_outside_the_declared_classes(cls):
    X = np.ones((4, 2))
    with pytest.raises(ValueError, match=r"not among the classes \[0, 1\]"):
        cls.from_data(X, [0, 1, 2, 1], classes=[0, 1])


@pytest.mark.parametrize("cls", ALL)
def test_from_data_is_the_own_pass_over_the_prepared_rows(cls):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, size=(40, 3)).astype(float)
    y = rng.integers(0, 3, 40)
    w = rng.random(40) + 0.5
    rows = prepare(X, y, w, None, cls.input_dtype)
    assert isinstance(rows, Rows) and not rows.unit
    assert cls.from_data(X, y, w).allclose(cls._from_rows(rows), rtol=0.0)


def test_unknown_options_are_refused_not_ignored():
    with pytest.raises(TypeError):
        ScatterStats.from_data(np.ones((3, 2)), [0, 1, 0], max_categories=3)
    with pytest.raises(TypeError):
        MixedStats.from_data(np.ones((3, 2)), [0, 1, 0], kind=("gaussian",) * 2)


def test_sparse_counts_stay_sparse_through_prepare():
    X = sp.random(30, 5, density=0.3, format="csr", random_state=0)
    assert sp.issparse(prepare(X, np.zeros(30), None, None).X)
    dense = CountStats.from_data(X.toarray(), np.arange(30) % 2)
    assert CountStats.from_data(X, np.arange(30) % 2).allclose(dense)


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 5000])
def test_folded_range_of_a_block_read_in_chunks_is_its_exact_range(n):
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 3)) * 10
    if n > 3:
        X[2, 1] = np.nan  # a missing entry: settled by reducing the block again
    w = np.ones(n)
    fold = FoldedRange(3)
    seen = [(a, b) for a, b, _ in fold.chunks(X, 0, n)]
    assert [a for a, _ in seen] == sorted(a for a, _ in seen)
    assert sum(b - a for a, b in seen) == n
    lo, hi = fold.settled(X, w)
    elo, ehi = block_bounds(X, w)
    np.testing.assert_array_equal(lo, elo)
    np.testing.assert_array_equal(hi, ehi)

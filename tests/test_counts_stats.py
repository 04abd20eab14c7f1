"""Monoid laws of the count, category and distinct-value statistics."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from bayesrule.stats import (
    CategoryStats,
    CountStats,
    MixedStats,
    StatisticsError,
    ValueCountStats,
)

STATS = [CountStats, CategoryStats, ValueCountStats]
KINDS = ("gaussian", "poisson", "categorical", "kernel", "bernoulli")


@st.composite
def count_data(draw, n_min=1):
    seed = draw(st.integers(0, 2**31 - 1))
    n = draw(st.integers(n_min, 25))
    p = draw(st.integers(1, 4))
    rng = np.random.default_rng(seed)
    X = rng.poisson(2.0, size=(n, p)).astype(float)
    X[rng.random((n, p)) < 0.15] = np.nan
    y = rng.integers(0, 3, n)
    w = rng.integers(0, 4, n).astype(float)
    return X, y, w


def _stats(cls, X, y, w):
    if cls is MixedStats:
        kinds = tuple(KINDS[j % len(KINDS)] for j in range(X.shape[1]))
        return MixedStats.from_data(X, y, w, kinds=kinds, classes=[0, 1, 2])
    return cls.from_data(X, y, w, classes=[0, 1, 2])


ALL = [*STATS, MixedStats]


@pytest.mark.parametrize("cls", ALL)
@settings(max_examples=15, deadline=None, derandomize=True)
@given(data=count_data(), cut=st.floats(0, 1))
def test_merge_of_parts_equals_whole(cls, data, cut):
    X, y, w = data
    m = int(cut * X.shape[0])
    whole = _stats(cls, X, y, w)
    parts = _stats(cls, X[:m], y[:m], w[:m]).merge(_stats(cls, X[m:], y[m:], w[m:]))
    assert whole.allclose(parts)


@pytest.mark.parametrize("cls", ALL)
@settings(max_examples=10, deadline=None, derandomize=True)
@given(a=count_data(), b=count_data(), c=count_data())
def test_merge_is_associative_and_commutative(cls, a, b, c):
    p = min(a[0].shape[1], b[0].shape[1], c[0].shape[1])
    sa, sb, sc = (_stats(cls, X[:, :p], y, w) for X, y, w in (a, b, c))
    assert sa.merge(sb).merge(sc).allclose(sa.merge(sb.merge(sc)))
    assert sa.merge(sb).allclose(sb.merge(sa))


@pytest.mark.parametrize("cls", STATS)
@settings(max_examples=10, deadline=None, derandomize=True)
@given(data=count_data())
def test_empty_is_identity(cls, data):
    X, y, w = data
    s = _stats(cls, X, y, w)
    assert s.merge(cls.empty([0, 1, 2], X.shape[1])).allclose(s)
    assert cls.empty([0, 1, 2], X.shape[1]).merge(s).allclose(s)


@pytest.mark.parametrize("cls", ALL)
@settings(max_examples=10, deadline=None, derandomize=True)
@given(data=count_data())
def test_integer_weights_equal_repeated_rows(cls, data):
    X, y, w = data
    reps = w.astype(int)
    if reps.sum() == 0:
        return
    weighted = _stats(cls, X, y, w)
    repeated = _stats(cls, np.repeat(X, reps, axis=0), np.repeat(y, reps), None)
    # ``counts`` is the number of distinct rows with positive weight, which
    # repetition changes on purpose; every other statistic must agree
    assert _with_counts(weighted, repeated.counts).allclose(repeated)


def _with_counts(s, counts):
    if isinstance(s, MixedStats):
        parts = {k: replace(v, counts=counts) for k, v in s.parts.items()}
        return replace(s, counts=counts, parts=parts)
    return replace(s, counts=counts)


def test_count_stats_sparse_equals_dense():
    rng = np.random.default_rng(1)
    X = rng.poisson(0.5, size=(40, 7)).astype(float)
    y = rng.integers(0, 3, 40)
    X[3, 2] = np.nan
    S = sp.csr_matrix(np.nan_to_num(X, nan=0.0))
    S[3, 2] = np.nan  # a stored NaN is missing too
    assert CountStats.from_data(S, y).allclose(CountStats.from_data(X, y))


def test_count_stats_ignore_missing_entries():
    X = np.array([[1.0, np.nan], [3.0, 4.0], [np.nan, 2.0]])
    s = CountStats.from_data(X, [0, 0, 0])
    np.testing.assert_array_equal(s.feature_weights, [[2.0, 2.0]])
    np.testing.assert_array_equal(s.sums, [[4.0, 6.0]])


def test_value_count_moments_equal_nan_moments():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 3))
    X[rng.random(X.shape) < 0.2] = np.nan
    y = np.zeros(30, int)
    V, mean, m2 = ValueCountStats.from_data(X, y).moments()
    np.testing.assert_allclose(mean[0], np.nanmean(X, axis=0), rtol=1e-12)
    np.testing.assert_allclose(m2[0] / V[0], np.nanvar(X, axis=0), rtol=1e-12)


def test_category_stats_reject_bad_codes():
    with pytest.raises(ValueError, match=r"column 1 .*non-negative integer.*-1\.0"):
        CategoryStats.from_data(np.array([[0.0, -1.0]]), [0])
    with pytest.raises(ValueError, match=r"column 0 .*non-negative integer.*0\.5"):
        CategoryStats.from_data(np.array([[0.5, 1.0]]), [0])


@pytest.mark.parametrize("cls", STATS)
def test_merge_refuses_other_feature_counts(cls):
    a = cls.empty([0, 1], 3)
    with pytest.raises(StatisticsError, match="expected 3 features, got 2"):
        a.merge(cls.empty([0, 1], 2))


def test_mixed_stats_refuse_other_kinds():
    X = np.array([[1.0, 2.0], [0.0, 1.0]])
    a = MixedStats.from_data(X, [0, 1], kinds=("gaussian", "poisson"))
    b = MixedStats.from_data(X, [0, 1], kinds=("poisson", "gaussian"))
    with pytest.raises(ValueError, match="different kinds"):
        a.merge(b)

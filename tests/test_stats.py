"""Monoid laws of the sufficient statistics, checked with Hypothesis."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bayesrule.stats import DiagonalStats, PooledScatterStats, ScatterStats, StatisticsError

STATS = [ScatterStats, PooledScatterStats, DiagonalStats]
CLASSES = np.array([0, 1, 2])


@st.composite
def datasets(draw, min_rows=1, max_rows=40):
    """A small data set with an offset far from the origin (where raw sums of squares fail)."""
    n = draw(st.integers(min_rows, max_rows))
    p = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    offset = draw(st.sampled_from([0.0, 1e3, 1e6]))
    rng = np.random.default_rng(seed)
    X = offset + rng.normal(size=(n, p)) * rng.uniform(0.1, 10, size=p)
    y = rng.integers(0, 3, size=n)
    w = rng.integers(0, 4, size=n).astype(float)
    return X, y, w


@pytest.mark.parametrize("cls", STATS)
@given(data=datasets(min_rows=2), cut=st.floats(0, 1))
def test_merge_of_parts_equals_whole(cls, data, cut):
    X, y, w = data
    k = int(cut * len(X))
    whole = cls.from_data(X, y, w, classes=CLASSES)
    a = cls.from_data(X[:k], y[:k], w[:k], classes=CLASSES)
    b = cls.from_data(X[k:], y[k:], w[k:], classes=CLASSES)
    assert a.merge(b).allclose(whole, rtol=1e-10)


@pytest.mark.parametrize("cls", STATS)
@given(data=datasets())
def test_integer_weights_equal_repeated_rows(cls, data):
    X, y, w = data
    reps = w.astype(int)
    weighted = cls.from_data(X, y, w, classes=CLASSES)
    repeated = cls.from_data(np.repeat(X, reps, axis=0), np.repeat(y, reps), classes=CLASSES)
    # counts differ by design (rows with positive weight vs copies)
    repeated = dataclasses.replace(repeated, counts=weighted.counts)
    assert weighted.allclose(repeated, rtol=1e-9)


@pytest.mark.parametrize("cls", STATS)
@given(d1=datasets(), d2=datasets(), d3=datasets())
def test_merge_is_associative_and_commutative(cls, d1, d2, d3):
    p = d1[0].shape[1]
    parts = [
        cls.from_data(
            X[:, :p] if X.shape[1] >= p else np.resize(X, (len(X), p)), y, w, classes=CLASSES
        )
        for X, y, w in (d1, d2, d3)
    ]
    a, b, c = parts
    left = a.merge(b).merge(c)
    right = a.merge(b.merge(c))
    swapped = c.merge(a).merge(b)
    assert left.allclose(right, rtol=1e-10, atol=1e-9)
    assert left.allclose(swapped, rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("cls", STATS)
@given(data=datasets())
def test_empty_is_identity(cls, data):
    X, y, w = data
    s = cls.from_data(X, y, w, classes=CLASSES)
    e = cls.empty(CLASSES, X.shape[1])
    assert s.merge(e).allclose(s, rtol=0)
    assert e.merge(s).allclose(s, rtol=0)


@pytest.mark.parametrize("cls", STATS)
@given(data=datasets(min_rows=2))
def test_row_order_does_not_matter(cls, data):
    X, y, w = data
    perm = np.random.default_rng(0).permutation(len(X))
    a = cls.from_data(X, y, w, classes=CLASSES)
    b = cls.from_data(X[perm], y[perm], w[perm], classes=CLASSES)
    assert a.allclose(b, rtol=1e-10)


def test_scatter_matches_numpy_far_from_origin():
    rng = np.random.default_rng(1)
    X = 1e8 + rng.normal(size=(500, 3))
    y = rng.integers(0, 2, 500)
    s = ScatterStats.from_data(X, y)
    for k in range(2):
        ref = np.cov(X[y == k].T, bias=True) * (y == k).sum()
        np.testing.assert_allclose(s.scatter[k], ref, rtol=1e-7)
        # a second half merged in keeps every digit too
    halves = ScatterStats.from_data(X[:250], y[:250], classes=[0, 1]).merge(
        ScatterStats.from_data(X[250:], y[250:], classes=[0, 1])
    )
    np.testing.assert_allclose(halves.scatter, s.scatter, rtol=1e-7)


def test_float32_input_accumulates_in_float64():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(1000, 4)).astype(np.float32)
    y = rng.integers(0, 2, 1000)
    s = ScatterStats.from_data(X, y)
    ref = ScatterStats.from_data(X.astype(np.float64), y)
    assert s.means.dtype == np.float64
    assert s.allclose(ref, rtol=1e-12)


def test_merge_unites_classes():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    y = np.repeat(["a", "b", "c"], 10)
    a = ScatterStats.from_data(X[:20], y[:20])
    b = ScatterStats.from_data(X[20:], y[20:])
    assert a.classes.tolist() == ["a", "b"]
    merged = a.merge(b)
    assert merged.classes.tolist() == ["a", "b", "c"]
    assert merged.allclose(ScatterStats.from_data(X, y), rtol=1e-12)


@pytest.mark.parametrize("cls", STATS)
def test_merge_with_other_feature_count_names_both(cls):
    a = cls.empty([0, 1], 784)
    b = cls.empty([0, 1], 783)
    with pytest.raises(StatisticsError, match="expected 784 features, got 783"):
        a.merge(b)


def test_update_rejects_unknown_label():
    s = ScatterStats.empty([0, 1], 2)
    with pytest.raises(ValueError, match=r"labels \[5\] that are not among the classes"):
        s.update(np.zeros((1, 2)), [5])


def test_pooled_equals_sum_of_class_scatters():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 4))
    y = rng.integers(0, 3, 200)
    w = rng.uniform(0, 2, 200)
    full = ScatterStats.from_data(X, y, w)
    pooled = PooledScatterStats.from_data(X, y, w)
    np.testing.assert_allclose(pooled.scatter, full.scatter.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(pooled.means, full.means, rtol=1e-12)


def test_diagonal_treats_nan_as_missing():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(100, 3))
    X[rng.random((100, 3)) < 0.2] = np.nan
    y = rng.integers(0, 2, 100)
    s = DiagonalStats.from_data(X, y)
    for k in range(2):
        np.testing.assert_allclose(s.means[k], np.nanmean(X[y == k], axis=0), rtol=1e-12)
        np.testing.assert_allclose(s.variances()[k], np.nanvar(X[y == k], axis=0), rtol=1e-12)

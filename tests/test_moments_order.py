"""The class order, pilot centres and zero-column probe behind ScatterStats, in both layouts.

The block passes of :mod:`bayesrule.stats._moments` sort the class codes in
a small unsigned type, share one class order between the pilot and the
moment pass, and gather a feature-major (F-ordered) block column by column.
Each is checked here against a plain reference kept in this file, over
weights (zero ones included), all-zero columns, offsets, float32/float64/int
input, C and F order, 1 to 300 classes (codes beyond uint8) and classes
without rows in the block.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayesrule.stats import ScatterStats
from bayesrule.stats._common import PROBE_ROWS
from bayesrule.stats._moments import (
    PILOT_PER_CLASS,
    class_order,
    gather_columns,
    maybe_zero_columns,
    moments_about,
    pilot_centres,
)

RTOL = 1e-12


# -- plain references ---------------------------------------------------------------
def ref_order(yi: Any, w: Any, k: int, unit: bool) -> tuple[Any, list[int]]:
    order = np.argsort(yi, kind="stable")
    if not unit:
        order = order[w[order] > 0]
    return order, np.searchsorted(yi[order], np.arange(k + 1)).tolist()


def ref_pilot(X: Any, yi: Any, w: Any, k: int) -> Any:
    """Each class's weighted mean of every step-th of its rows of positive weight."""
    centres = np.zeros((k, X.shape[1]))
    for j in range(k):
        rows = np.flatnonzero((yi == j) & (w > 0))
        if rows.size == 0:
            continue
        step = max(1, len(rows) // PILOT_PER_CLASS)
        rows = rows[::step]
        xs = np.asarray(X, dtype=np.float64)[rows]
        centres[j] = (w[rows][:, None] * xs).sum(axis=0) / w[rows].sum()
    return centres


def ref_maybe_zero(X: Any, yi: Any, w: Any) -> bool:
    stride = max(1, X.shape[0] // PROBE_ROWS)
    sample = np.arange(0, X.shape[0], stride)
    sample = sample[w[sample] > 0]
    for j in set(yi[sample].tolist()):
        rows = sample[yi[sample] == j]
        if np.any(np.all(np.asarray(X)[rows] == 0, axis=0)):
            return True
    return False


# -- generated blocks ---------------------------------------------------------------
@st.composite
def blocks(draw: Any) -> tuple[Any, Any, Any, int, bool]:
    n = draw(st.one_of(st.integers(1, 300), st.integers(1000, 3000)))
    p = draw(st.integers(1, 9))
    k = draw(st.sampled_from([1, 2, 3, 10, 255, 256, 257, 300]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # few distinct classes present (others empty), up to the largest code
    present = rng.choice(k, size=min(k, draw(st.integers(1, 12))), replace=False)
    yi = present[rng.integers(0, present.size, n)].astype(np.intp)
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int64]))
    offset = draw(st.sampled_from([0.0, 1e4]))
    X = rng.standard_normal((n, p)) * 3 + offset
    X[:, rng.random(p) < 0.3] = 0.0  # all-zero columns
    X[rng.random((n, p)) < 0.2] = 0.0
    X = X.astype(dtype)
    unit = draw(st.booleans())
    w = np.ones(n) if unit else rng.choice([0.0, 0.5, 1.0, 3.0], size=n)
    if draw(st.booleans()):
        X = np.asfortranarray(X)
    return X, yi, w, k, unit


SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


@SETTINGS
@given(blocks())
def test_class_order_is_the_stable_argsort(block: Any) -> None:
    X, yi, w, k, unit = block
    order, bounds = class_order(yi, w, k, unit)
    want, want_bounds = ref_order(yi, w, k, unit)
    assert order.dtype == np.intp and np.array_equal(order, want) and bounds == want_bounds


@SETTINGS
@given(blocks())
def test_pilot_centres_match_the_reference(block: Any) -> None:
    X, yi, w, k, unit = block
    counts, weights, centres = pilot_centres(X, yi, w, k, unit)
    want = ref_pilot(X, yi, w, k)
    scale = np.abs(want).max(initial=1.0)
    assert np.allclose(centres, want, rtol=RTOL, atol=RTOL * scale)
    shared = pilot_centres(X, yi, w, k, unit, class_order(yi, w, k, unit))[2]
    assert np.array_equal(shared, centres)


@SETTINGS
@given(blocks())
def test_pilot_centres_agree_across_layouts(block: Any) -> None:
    X, yi, w, k, unit = block
    c_order = pilot_centres(np.ascontiguousarray(X), yi, w, k, unit)[2]
    f_order = pilot_centres(np.asfortranarray(X), yi, w, k, unit)[2]
    scale = np.abs(c_order).max(initial=1.0)
    assert np.allclose(f_order, c_order, rtol=RTOL, atol=RTOL * scale)


@SETTINGS
@given(blocks())
def test_zero_column_probe_matches_the_reference(block: Any) -> None:
    X, yi, w, k, unit = block
    want = ref_maybe_zero(X, yi, w)
    assert maybe_zero_columns(np.ascontiguousarray(X), yi, w) == want
    assert maybe_zero_columns(np.asfortranarray(X), yi, w) == want


@SETTINGS
@given(blocks())
def test_gather_columns_is_the_transposed_rows(block: Any) -> None:
    X, yi, w, k, unit = block
    rows = np.random.default_rng(X.shape[0]).permutation(X.shape[0])[: X.shape[0] // 2 + 1]
    F = np.asfortranarray(X)
    got = gather_columns(F, rows)
    assert got.flags.c_contiguous and np.array_equal(got, X[rows].T)


@SETTINGS
@given(blocks())
def test_moment_pass_with_a_shared_order_is_the_same(block: Any) -> None:
    X, yi, w, k, unit = block
    centres = pilot_centres(X, yi, w, k, unit)[2]
    alone = moments_about(X, yi, w, centres, unit)
    shared = moments_about(X, yi, w, centres, unit, ordered=class_order(yi, w, k, unit))
    assert all(np.array_equal(a, b) for a, b in zip(alone[:4], shared[:4], strict=True))


@SETTINGS
@given(blocks())
def test_scatter_stats_match_a_plain_reference(block: Any) -> None:
    X, yi, w, k, unit = block
    stats = ScatterStats.from_data(X, yi, None if unit else w, classes=np.arange(k))
    Xf = np.asarray(X, dtype=np.float64)
    for j in range(k):
        mask = (yi == j) & (w > 0)
        wj = w[mask]
        assert stats.weights[j] == (wj.sum() if mask.any() else 0.0)
        if not mask.any():
            assert not stats.scatter[j].any()
            continue
        mean = (wj[:, None] * Xf[mask]).sum(axis=0) / wj.sum()
        R = Xf[mask] - mean
        scatter = (wj[:, None] * R).T @ R
        scale = max(1.0, float(np.abs(mean).max()) ** 2 * wj.sum() * 1e-6, np.abs(scatter).max())
        assert np.allclose(
            stats.means[j], mean, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(mean).max())
        )
        assert np.allclose(stats.scatter[j], scatter, rtol=1e-9, atol=1e-9 * scale)

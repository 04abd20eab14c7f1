"""KernelNB's bounded task (``summariser(max_values=)``): the same statistics for any blocks.

The task bins each block on its own power-of-two grid and combines two
summaries on the coarser grid; the result must be the statistics of ``fit``
on the data binned on the one grid the whole data need, whatever the order
of the blocks, however the rows are split, and however the summaries are
combined (in turn or in a tree).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bayesrule as br
from bayesrule.estimators import _kernel_binning
from bayesrule.estimators.seam import summarise
from bayesrule.stats import ValueCountStats
from test_streaming import _binned
from test_streaming import _steps as _grid  # the oracle grid, written once


def _data(seed: int, n: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    scales = rng.uniform(0.01, 100, p)
    X = rng.normal(y[:, None], 1.0, (n, p)) * scales
    if p > 1:  # a column of few values stays exact
        X[:, -1] = rng.integers(0, 5, n)
    return X, y


def _blocks(X, y, cuts, order, w=None):
    edges = [0, *sorted(set(cuts)), X.shape[0]]
    parts = [(a, b) for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]
    blocks = [(X[a:b], y[a:b]) if w is None else (X[a:b], y[a:b], w[a:b]) for a, b in parts]
    return [blocks[i] for i in order(len(blocks))]


def _same(a: ValueCountStats, b: ValueCountStats) -> None:
    np.testing.assert_array_equal(a.classes, b.classes)
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.values, b.values)
    assert a.allclose(b, rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(30, 300),
    p=st.integers(1, 3),
    max_values=st.integers(2, 40),
    cuts=st.lists(st.integers(1, 299), max_size=6),
    shuffle=st.randoms(use_true_random=False),
)
def test_any_order_and_split_gives_fit_on_the_one_grid(seed, n, p, max_values, cuts, shuffle):
    X, y = _data(seed, n, p)
    cuts = [c for c in cuts if c < n]
    blocks = _blocks(X, y, cuts, lambda k: shuffle.sample(range(k), k))
    task = br.KernelNB().summariser(max_values=max_values)
    got = summarise(task, blocks)
    steps = _grid(X, max_values)
    ref = br.KernelNB().fit(_binned(X, steps), y).stats_
    _same(got, ref)
    assert np.diff(got.indptr).max() <= max(max_values, 5)


@pytest.mark.parametrize("seed", [0, 1])
def test_summaries_combined_in_a_tree_equal_combined_in_turn(seed):
    """The combination is associative: a Dask-like tree gives the same statistics."""
    X, y = _data(seed, 2000, 3)
    task = br.KernelNB().summariser(max_values=50)
    parts = [task.statistics(X[s : s + 150], y[s : s + 150]) for s in range(0, 2000, 150)]
    while len(parts) > 1:
        pairs = [parts[i : i + 2] for i in range(0, len(parts), 2)]
        parts = [task.combine(*pair) if len(pair) == 2 else pair[0] for pair in pairs]
    tree = task.finish(parts[0])
    in_turn = summarise(task, [(X[s : s + 150], y[s : s + 150]) for s in range(0, 2000, 150)])
    _same(tree, in_turn)
    _same(tree, br.KernelNB().fit(_binned(X, _grid(X, 50)), y).stats_)


def test_weighted_blocks_in_any_order():
    X, y = _data(3, 900, 2)
    w = np.random.default_rng(3).integers(0, 4, 900).astype(float)  # sums are exact
    w[:5] = 0.0
    X[:5, 0] = 1e6  # rows of no weight are not data: they widen no grid
    a = summarise(
        br.KernelNB().summariser(max_values=30),
        _blocks(X, y, [100, 450], lambda k: list(range(k)), w),
    )
    b = summarise(
        br.KernelNB().summariser(max_values=30),
        _blocks(X, y, [300, 301, 700], lambda k: list(range(k))[::-1], w),
    )
    _same(a, b)
    ref = br.KernelNB().fit(_binned(X, _grid(X[w > 0], 30)), y, sample_weight=w).stats_
    assert a.allclose(ref, rtol=1e-12)


def test_fit_stream_partial_equals_one_fit_over_both_sources():
    """The fitted statistics are binned like the data, on grids that nest: as if read at once."""
    X, y = _data(4, 1600, 3)
    first = [(X[s : s + 200], y[s : s + 200]) for s in range(0, 800, 200)]
    second = [(X[s : s + 200], y[s : s + 200]) for s in range(800, 1600, 200)]
    est = br.fit_stream(br.KernelNB(), first, max_values=64)
    br.fit_stream(est, second, max_values=64, partial=True)
    whole = br.fit_stream(br.KernelNB(), second + first, max_values=64)
    _same(est.stats_, whole.stats_)
    np.testing.assert_allclose(est.predict_proba(X[:50]), whole.predict_proba(X[:50]), atol=1e-12)


def test_the_task_is_picklable_and_without_bound_is_the_plain_one():
    X, y = _data(5, 400, 2)
    task = pickle.loads(pickle.dumps(br.KernelNB(bandwidth=0.5).summariser(max_values=8)))
    got = task.finish(task.combine(None, task.statistics(X, y)))
    _same(got, br.KernelNB().fit(_binned(X, _grid(X, 8)), y).stats_)
    plain = br.KernelNB().summariser()  # max_values=None: every value kept
    assert not isinstance(plain, _kernel_binning.KernelBinning)
    _same(summarise(plain, [(X, y)]), br.KernelNB().fit(X, y).stats_)


@pytest.mark.parametrize("bad", [1, 0, 2.5, "10", True])
def test_a_bad_bound_is_refused(bad):
    with pytest.raises(ValueError, match="max_values must be an int >= 2 or None"):
        br.KernelNB().summariser(max_values=bad)
    with pytest.raises(ValueError, match="max_values must be an int >= 2 or None"):
        br.fit_stream(br.KernelNB(), [(np.zeros((3, 1)), np.arange(3) % 2)], max_values=bad)


def test_an_error_in_a_later_part_of_a_block_names_the_row_of_the_block(monkeypatch):
    """A block is summarised 256 rows at a time here; the row is counted from the block's start."""
    monkeypatch.setattr(_kernel_binning, "BLOCK_VALUES", 1)
    X, y = _data(6, 600, 1)
    X[400, 0] = np.inf
    blocks = [(X[:100], y[:100]), (X[100:], y[100:])]
    with pytest.raises(
        ValueError, match=r"block 1 \(rows 101-600\): .*infinity at row 401 \(row 300"
    ):
        br.fit_stream(br.KernelNB(), blocks, max_values=16)
    with pytest.raises(ValueError, match=r"infinity at row 300\b"):
        br.KernelNB().summariser(max_values=16).statistics(X[100:], y[100:])


def test_a_block_that_is_not_a_matrix_gets_the_fit_message():
    task = br.KernelNB().summariser(max_values=16)
    with pytest.raises(ValueError, match="2D array"):
        task.statistics(np.arange(5.0), np.arange(5) % 2)
    with pytest.raises(ValueError, match="inconsistent numbers of samples|length"):
        task.statistics(np.zeros((5, 2)), np.arange(4) % 2)


def test_an_em_model_with_a_bad_parameter_is_refused_before_any_pass():
    X, y = _data(7, 200, 2)
    est = br.MixtureDiscriminantAnalysis(tol="x")
    with pytest.raises(ValueError, match="'tol' parameter"):
        br.fit_stream(est, [(X[:100], y[:100]), (X[100:], y[100:])])

"""KernelNB's bounded statistics for fits over blocks: values binned on power-of-two grids.

:class:`~bayesrule.stats.ValueCountStats` keeps every distinct value of each
feature, which grows with continuous data. A fit over blocks (a stream of
files, Dask partitions) keeps them bounded instead: a feature that holds
more than ``max_values`` distinct values is binned onto the grid of cells
``[i h, (i + 1) h)`` whose width ``h`` is the smallest power of two for
which the feature's range spans at most ``max_values`` cells, every value
moved to its cell's centre.

Power-of-two grids nest, so binning on ``2 h`` what was binned on ``h``
equals binning the data on ``2 h``. Each block is binned on its own grid;
two summaries combine on the coarser of their grids and are binned again if
the merged values need a coarser one still. Whether a feature is binned (its
distinct values over all the data exceed ``max_values``) and its final width
(the smallest one valid for its whole range) depend on the data alone, so
the result is the same whatever the order of the blocks and however the rows
are split into blocks: the statistics of ``fit`` on the binned data.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..stats import ValueCountStats

__all__ = ["BinnedValues", "KernelBinning", "bin_columns", "block_steps", "kernel_steps"]

#: values of a block summarised at once (rows x features): the raw statistics of
#: that many rows hold up to as many distinct values per class before they are binned
BLOCK_VALUES = 1 << 21

_ROW = re.compile(r"\bat row (\d+)")


def kernel_steps(
    stats: ValueCountStats, steps: NDArray[np.float64], max_values: int
) -> NDArray[np.float64]:
    """Power-of-two cell widths keeping each feature to at most ``max_values`` values.

    A feature is binned once it holds more than ``max_values`` distinct
    values (``steps`` 0: not binned yet); from then on its width is the
    smallest power of two, at least its width in ``steps``, for which its
    range spans at most ``max_values`` cells. Both the number of distinct
    values and the range only grow with the data, so the widths depend on
    the data alone, not on the order in which they came.
    """
    counts = np.diff(stats.indptr)
    # a binned feature follows its range (its values may be few and far apart)
    need = np.flatnonzero((counts > max_values) | ((steps > 0) & (counts > 0)))
    if need.size == 0:
        return steps
    lo = stats.values[stats.indptr[need]]
    hi = stats.values[stats.indptr[need + 1] - 1]
    new = steps.copy()
    new[need] = _widths(lo, hi, max_values, steps[need])
    return new


def _widths(
    lo: NDArray[np.float64], hi: NDArray[np.float64], max_values: int, least: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The smallest powers of two, at least ``least``, for which ``[lo, hi]`` spans ``max_values`` cells."""
    h = np.exp2(np.ceil(np.log2(np.maximum((hi - lo) / max_values, np.finfo(float).tiny))))
    h = np.maximum(h, least)
    while True:
        cells = np.floor(hi / h) - np.floor(lo / h) + 1
        over = cells > max_values
        if not over.any():
            return h
        h = np.where(over, 2 * h, h)


#: entries of a block looked at at once by :func:`block_steps`
_TEST_VALUES = 1 << 21


def block_steps(
    X: NDArray[Any], max_values: int, sample_weight: NDArray[Any] | None = None
) -> NDArray[np.float64]:
    """Widths for the features that a block alone shows to need a grid (0 for the others).

    A feature whose values occupy more than ``max_values`` cells of the grid
    twice as fine as the block's own (the smallest power of two over which
    the block's range spans ``max_values`` cells) holds more than
    ``max_values`` values: all the data bin it, on a grid at least as coarse
    as the block's, since their range holds the block's. Binning it on the
    block's grid first changes nothing in the result (the grids nest) but
    spares sorting its raw values. Counting cells needs no sort; a feature
    it misses is summarised raw, and binned when its statistics say so.
    Only the rows of positive weight count, as in the statistics.
    """
    steps = np.zeros(X.shape[1])
    if X.dtype.kind not in "fiu":
        return steps  # the statistics say what is wrong with the block
    if sample_weight is not None:
        with np.errstate(invalid="ignore"):
            X = X[np.asarray(sample_weight) > 0]
    n = X.shape[0]
    if n <= max_values:
        return steps
    with np.errstate(invalid="ignore"):
        lo = np.fmin.reduce(X, axis=0)  # NaN (missing) left out
        hi = np.fmax.reduce(X, axis=0)
    cols = np.flatnonzero(np.isfinite(lo) & np.isfinite(hi) & (hi > lo))
    if cols.size == 0:
        return steps
    h = _widths(lo[cols], hi[cols], max_values, np.zeros(cols.size))
    cells = 2 * max_values + 2
    group = max(1, min(_TEST_VALUES // n, _TEST_VALUES // cells))
    for a in range(0, cols.size, group):
        js, g = cols[a : a + group], h[a : a + group] / 2
        with np.errstate(invalid="ignore"):
            index = np.floor(X[:, js] / g) - np.floor(lo[js] / g)
        index += np.arange(js.size) * cells
        known = index[np.isfinite(index)].astype(np.int64)
        occupied = np.bincount(known, minlength=js.size * cells).reshape(js.size, cells)
        many = np.count_nonzero(occupied, axis=1) > max_values
        steps[js[many]] = h[a : a + group][many]
    return steps


def bin_columns(X: NDArray[Any], steps: NDArray[np.float64]) -> NDArray[np.float64]:
    """``X`` with each value moved to the centre of its cell (as ``ValueCountStats.binned``)."""
    on = np.flatnonzero(steps > 0)
    out = np.array(X, dtype=np.float64)
    if on.size:
        h = steps[on]
        out[:, on] = (np.floor(out[:, on] / h) + 0.5) * h
    return out


def _shifted(message: str, rows: int) -> str:
    """``message`` with its row numbers counted ``rows`` further (from a block's start)."""
    return _ROW.sub(lambda m: f"at row {int(m.group(1)) + rows}", message)


class BinnedValues(NamedTuple):
    """The summary of blocks: their statistics, binned on the grid of widths ``steps`` (0: exact)."""

    stats: ValueCountStats
    steps: NDArray[np.float64]


class KernelBinning:
    """The task of :meth:`KernelNB.summariser` with ``max_values``: bounded value counts.

    ``statistics`` summarises a block (``rows`` at a time) on the block's own
    grid; ``combine`` merges two summaries on the coarser grid of both (a
    plain :class:`~bayesrule.stats.ValueCountStats`, such as a fitted
    model's ``stats_``, is first binned on its own grid); ``finish`` gives
    the statistics. Pure and picklable: an unfitted estimator, whose
    ``statistics`` checks each block as ``fit`` does, and ``max_values``.
    """

    def __init__(self, estimator: Any, max_values: int) -> None:
        if isinstance(max_values, bool) or not isinstance(max_values, (int, np.integer)):
            raise ValueError(f"max_values must be an int >= 2 or None; got {max_values!r}.")
        if max_values < 2:
            raise ValueError(f"max_values must be an int >= 2 or None; got {max_values!r}.")
        self.estimator = estimator
        self.max_values = int(max_values)

    def _regrid(self, stats: ValueCountStats, steps: NDArray[np.float64]) -> BinnedValues:
        """``stats`` on the grid its values need, at least as coarse as ``steps``."""
        new = kernel_steps(stats, steps, self.max_values)
        if not np.array_equal(new, steps):
            stats = stats.binned(new)
        return BinnedValues(stats, new)

    def statistics(
        self, X: Any, y: Any, sample_weight: Any = None, classes: Any = None
    ) -> BinnedValues:
        X = np.asarray(X)
        y = np.asarray(y)
        w = None if sample_weight is None else np.asarray(sample_weight)
        n = X.shape[0] if X.ndim else 0
        if X.ndim != 2 or y.shape[:1] != (n,) or (w is not None and w.shape[:1] != (n,)):
            # not rows of a matrix with their labels: the estimator's own message
            stats = self.estimator.statistics(X, y, sample_weight, classes=classes)
            return self._regrid(stats, np.zeros(stats.n_features))
        p = X.shape[1]
        rows = max(256, BLOCK_VALUES // max(p, 1))
        # the first part is small: enough rows to show which features need a grid
        # (more than max_values values), whose later rows are then binned before
        # they are summarised (far fewer distinct values to sort)
        starts = [0, *range(min(rows, 2 * self.max_values), n, rows)]
        total: BinnedValues | None = None
        steps = block_steps(X, self.max_values, w)
        for s, e in zip(starts, [*starts[1:], n], strict=True):
            sl = slice(s, e)
            Xb = X[sl] if not np.any(steps > 0) else bin_columns(X[sl], steps)
            try:
                stats = self.estimator.statistics(
                    Xb, y[sl], None if w is None else w[sl], classes=classes
                )
            except ValueError as exc:
                if s == 0:
                    raise
                # rows counted from the block's start, not the part's
                raise ValueError(_shifted(str(exc), s)) from exc
            merged = stats if total is None else total.stats.merge(stats)
            total = self._regrid(merged, steps)
            steps = total.steps
        assert total is not None
        return total

    def combine(
        self, total: BinnedValues | None, block: BinnedValues | ValueCountStats
    ) -> BinnedValues:
        if not isinstance(block, BinnedValues):
            block = self._regrid(block, np.zeros(block.n_features))
        if total is None:
            return block
        steps = np.maximum(total.steps, block.steps)
        a = total.stats if np.array_equal(total.steps, steps) else total.stats.binned(steps)
        b = block.stats if np.array_equal(block.steps, steps) else block.stats.binned(steps)
        return self._regrid(a.merge(b), steps)

    def finish(self, total: BinnedValues | None) -> ValueCountStats | None:
        return None if total is None else total.stats

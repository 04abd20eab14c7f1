"""The rows of a batch that a prediction's range check reads: evenly spaced runs of rows.

The out-of-range and units warnings (:mod:`bayesrule.estimators._ranges`)
judge a large batch on a sample of its rows. The sample is ``SAMPLE_RUNS``
runs of consecutive rows, their starts evenly spaced over the batch, not
single rows at an even stride: a run is read from memory at the memory's
streaming speed, while rows a stride apart each start a new stream (MNIST's
10,000 x 784 test rows, out of cache: 0.66 ms for the minima and maxima of
32 runs of 32 rows, against 1.67 ms for every ninth row, on the 2-core
development machine; twice that with other processes on the cores, a
tenth of LDA's whole prediction there).

A sample is described by ``(count, rows, spacing)``: ``count`` runs of
``rows`` consecutive rows, run ``r`` starting at row ``r * spacing``
(``rows <= spacing``). A strided sample ``X[::step]`` is the runs
``(ceil(n / step), 1, step)``, and the whole batch is ``(1, n, n)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided
from numpy.typing import NDArray

__all__ = [
    "SAMPLE_ROWS",
    "SAMPLE_RUNS",
    "Runs",
    "fold_runs_max",
    "run_rows",
    "runs_view",
    "sample_runs",
]

#: ``(count, rows, spacing)``: see the module's docstring
Runs = tuple[int, int, int]

#: Rows of the sample of a batch of at least twice as many rows; a smaller batch is
#: judged whole.
SAMPLE_ROWS = 1024

#: Runs the sample is made of (``SAMPLE_ROWS // SAMPLE_RUNS`` consecutive rows each).
SAMPLE_RUNS = 32

#: Up to this many runs in a block, :func:`fold_runs_max` reduces each on its own.
FEW_RUNS = 3


def sample_runs(n: int) -> Runs:
    """The runs judged in a batch of ``n`` rows: the whole batch below ``2 * SAMPLE_ROWS``."""
    if n < 2 * SAMPLE_ROWS:
        return 1, n, max(n, 1)
    return SAMPLE_RUNS, SAMPLE_ROWS // SAMPLE_RUNS, n // SAMPLE_RUNS


def run_rows(runs: Runs) -> NDArray[np.intp]:
    """The indices of the sample's rows, in order."""
    count, rows, spacing = runs
    return (np.arange(count)[:, None] * spacing + np.arange(rows)[None, :]).ravel()


def runs_view(X: NDArray[Any], runs: Runs) -> NDArray[Any]:
    """The sample's rows of the dense 2-D ``X`` as a read-only ``(count, rows, n_features)``
    view (no copy): reduce it over its first two axes."""
    count, rows, spacing = runs
    _check_runs(X.shape[0], runs)
    s0, s1 = X.strides
    return as_strided(
        X, shape=(count, rows, X.shape[1]), strides=(spacing * s0, s0, s1), writeable=False
    )


def _check_runs(n: int, runs: Runs) -> None:
    count, rows, spacing = runs
    if count and rows and (rows > spacing or (count - 1) * spacing + rows > n):
        raise ValueError(f"runs {runs} do not fit in {n} rows")  # a caller's bug, never data


def fold_runs_max(
    X: NDArray[Any], start: int, stop: int, runs: Runs, hi: NDArray[np.float64]
) -> None:
    """Fold into ``hi`` (in place, NaN propagating) the per-column maxima of the sample's rows
    that lie within ``X[start:stop]`` (none: ``hi`` unchanged).

    The runs wholly inside the block are one reduction of their view; at most two runs
    reach over the block's ends, and their parts inside it are reduced on their own.
    """
    count, rows, spacing = runs
    if count == 0 or rows == 0 or stop <= start:
        return
    first = max(0, (start - rows) // spacing + 1)  # the runs that overlap [start, stop)
    last = min(count - 1, (stop - 1) // spacing)
    if last - first < FEW_RUNS:
        # a block of a fused product holds a run or two: each part reduced on its own
        # (one call each; the view's setup costs more than it saves for so few)
        for r in range(first, last + 1):
            a, b = max(start, r * spacing), min(stop, r * spacing + rows)
            np.maximum(hi, X[a:b].max(axis=0), out=hi)
        return
    inner_first = first if first * spacing >= start else first + 1
    inner_last = last if last * spacing + rows <= stop else last - 1
    inner = runs_view(X[inner_first * spacing :], (inner_last - inner_first + 1, rows, spacing))
    np.maximum(hi, inner.max(axis=(0, 1)), out=hi)
    for r in (first, last):  # the parts of the runs that reach over the block's ends
        if not inner_first <= r <= inner_last:
            a, b = max(start, r * spacing), min(stop, r * spacing + rows)
            np.maximum(hi, X[a:b].max(axis=0), out=hi)

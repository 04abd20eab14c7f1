"""Each feature's range in the training data: folded per block, united on merge."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._util import parallel as _parallel
from ._common import BLOCK_VALUES, row_ranges


def empty_bounds(n_features: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The range of no value at all: ``(+inf, -inf)`` per feature, the identity of :func:`union_bounds`."""
    return np.full(n_features, np.inf), np.full(n_features, -np.inf)


def union_bounds(
    a: tuple[NDArray[np.float64], NDArray[np.float64]],
    b: tuple[NDArray[np.float64], NDArray[np.float64]],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The elementwise smallest lower and largest upper bound; NaN (unknown) stays NaN."""
    return np.minimum(a[0], b[0]), np.maximum(a[1], b[1])


def block_bounds(
    X: Any, w: NDArray[np.float64] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per column, the smallest and largest finite value of the rows of positive weight.

    NaN entries are missing and, like infinities, ignored; a column without a
    finite value gets ``(+inf, -inf)`` (see :func:`empty_bounds`). ``X`` may be a dense array of
    any real dtype (reduced in its own dtype, no float64 copy) or a
    scipy.sparse matrix, whose implicit zeros count as values. Two NumPy
    reductions over a dense block; only columns whose result is not finite
    are reduced again, ignoring what is not finite.
    """
    n, p = X.shape
    if w is not None and not bool(np.all(w > 0)):
        X = X[np.asarray(w) > 0]
        n = X.shape[0]
    lo, hi = empty_bounds(p)
    if n == 0 or p == 0:
        return lo, hi
    if hasattr(X, "tocsc"):
        return _sparse_bounds(X)
    X = np.asarray(X)
    if X.dtype.kind not in "biuf":
        X = X.astype(np.float64)
    lo = np.asarray(X.min(axis=0), dtype=np.float64)
    hi = np.asarray(X.max(axis=0), dtype=np.float64)
    odd = ~(np.isfinite(lo) & np.isfinite(hi))
    if odd.any():
        cols = np.flatnonzero(odd)
        part = np.asarray(X[:, cols], dtype=np.float64)
        part = np.where(np.isfinite(part), part, np.nan)
        lo[cols] = np.fmin.reduce(part, axis=0)
        hi[cols] = np.fmax.reduce(part, axis=0)
        lo[np.isnan(lo)], hi[np.isnan(hi)] = np.inf, -np.inf  # nothing finite
    return lo, hi


def _sparse_bounds(X: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`block_bounds` of a scipy.sparse matrix: stored values and implicit zeros."""
    C = X.tocsc()
    n, p = C.shape
    lo, hi = empty_bounds(p)
    stored = np.diff(C.indptr)
    has = stored > 0
    if has.any():
        data = np.asarray(C.data, dtype=np.float64)
        if not np.all(np.isfinite(data)):
            data = np.where(np.isfinite(data), data, np.nan)
        starts = C.indptr[:-1][has]
        lo[has] = np.fmin.reduceat(data, starts)
        hi[has] = np.fmax.reduceat(data, starts)
        lo[np.isnan(lo)], hi[np.isnan(hi)] = np.inf, -np.inf
    implicit = stored < n  # (duplicates aside) some rows hold an implicit zero
    lo[implicit] = np.minimum(lo[implicit], 0.0)
    hi[implicit] = np.maximum(hi[implicit], 0.0)
    return lo, hi


#: Rows of a block are visited in chunks of about this many values when a pass
#: takes the feature range along: a chunk read for the range stays in cache for
#: the pass's own work on it.
CHUNK_VALUES = 1 << 17


def chunk_rows(n_features: int) -> int:
    """Rows per chunk of about :data:`CHUNK_VALUES` values."""
    return max(64, CHUNK_VALUES // max(n_features, 1))


def fold_bounds(bounds: tuple[NDArray[np.float64], NDArray[np.float64]], chunk: Any) -> None:
    """Widen ``bounds`` in place by the column minima and maxima of a dense ``chunk``.

    For passes over rows that all have positive weight: a non-finite entry
    (NaN, infinity) leaves a non-finite bound, after which the caller takes
    :func:`block_bounds` of the block instead (see :func:`settled_bounds`).
    """
    if chunk.shape[0]:
        np.minimum(bounds[0], chunk.min(axis=0), out=bounds[0])
        np.maximum(bounds[1], chunk.max(axis=0), out=bounds[1])


def settled_bounds(
    bounds: tuple[NDArray[np.float64], NDArray[np.float64]],
    X: Any,
    w: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``bounds`` folded from every row of ``X``, or :func:`block_bounds` where that is not exact.

    Folding is exact when every row has positive weight and every bound is
    finite; otherwise (rows of zero weight, missing or infinite entries,
    no rows) the block is reduced again with :func:`block_bounds`.
    """
    exact = (w is None or bool(np.all(w > 0))) and X.shape[0] > 0
    if exact and np.all(np.isfinite(bounds[0])) and np.all(np.isfinite(bounds[1])):
        return bounds
    return block_bounds(X, w)


class FoldedRange:
    """The feature range of a block taken along a pass that reads it chunk by chunk.

    :meth:`chunks` yields the rows of a block in chunks of about
    :data:`CHUNK_VALUES` values, each chunk's range folded into ``bounds``
    (:func:`fold_bounds`) as it is read, so that the pass finds the chunk in
    cache; :meth:`settled` gives the block's exact range after the pass
    (:func:`settled_bounds`).
    """

    def __init__(self, n_features: int) -> None:
        self.bounds = empty_bounds(n_features)

    def chunks(self, X: Any, start: int, stop: int) -> Iterator[tuple[int, int, Any]]:
        """``(a, b, X[a:b])`` over the rows ``start:stop``, each chunk's range folded first."""
        step = chunk_rows(X.shape[1])
        for a in range(start, stop, step):
            b = min(a + step, stop)
            chunk = X[a:b]
            fold_bounds(self.bounds, chunk)
            yield a, b, chunk

    def settled(
        self, X: Any, w: NDArray[np.float64] | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The range of the block ``X`` (weights ``w``) whose every row was folded."""
        return settled_bounds(self.bounds, X, w)


def feature_bounds(
    X: Any, w: NDArray[np.float64] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`block_bounds` of a whole data set, in blocks of rows run side by side.

    For the statistics whose own pass cannot take the bounds along (it visits
    the rows in class order, or sorts them); a dense ``X`` is read once more,
    in blocks that stay small, on the threads :func:`in_parallel` grants.
    """
    n, p = X.shape
    if hasattr(X, "tocsc") or n * p <= BLOCK_VALUES:
        return block_bounds(X, w)

    def part(bounds: tuple[int, int]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        lo, hi = bounds
        out = empty_bounds(p)
        step = max(64, (BLOCK_VALUES // 8) // max(p, 1))  # blocks that stay in cache
        for s in range(lo, hi, step):
            e = min(s + step, hi)
            out = union_bounds(out, block_bounds(X[s:e], None if w is None else w[s:e]))
        return out

    work = float(n) * p
    out = empty_bounds(p)
    for b in _parallel.in_parallel(part, row_ranges(n, work), work):
        out = union_bounds(out, b)
    return out


def bounds_close(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Whether two statistics' feature bounds agree (infinities and NaN equal themselves)."""
    return bool(
        np.all(np.isclose(a.lower, b.lower, rtol=rtol, atol=atol, equal_nan=True))
        and np.all(np.isclose(a.upper, b.upper, rtol=rtol, atol=atol, equal_nan=True))
    )

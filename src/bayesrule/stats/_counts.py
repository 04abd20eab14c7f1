"""Per-class weighted sums of non-negative values: the count models' statistic.

A commutative monoid like :class:`DiagonalStats`; NaN entries are missing:
they add nothing to the feature they are in, but the row still counts for
its class. No smoothing or prior lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._util.parallel import in_parallel
from ._base import ClassStatistic
from ._bounds import (
    FoldedRange,
    block_bounds,
    empty_bounds,
    union_bounds,
)
from ._common import (
    BLOCK_VALUES,
    Rows,
    check_removal,
    class_matrix,
    class_totals,
    one_hot_classes,
    row_ranges,
)
from ._common import (
    Floats as _F,
)
from .schema import per_class

__all__ = ["CountStats"]


@dataclass(frozen=True, eq=False, repr=False)
class CountStats(ClassStatistic):
    r"""Per-class, per-feature weighted sums of non-negative values (NaN = missing).

    For class ``k`` and feature ``j``: the weight of the rows where the
    feature is observed ``V_kj`` and the weighted sum of its values
    ``S_kj = sum_i w_i x_ij``; per class the row weight ``W_k`` and the number
    of rows with positive weight. This is all that multinomial, complement,
    Bernoulli (on binarized data) and Poisson class models need. ``X`` may be
    a dense array or a scipy.sparse matrix (never densified).

    The laws of :class:`Statistic` hold exactly up to the rounding of sums:
    merging adds, subtracting takes differences (``V`` may not go below zero
    beyond rounding, and where it reaches zero the sums are exactly zero).

    Attributes
    ----------
    classes, counts, weights
        As in every statistic (see :class:`Statistic`).
    feature_weights : ndarray of shape (n_classes, n_features)
    sums : ndarray of shape (n_classes, n_features)
    """

    feature_weights: _F = field(metadata=per_class("K", "p", low=0.0))
    sums: _F = field(metadata=per_class("K", "p"))

    @classmethod
    def _from_rows(cls, rows: Rows) -> CountStats:
        """Statistics of one data set: one one-hot product per block of rows."""
        X, c, yi, w, _ = rows
        n, p = X.shape
        counts, weights = class_totals(yi, w, c.size)
        if sp.issparse(X):
            H = one_hot_classes(yi, w, c.size)
            X = sp.csr_matrix(X, dtype=np.float64)
            lo, hi = block_bounds(X, w)
            nan = np.isnan(X.data)
            if nan.any():
                missing = sp.csr_matrix((nan.astype(float), X.indices, X.indptr), shape=X.shape)
                X = sp.csr_matrix((np.where(nan, 0.0, X.data), X.indices, X.indptr), shape=X.shape)
                V = weights[:, None] - np.asarray((H @ missing).todense())
            else:
                V = np.repeat(weights[:, None], p, axis=1)
            S = np.asarray((H @ X).todense())
            return cls(c, counts, weights, V, S, lower=lo, upper=hi)
        if not np.issubdtype(X.dtype, np.floating):
            X = X.astype(np.float64)

        step = max(256, BLOCK_VALUES // max(p, 1))

        def part(rows: tuple[int, int]) -> tuple[_F, _F, tuple[_F, _F]]:
            V = np.zeros((c.size, p))
            S = np.zeros((c.size, p))
            bounds = empty_bounds(p)
            for start in range(rows[0], rows[1], step):
                sl = slice(start, min(start + step, rows[1]))
                Xb, yb, wb = np.asarray(X[sl], dtype=np.float64), yi[sl], w[sl]
                # Optimistic: without NaN in the block (the common case) every
                # feature is observed with the rows' whole weight, and the class
                # sums are the answer; a NaN shows up in those sums, and only then
                # are the missing entries split out.
                H = class_matrix(yb, wb, c.size)
                Sb, block = _sums_and_bounds(H, Xb, wb)
                bounds = union_bounds(bounds, block)
                if not np.isnan(Sb).any():
                    V += np.bincount(yb, weights=wb, minlength=c.size)[:, None]
                    S += Sb
                    continue
                observed = ~np.isnan(Xb)
                V += np.asarray(H @ observed.astype(np.float64))
                S += np.asarray(H @ np.where(observed, Xb, 0.0))
            return V, S, bounds

        # the row ranges run side by side, each product on one BLAS thread, so
        # that the per-feature range, read from cache beside each product, is
        # taken on every core (see _parallel)
        work = float(n) * p * c.size
        parts = in_parallel(part, row_ranges(n, work), work)
        V, S, bounds = parts[0]
        for Vi, Si, bi in parts[1:]:
            V, S, bounds = V + Vi, S + Si, union_bounds(bounds, bi)
        return cls(c, counts, weights, V, S, lower=bounds[0], upper=bounds[1])

    def _merge_aligned(self, other: CountStats) -> CountStats:
        a, b = self, other
        return CountStats(
            a.classes,
            a.counts + b.counts,
            a.weights + b.weights,
            a.feature_weights + b.feature_weights,
            a.sums + b.sums,
        )

    def _subtract_aligned(self, other: CountStats) -> CountStats:
        V = check_removal(
            self.feature_weights, other.feature_weights, self.classes, "observed weight"
        )
        if np.all(self.sums >= 0) and np.all(other.sums >= 0):
            # counts: removing more than a sum holds is an error, and rounding
            # residue of a sum that is used up goes to exactly 0
            S = check_removal(self.sums, other.sums, self.classes, "the sum")
        else:
            S = self.sums - other.sums
        # where nothing is observed any more the sum is exactly 0, as in from_data
        S = np.where(V > 0, S, 0.0)
        return CountStats(self.classes, self.counts, self.weights, V, S)

    @property
    def n_features(self) -> int:
        return int(self.sums.shape[1])


def _sums_and_bounds(H: Any, Xb: _F, wb: _F) -> tuple[_F, tuple[_F, _F]]:
    """``H @ Xb`` and the block's feature range, in one read of the block.

    With a dense ``H`` (few classes) the product is taken chunk by chunk, each
    chunk's range read first, so that the product finds it in cache.
    """
    p = Xb.shape[1]
    if not isinstance(H, np.ndarray):
        return np.asarray(H @ Xb), block_bounds(Xb, wb)
    S = np.zeros((H.shape[0], p))
    fold = FoldedRange(p)
    for s, e, chunk in fold.chunks(Xb, 0, Xb.shape[0]):
        S += H[:, s:e] @ chunk
    return S, fold.settled(Xb, wb)

"""Per-class weighted distinct values of each feature: the kernel densities' statistic."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ._base import ClassStatistic
from ._bounds import feature_bounds
from ._common import (
    BLOCK_VALUES,
    ROUNDING,
    Rows,
    StatisticsError,
    arrays_close,
    block_slices,
    class_totals,
    label_repr,
)
from ._common import (
    Floats as _F,
)
from .schema import per_class, shared

__all__ = ["ValueCountStats"]


def _group_entries(
    feature: NDArray[np.intp], value: _F, W: _F, n_features: int
) -> tuple[NDArray[np.intp], _F, _F]:
    """Sum the columns of ``W`` (K, m) over equal (feature, value) pairs.

    Returns ``indptr`` (p + 1,), the sorted distinct values (U,) and their
    per-class weights (K, U).
    """
    if value.size == 0:
        return np.zeros(n_features + 1, np.intp), np.zeros(0), np.zeros((W.shape[0], 0))
    order = np.lexsort((value, feature))
    f, v = feature[order], value[order]
    start = np.ones(v.size, dtype=bool)
    start[1:] = (f[1:] != f[:-1]) | (v[1:] != v[:-1])
    first = np.flatnonzero(start)
    Wg = np.add.reduceat(W[:, order], first, axis=1)
    indptr = np.zeros(n_features + 1, np.intp)
    indptr[1:] = np.cumsum(np.bincount(f[first], minlength=n_features))
    return indptr, v[first], Wg


def _kept_values(
    feature: NDArray[np.intp], value: _F, W: _F, n_features: int
) -> tuple[NDArray[np.intp], _F, _F]:
    """``(indptr, values, value_weights)`` of the entries some class gives positive weight.

    ``feature`` and ``value`` are sorted by (feature, value) and distinct;
    ``W`` holds their per-class weights, shape (n_classes, n_entries).
    """
    keep = np.any(W > 0, axis=0)
    indptr = np.zeros(n_features + 1, np.intp)
    indptr[1:] = np.cumsum(np.bincount(feature[keep], minlength=n_features))
    return indptr, value[keep], W[:, keep]


#: most groups of rows of equal class and weight that are sorted group by group
_MAX_GROUPS = 64


def _sorted_counts(
    X: _F, yi: NDArray[np.intp], w: _F, n_classes: int
) -> tuple[NDArray[np.intp], _F, _F] | None:
    """``(indptr, values, value_weights)`` of data whose rows fall in few (class, weight) groups.

    Within a group every row has the same weight, so a value's weight is its
    count times that weight: sorting the values alone, without an argsort
    (several times faster), is enough. Returns ``None`` when there are more
    than ``_MAX_GROUPS`` groups (arbitrary sample weights).
    """
    uw, wi = np.unique(w, return_inverse=True)
    gid = yi * uw.size + wi.ravel()
    groups = np.unique(gid)
    if groups.size > _MAX_GROUPS:
        return None
    p = X.shape[1]
    step = max(256, 2 * BLOCK_VALUES // max(p, 1))
    cols, vals = [np.zeros(0, np.intp)], [np.zeros(0)]
    ks, ws = [np.zeros(0, np.intp)], [np.zeros(0)]
    for g in groups:
        k, wg = int(g // uw.size), float(uw[g % uw.size])
        if wg <= 0:
            continue
        rows = np.flatnonzero(gid == g)
        for s in range(0, rows.size, step):
            r = rows[s : s + step]
            # columns as rows: each feature's values sorted in place, NaN last
            S = np.sort(np.ascontiguousarray(X[r].T, dtype=np.float64), axis=1).ravel()
            col = np.repeat(np.arange(p), r.size)
            keep = ~np.isnan(S)
            col, S = col[keep], S[keep]
            start = np.ones(S.size, dtype=bool)
            start[1:] = (col[1:] != col[:-1]) | (S[1:] != S[:-1])
            first = np.flatnonzero(start)
            cols.append(col[first])
            vals.append(S[first])
            ks.append(np.full(first.size, k))
            ws.append(np.diff(np.append(first, S.size)) * wg)
    f, v, kk, ww = (np.concatenate(a) for a in (cols, vals, ks, ws))
    order = np.lexsort((v, f))
    f, v, kk, ww = f[order], v[order], kk[order], ww[order]
    start = np.ones(v.size, dtype=bool)
    start[1:] = (f[1:] != f[:-1]) | (v[1:] != v[:-1])
    entry = np.cumsum(start) - 1
    U = int(entry[-1]) + 1 if v.size else 0
    flat = np.bincount(kk * U + entry, weights=ww, minlength=n_classes * U)
    indptr = np.zeros(p + 1, np.intp)
    indptr[1:] = np.cumsum(np.bincount(f[start], minlength=p))
    values: _F = np.asarray(v[start], dtype=np.float64)
    return indptr, values, np.asarray(flat, dtype=np.float64).reshape(n_classes, U)


def _argsorted(
    Xb: _F, yb: NDArray[np.intp], wb: _F, n_classes: int
) -> tuple[NDArray[np.intp], _F, _F]:
    """``(indptr, values, value_weights)`` of any block, by one argsort of its columns."""
    p = Xb.shape[1]
    b = Xb.shape[0]
    # sorting each column (NaN last) and reading column by column orders
    # the entries by (feature, value) without a lexsort
    XT = np.ascontiguousarray(Xb.T)
    order = np.argsort(XT, axis=1)
    vals = np.take_along_axis(XT, order, axis=1).ravel()
    cls_ = yb[order].ravel()
    ww = wb[order].ravel()
    col = np.repeat(np.arange(p), b)
    keep = ~np.isnan(vals) & (ww > 0)
    col, vals, cls_, ww = col[keep], vals[keep], cls_[keep], ww[keep]
    if vals.size == 0:
        return _group_entries(col, vals, np.zeros((n_classes, 0)), p)
    start = np.ones(vals.size, dtype=bool)
    start[1:] = (col[1:] != col[:-1]) | (vals[1:] != vals[:-1])
    gid = np.cumsum(start) - 1
    U = int(gid[-1]) + 1
    flat = np.bincount(cls_ * U + gid, weights=ww, minlength=n_classes * U)
    Wg = np.asarray(flat, dtype=np.float64).reshape(n_classes, U)
    indptr = np.zeros(p + 1, np.intp)
    indptr[1:] = np.cumsum(np.bincount(col[start], minlength=p))
    return indptr, vals[start], Wg


@dataclass(frozen=True, eq=False, repr=False)
class ValueCountStats(ClassStatistic):
    r"""Per-class weights of each distinct value of each feature (NaN = missing).

    The exact empirical distribution of every feature in every class, which is
    what a kernel density estimate needs. Stored like a CSR matrix: the
    distinct values of feature ``j`` are ``values[indptr[j]:indptr[j + 1]]``
    (sorted) and their weights in class ``k`` are
    ``value_weights[k, indptr[j]:indptr[j + 1]]``. Rows of zero weight are
    dropped. Discrete data (MNIST's 256 grey levels) stay small; continuous
    data are as large as the data.

    The laws of :class:`Statistic` hold with the stored values exactly equal:
    merging unites the values and adds their weights; subtracting takes the
    differences and drops a value whose weight is used up in every class (to
    rounding), so that the result is the ``from_data`` of the remaining rows.
    Removing a value these statistics do not hold, or more of its weight than
    they hold, raises :class:`StatisticsError`.

    Attributes
    ----------
    classes, counts, weights
        As in every statistic (see :class:`Statistic`).
    indptr : ndarray of shape (n_features + 1,)
    values : ndarray of shape (n_values,)
    value_weights : ndarray of shape (n_classes, n_values)
    """

    # indptr and values are shared by all classes: only the weights are per class
    indptr: NDArray[np.intp] = field(metadata=shared("p+1", dtype="index", low=0, csr="values"))
    values: _F = field(metadata=shared("V"))
    value_weights: _F = field(metadata=per_class("K", "V", low=0.0))

    #: values are read as float64 (NaN = missing)
    input_dtype = np.float64

    @classmethod
    def _from_rows(cls, rows: Rows) -> ValueCountStats:
        """Statistics of one data set; blocks of rows are grouped by one sort each."""
        X, c, yi, w, _ = rows
        n, p = X.shape
        counts, weights = class_totals(yi, w, c.size)
        lo, hi = feature_bounds(X, w)
        fast = _sorted_counts(X, yi, w, c.size)
        if fast is not None:
            return cls(c, counts, weights, *fast, lower=lo, upper=hi)
        out = cls.empty(c, p)
        for sl in block_slices(n, p):
            entries = _argsorted(np.asarray(X[sl], dtype=np.float64), yi[sl], w[sl], c.size)
            out = out.merge(cls(c, np.zeros(c.size, np.int64), np.zeros(c.size), *entries))
        return cls(
            c, counts, weights, out.indptr, out.values, out.value_weights, lower=lo, upper=hi
        )

    def _merge_aligned(self, other: ValueCountStats) -> ValueCountStats:
        a, b = self, other
        indptr, values, Wg = _group_entries(
            np.concatenate([a.value_features, b.value_features]),
            np.concatenate([a.values, b.values]),
            np.hstack([a.value_weights, b.value_weights]),
            self.n_features,
        )
        return ValueCountStats(
            a.classes, a.counts + b.counts, a.weights + b.weights, indptr, values, Wg
        )

    def _subtract_aligned(self, other: ValueCountStats) -> ValueCountStats:
        a, b = self, other
        # Sort the entries of both by (feature, value), self's before other's:
        # each group of equal (feature, value) then starts with self's entry
        # if self holds the value.
        feature = np.concatenate([a.value_features, b.value_features])
        value = np.concatenate([a.values, b.values])
        source = np.repeat([0, 1], [a.values.size, b.values.size])
        order = np.lexsort((source, value, feature))
        f, v, src = feature[order], value[order], source[order]
        start = np.ones(v.size, dtype=bool)
        start[1:] = (f[1:] != f[:-1]) | (v[1:] != v[:-1])
        first = np.flatnonzero(start)
        held_W = np.hstack([a.value_weights, np.zeros_like(b.value_weights)])[:, order]
        removed_W = np.hstack([np.zeros_like(a.value_weights), b.value_weights])[:, order]
        held = np.add.reduceat(held_W, first, axis=1) if v.size else held_W
        removed = np.add.reduceat(removed_W, first, axis=1) if v.size else removed_W
        left = held - removed
        bad = left < -ROUNDING * held
        if np.any(bad):
            k, u = (int(i[0]) for i in np.nonzero(bad))
            j, x = int(f[first[u]]), float(v[first[u]])
            if src[first[u]] == 1:
                raise StatisticsError(
                    f"cannot remove value {label_repr(x)} of feature {j} from class {label_repr(a.classes[k])}: "
                    "these statistics hold no such value."
                )
            raise StatisticsError(
                f"cannot remove weight {removed[k, u]:g} of value {label_repr(x)} of feature {j} from "
                f"class {label_repr(a.classes[k])}, which holds {held[k, u]:g}."
            )
        # rounding residue of a used-up weight is exactly nothing, as in from_data
        left = np.where(left <= ROUNDING * held, 0.0, left)
        return ValueCountStats(
            a.classes, a.counts, a.weights, *_kept_values(f[first], v[first], left, a.n_features)
        )

    def _cleared(self, gone: NDArray[np.bool_]) -> ValueCountStats:
        out: ValueCountStats = super()._cleared(gone)
        if np.all(out.value_weights.any(axis=0)):
            return out
        # values no class holds any more are dropped, as from_data never stores them
        indptr, values, Wg = _kept_values(
            out.value_features, out.values, out.value_weights, out.n_features
        )
        return ValueCountStats(out.classes, out.counts, out.weights, indptr, values, Wg)

    def binned(self, steps: ArrayLike) -> ValueCountStats:
        """These statistics with each value moved to the centre of its cell on a grid.

        Feature ``j``'s axis is cut into cells ``[i h_j, (i + 1) h_j)`` and a
        value ``v`` becomes ``(floor(v / h_j) + 0.5) h_j``; values that meet
        in a cell add their weights. A step of 0 leaves a feature as it is.
        The result equals ``from_data`` of the data moved the same way, so it
        merges with other statistics binned on the same grid. With steps that
        are powers of two the arithmetic is exact and the grids nest: binning
        at ``2 h`` what was binned at ``h`` equals binning the data at ``2 h``.
        A value moves by at most ``h_j / 2``; feature ``j`` then holds at most
        ``floor(max / h_j) - floor(min / h_j) + 1`` distinct values.

        Parameters
        ----------
        steps : float or array-like of shape (n_features,)
            Non-negative cell widths.
        """
        h = np.broadcast_to(np.asarray(steps, dtype=np.float64), (self.n_features,))
        if not np.all(np.isfinite(h) & (h >= 0)):
            raise ValueError(f"steps must be finite and non-negative; got {h.tolist()[:10]}.")
        hv = h[self.value_features]
        on = hv > 0
        moved = np.where(
            on, (np.floor(self.values / np.where(on, hv, 1.0)) + 0.5) * hv, self.values
        )
        indptr, values, Wg = _group_entries(
            self.value_features, moved, self.value_weights, self.n_features
        )
        out = ValueCountStats(self.classes, self.counts, self.weights, indptr, values, Wg)
        # the range moves with the values (the floor is monotone); an empty or
        # unknown range stays as it is
        lower, upper = (np.asarray(b, dtype=np.float64) for b in (self.lower, self.upper))
        with np.errstate(invalid="ignore"):
            cell = (h > 0) & np.isfinite(lower) & np.isfinite(upper)
            safe = np.where(cell, h, 1.0)
            lower = np.where(cell, (np.floor(lower / safe) + 0.5) * safe, lower)
            upper = np.where(cell, (np.floor(upper / safe) + 0.5) * safe, upper)
        return out.with_bounds(lower, upper)

    @property
    def value_features(self) -> NDArray[np.intp]:
        """The feature of each stored value, shape (n_values,)."""
        return np.repeat(np.arange(self.n_features), np.diff(self.indptr))

    def _feature_matrix(self) -> Any:
        """Sparse (n_values, n_features) indicator of each value's feature."""
        U = self.values.size
        return sp.csr_matrix(
            (np.ones(U), (np.arange(U), self.value_features)), shape=(U, self.n_features)
        )

    @property
    def feature_weights(self) -> _F:
        """Weight of the rows where each feature is observed, shape (n_classes, n_features)."""
        return np.asarray(self.value_weights @ self._feature_matrix())

    def moments(self) -> tuple[_F, _F, _F]:
        """Per-class, per-feature ``(V, mean, M2)`` (weight, mean, centred sum of squares)."""
        F = self._feature_matrix()
        V = np.asarray(self.value_weights @ F)
        safe = np.where(V > 0, V, 1.0)
        mean = np.asarray((self.value_weights * self.values) @ F) / safe
        d = self.values[None, :] - mean[:, self.value_features]
        m2 = np.asarray((self.value_weights * d * d) @ F)
        return V, mean, m2

    @property
    def n_features(self) -> int:
        return int(self.indptr.size - 1)

    def _close(self, other: ValueCountStats, rtol: float, atol: float) -> bool:
        # the distinct values themselves are data, not sums: they must be equal
        return (
            np.array_equal(self.indptr, other.indptr)
            and np.array_equal(self.values, other.values)
            and arrays_close(self.weights, other.weights, rtol, atol)
            and arrays_close(self.value_weights, other.value_weights, rtol, atol)
        )

    def __repr__(self) -> str:
        return (
            f"ValueCountStats(n_classes={self.n_classes}, n_features={self.n_features}, "
            f"n_values={self.values.size}, rows={int(self.counts.sum())})"
        )

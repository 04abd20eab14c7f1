"""Per-class weighted distinct values of each feature: the kernel densities' statistic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ._common import (
    as_classes,
    block_slices,
    check_features,
    class_totals,
    encode,
    expand,
    union_classes,
)
from ._counts import _close, _weights

_F = NDArray[np.float64]


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


@dataclass(frozen=True, eq=False)
class ValueCountStats:
    r"""Per-class weights of each distinct value of each feature (NaN = missing).

    The exact empirical distribution of every feature in every class, which is
    what a kernel density estimate needs. Stored like a CSR matrix: the
    distinct values of feature ``j`` are ``values[indptr[j]:indptr[j + 1]]``
    (sorted) and their weights in class ``k`` are
    ``value_weights[k, indptr[j]:indptr[j + 1]]``. Rows of zero weight are
    dropped. Discrete data (MNIST's 256 grey levels) stay small; continuous
    data are as large as the data.

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
    counts : ndarray of shape (n_classes,), int64
    weights : ndarray of shape (n_classes,)
    indptr : ndarray of shape (n_features + 1,)
    values : ndarray of shape (n_values,)
    value_weights : ndarray of shape (n_classes, n_values)
    """

    classes: NDArray[Any]
    counts: NDArray[np.int64]
    weights: _F
    indptr: NDArray[np.intp]
    values: _F
    value_weights: _F

    @classmethod
    def empty(cls, classes: ArrayLike, n_features: int) -> ValueCountStats:
        """The identity element."""
        c = as_classes(classes)
        k = c.size
        return cls(
            c,
            np.zeros(k, np.int64),
            np.zeros(k),
            np.zeros(int(n_features) + 1, np.intp),
            np.zeros(0),
            np.zeros((k, 0)),
        )

    @classmethod
    def from_data(
        cls,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        classes: ArrayLike | None = None,
    ) -> ValueCountStats:
        """Statistics of one data set; blocks of rows are grouped by one sort each."""
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y)
        c = as_classes(y if classes is None else classes)
        yi = encode(y, c)
        n, p = X.shape
        w = _weights(n, sample_weight)
        counts, weights = class_totals(yi, w, c.size)
        out = cls.empty(c, p)
        for sl in block_slices(n, p):
            Xb, yb, wb = np.asarray(X[sl], dtype=np.float64), yi[sl], w[sl]
            b = Xb.shape[0]
            # sorting each column (NaN last) and reading column by column orders
            # the entries by (feature, value) without a lexsort
            order = np.argsort(Xb, axis=0, kind="stable")
            vals = np.take_along_axis(Xb, order, axis=0).T.ravel()
            cls_ = yb[order].T.ravel()
            ww = wb[order].T.ravel()
            col = np.repeat(np.arange(p), b)
            keep = ~np.isnan(vals) & (ww > 0)
            col, vals, cls_, ww = col[keep], vals[keep], cls_[keep], ww[keep]
            if vals.size == 0:
                continue
            start = np.ones(vals.size, dtype=bool)
            start[1:] = (col[1:] != col[:-1]) | (vals[1:] != vals[:-1])
            gid = np.cumsum(start) - 1
            U = int(gid[-1]) + 1
            flat = np.bincount(cls_ * U + gid, weights=ww, minlength=c.size * U)
            Wg = np.asarray(flat, dtype=np.float64).reshape(c.size, U)
            indptr = np.zeros(p + 1, np.intp)
            indptr[1:] = np.cumsum(np.bincount(col[start], minlength=p))
            block = cls(c, np.zeros(c.size, np.int64), np.zeros(c.size), indptr, vals[start], Wg)
            out = out.merge(block)
        return cls(c, counts, weights, out.indptr, out.values, out.value_weights)

    def update(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> ValueCountStats:
        """The statistics of the rows seen so far plus ``(X, y, w)``."""
        X = np.asarray(X)
        check_features(self.n_features, X.shape[1], "update")
        return self.merge(ValueCountStats.from_data(X, y, sample_weight, classes=self.classes))

    def merge(self, other: ValueCountStats) -> ValueCountStats:
        """Statistics of the union of the two data sets (classes and values united)."""
        if not isinstance(other, ValueCountStats):
            raise TypeError(
                f"can only merge ValueCountStats with ValueCountStats, not {type(other)}."
            )
        check_features(self.n_features, other.n_features, "merge")
        c = union_classes(self.classes, other.classes)
        a, b = self._aligned(c), other._aligned(c)
        p = self.n_features
        indptr, values, Wg = _group_entries(
            np.concatenate([a.value_features, b.value_features]),
            np.concatenate([a.values, b.values]),
            np.hstack([a.value_weights, b.value_weights]),
            p,
        )
        return ValueCountStats(c, a.counts + b.counts, a.weights + b.weights, indptr, values, Wg)

    def _aligned(self, classes: NDArray[Any]) -> ValueCountStats:
        if np.array_equal(classes, self.classes):
            return self
        own = self.classes
        return ValueCountStats(
            classes,
            expand(self.counts, own, classes),
            expand(self.weights, own, classes),
            self.indptr,
            self.values,
            expand(self.value_weights, own, classes),
        )

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

    @property
    def n_classes(self) -> int:
        return int(self.classes.size)

    def allclose(self, other: ValueCountStats, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        """Whether two statistics hold the same values and agree on weights to ``rtol``."""
        return (
            np.array_equal(self.classes, other.classes)
            and np.array_equal(self.counts, other.counts)
            and np.array_equal(self.indptr, other.indptr)
            and np.array_equal(self.values, other.values)
            and _close(self.weights, other.weights, rtol, atol)
            and _close(self.value_weights, other.value_weights, rtol, atol)
        )

    def __repr__(self) -> str:
        return (
            f"ValueCountStats(n_classes={self.n_classes}, n_features={self.n_features}, "
            f"n_values={self.values.size}, rows={int(self.counts.sum())})"
        )

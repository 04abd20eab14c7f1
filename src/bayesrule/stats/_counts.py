"""Count, category and distinct-value statistics for the naive Bayes family.

All four statistics here are commutative monoids like :class:`DiagonalStats`:
``empty`` is the identity, ``merge`` is associative and commutative, and
``from_data(A).merge(from_data(B)) == from_data(A ∪ B)``; a row of integer
weight ``w`` counts as ``w`` copies of it. NaN entries are missing: they add
nothing to the feature they are in, but the row still counts for its class.
No smoothing or prior lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ._common import (
    ClassStatistic,
    as_classes,
    block_slices,
    check_features,
    class_matrix,
    class_totals,
    encode,
    expand,
    one_hot_classes,
    union_classes,
)
from ._diagonal import DiagonalStats

__all__ = ["CategoryStats", "CountStats", "MixedStats", "ValueCountStats"]

_F = NDArray[np.float64]


def _weights(n: int, sample_weight: ArrayLike | None) -> _F:
    return np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)


def _close(a: _F, b: _F, rtol: float, atol: float) -> bool:
    if a.shape != b.shape:
        return False
    scale = max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)))
    return bool(np.all(np.abs(a - b) <= atol + rtol * scale))


# --------------------------------------------------------------------------- counts
@dataclass(frozen=True, eq=False, repr=False)
class CountStats(ClassStatistic):
    r"""Per-class, per-feature weighted sums of non-negative values (NaN = missing).

    For class ``k`` and feature ``j``: the weight of the rows where the
    feature is observed ``V_kj`` and the weighted sum of its values
    ``S_kj = sum_i w_i x_ij``; per class the row weight ``W_k`` and the number
    of rows with positive weight. This is all that multinomial, complement,
    Bernoulli (on binarized data) and Poisson class models need. ``X`` may be
    a dense array or a scipy.sparse matrix (never densified).

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
    counts : ndarray of shape (n_classes,), int64
    weights : ndarray of shape (n_classes,)
    feature_weights : ndarray of shape (n_classes, n_features)
    sums : ndarray of shape (n_classes, n_features)
    """

    classes: NDArray[Any]
    counts: NDArray[np.int64]
    weights: _F
    feature_weights: _F
    sums: _F

    _per_class = ("counts", "weights", "feature_weights", "sums")

    @classmethod
    def empty(cls, classes: ArrayLike, n_features: int) -> CountStats:
        """The identity element."""
        c = as_classes(classes)
        k, p = c.size, int(n_features)
        return cls(c, np.zeros(k, np.int64), np.zeros(k), np.zeros((k, p)), np.zeros((k, p)))

    @classmethod
    def from_data(
        cls,
        X: Any,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        classes: ArrayLike | None = None,
    ) -> CountStats:
        """Statistics of one data set: one one-hot product per block of rows."""
        y = np.asarray(y)
        c = as_classes(y if classes is None else classes)
        yi = encode(y, c)
        n, p = X.shape
        w = _weights(n, sample_weight)
        counts, weights = class_totals(yi, w, c.size)
        if sp.issparse(X):
            H = one_hot_classes(yi, w, c.size)
            X = sp.csr_matrix(X, dtype=np.float64)
            nan = np.isnan(X.data)
            if nan.any():
                missing = sp.csr_matrix((nan.astype(float), X.indices, X.indptr), shape=X.shape)
                X = sp.csr_matrix((np.where(nan, 0.0, X.data), X.indices, X.indptr), shape=X.shape)
                V = weights[:, None] - np.asarray((H @ missing).todense())
            else:
                V = np.repeat(weights[:, None], p, axis=1)
            S = np.asarray((H @ X).todense())
            return cls(c, counts, weights, V, S)
        X = np.asarray(X)
        if not np.issubdtype(X.dtype, np.floating):
            X = X.astype(np.float64)
        V = np.zeros((c.size, p))
        S = np.zeros((c.size, p))
        for sl in block_slices(n, p):
            Xb, yb, wb = np.asarray(X[sl], dtype=np.float64), yi[sl], w[sl]
            # Optimistic: without NaN in the block (the common case) every
            # feature is observed with the rows' whole weight, and the class
            # sums are the answer; a NaN shows up in those sums, and only then
            # are the missing entries split out.
            H = class_matrix(yb, wb, c.size)
            Sb = np.asarray(H @ Xb)
            if not np.isnan(Sb).any():
                V += np.bincount(yb, weights=wb, minlength=c.size)[:, None]
                S += Sb
                continue
            observed = ~np.isnan(Xb)
            V += np.asarray(H @ observed.astype(np.float64))
            S += np.asarray(H @ np.where(observed, Xb, 0.0))
        return cls(c, counts, weights, V, S)

    def _merge_aligned(self, other: CountStats) -> CountStats:
        a, b = self, other
        return CountStats(
            a.classes,
            a.counts + b.counts,
            a.weights + b.weights,
            a.feature_weights + b.feature_weights,
            a.sums + b.sums,
        )

    @property
    def n_features(self) -> int:
        return int(self.sums.shape[1])

    def allclose(self, other: CountStats, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        """Whether two statistics agree to ``rtol`` (relative to each array's scale)."""
        return (
            np.array_equal(self.classes, other.classes)
            and np.array_equal(self.counts, other.counts)
            and _close(self.weights, other.weights, rtol, atol)
            and _close(self.feature_weights, other.feature_weights, rtol, atol)
            and _close(self.sums, other.sums, rtol, atol)
        )


# ----------------------------------------------------------------------- categories
def check_categories(X: _F, columns: ArrayLike | None = None) -> None:
    """Raise a ValueError naming the column unless every observed entry is an int >= 0."""
    bad = ~np.isnan(X) & ((X < 0) | (X != np.floor(X)))
    if bad.any():
        r, j = (int(v[0]) for v in np.nonzero(bad))
        name = j if columns is None else np.asarray(columns)[j]
        raise ValueError(
            f"column {name!r} must hold non-negative integer category codes; "
            f"got {X[r, j]!r} at row {r}."
        )


@dataclass(frozen=True, eq=False)
class CategoryStats:
    r"""Per-class, per-feature weighted counts of integer categories (NaN = missing).

    ``category_counts[k, j, c]`` is the weight of the class-``k`` rows whose
    feature ``j`` equals category ``c``; categories are codes ``0 .. C - 1``
    with ``C`` the largest code seen plus one (merging pads to the larger).

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
    counts : ndarray of shape (n_classes,), int64
    weights : ndarray of shape (n_classes,)
    category_counts : ndarray of shape (n_classes, n_features, n_categories)
    """

    classes: NDArray[Any]
    counts: NDArray[np.int64]
    weights: _F
    category_counts: _F

    @classmethod
    def empty(cls, classes: ArrayLike, n_features: int) -> CategoryStats:
        """The identity element (no category seen yet)."""
        c = as_classes(classes)
        k = c.size
        return cls(c, np.zeros(k, np.int64), np.zeros(k), np.zeros((k, int(n_features), 0)))

    @classmethod
    def from_data(
        cls,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        classes: ArrayLike | None = None,
    ) -> CategoryStats:
        """Statistics of one data set by one ``bincount`` over (class, feature, category)."""
        X = np.asarray(X, dtype=np.float64)
        check_categories(X)
        y = np.asarray(y)
        c = as_classes(y if classes is None else classes)
        yi = encode(y, c)
        n, p = X.shape
        w = _weights(n, sample_weight)
        counts, weights = class_totals(yi, w, c.size)
        observed = ~np.isnan(X)
        C = int(np.max(X, where=observed, initial=-1.0)) + 1
        cells = c.size * p * C
        flat = np.zeros(cells)
        for sl in block_slices(n, p):
            ob = observed[sl]
            rows, cols = np.nonzero(ob)
            cat = X[sl][rows, cols].astype(np.intp)
            idx = (yi[sl][rows] * p + cols) * C + cat
            flat += np.bincount(idx, weights=w[sl][rows], minlength=cells)
        return cls(c, counts, weights, flat.reshape(c.size, p, C))

    def update(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> CategoryStats:
        """The statistics of the rows seen so far plus ``(X, y, w)``."""
        X = np.asarray(X)
        check_features(self.n_features, X.shape[1], "update")
        return self.merge(CategoryStats.from_data(X, y, sample_weight, classes=self.classes))

    def merge(self, other: CategoryStats) -> CategoryStats:
        """Statistics of the union of the two data sets (classes and categories united)."""
        if not isinstance(other, CategoryStats):
            raise TypeError(f"can only merge CategoryStats with CategoryStats, not {type(other)}.")
        check_features(self.n_features, other.n_features, "merge")
        c = union_classes(self.classes, other.classes)
        C = max(self.n_categories, other.n_categories)
        a, b = self._aligned(c).padded(C), other._aligned(c).padded(C)
        return CategoryStats(
            c, a.counts + b.counts, a.weights + b.weights, a.category_counts + b.category_counts
        )

    def padded(self, n_categories: int) -> CategoryStats:
        """The same statistics with room for ``n_categories`` codes (zeros appended)."""
        extra = n_categories - self.n_categories
        if extra <= 0:
            return self
        cc = np.pad(self.category_counts, ((0, 0), (0, 0), (0, extra)))
        return CategoryStats(self.classes, self.counts, self.weights, cc)

    def _aligned(self, classes: NDArray[Any]) -> CategoryStats:
        if np.array_equal(classes, self.classes):
            return self
        own = self.classes
        return CategoryStats(
            classes,
            expand(self.counts, own, classes),
            expand(self.weights, own, classes),
            expand(self.category_counts, own, classes),
        )

    @property
    def feature_weights(self) -> _F:
        """Weight of the rows where each feature is observed, shape (n_classes, n_features)."""
        return self.category_counts.sum(axis=2)

    @property
    def n_categories(self) -> int:
        return int(self.category_counts.shape[2])

    @property
    def n_features(self) -> int:
        return int(self.category_counts.shape[1])

    @property
    def n_classes(self) -> int:
        return int(self.classes.size)

    def allclose(self, other: CategoryStats, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        """Whether two statistics agree to ``rtol`` (after padding the categories)."""
        C = max(self.n_categories, other.n_categories)
        a, b = self.padded(C), other.padded(C)
        return (
            np.array_equal(a.classes, b.classes)
            and np.array_equal(a.counts, b.counts)
            and _close(a.weights, b.weights, rtol, atol)
            and _close(a.category_counts, b.category_counts, rtol, atol)
        )

    def __repr__(self) -> str:
        return (
            f"CategoryStats(n_classes={self.n_classes}, n_features={self.n_features}, "
            f"n_categories={self.n_categories}, rows={int(self.counts.sum())})"
        )


# ------------------------------------------------------------------ distinct values
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


# ------------------------------------------------------------------------ mixed
#: The statistic each kind of column needs.
KIND_STATS: dict[str, Any] = {
    "gaussian": DiagonalStats,
    "bernoulli": CountStats,
    "poisson": CountStats,
    "categorical": CategoryStats,
    "kernel": ValueCountStats,
}


@dataclass(frozen=True, eq=False)
class MixedStats:
    r"""One statistic per kind of column, for a model with a class model per column.

    ``kinds[j]`` names the model of column ``j`` (a key of ``KIND_STATS``);
    ``parts[kind]`` holds the statistics of the columns of that kind, in
    their order in ``X``. A monoid because each part is one; two values merge
    only if their kinds agree.

    Attributes
    ----------
    kinds : tuple of str, one per feature
    classes, counts, weights : as for the other statistics
    parts : dict of str to statistics
    """

    kinds: tuple[str, ...]
    classes: NDArray[Any]
    counts: NDArray[np.int64]
    weights: _F
    parts: dict[str, Any] = field(default_factory=dict)

    def columns(self, kind: str) -> NDArray[np.intp]:
        """Indices of the columns of one kind."""
        return np.flatnonzero(np.asarray(self.kinds, dtype=object) == kind)

    @classmethod
    def empty(cls, classes: ArrayLike, kinds: tuple[str, ...]) -> MixedStats:
        """The identity element for columns of the given kinds."""
        c = as_classes(classes)
        kinds = tuple(kinds)
        parts = {
            kind: KIND_STATS[kind].empty(c, kinds.count(kind))
            for kind in KIND_STATS
            if kind in kinds
        }
        return cls(kinds, c, np.zeros(c.size, np.int64), np.zeros(c.size), parts)

    @classmethod
    def from_data(
        cls,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        kinds: tuple[str, ...],
        classes: ArrayLike | None = None,
    ) -> MixedStats:
        """Statistics of one numeric data set whose column ``j`` is of kind ``kinds[j]``."""
        X = np.asarray(X, dtype=np.float64)
        check_features(len(kinds), X.shape[1], "kinds")
        y = np.asarray(y)
        c = as_classes(y if classes is None else classes)
        w = _weights(X.shape[0], sample_weight)
        counts, weights = class_totals(encode(y, c), w, c.size)
        out = cls(tuple(kinds), c, counts, weights, {})
        parts = {
            kind: KIND_STATS[kind].from_data(X[:, out.columns(kind)], y, w, classes=c)
            for kind in KIND_STATS
            if kind in kinds
        }
        return cls(tuple(kinds), c, counts, weights, parts)

    def merge(self, other: MixedStats) -> MixedStats:
        """Statistics of the union of the two data sets."""
        if not isinstance(other, MixedStats):
            raise TypeError(f"can only merge MixedStats with MixedStats, not {type(other)}.")
        check_features(self.n_features, other.n_features, "merge")
        if self.kinds != other.kinds:
            raise ValueError(
                f"cannot merge statistics of columns of different kinds: {list(self.kinds)} "
                f"and {list(other.kinds)}."
            )
        c = union_classes(self.classes, other.classes)
        parts = {kind: part.merge(other.parts[kind]) for kind, part in self.parts.items()}
        return MixedStats(
            self.kinds,
            c,
            expand(self.counts, self.classes, c) + expand(other.counts, other.classes, c),
            expand(self.weights, self.classes, c) + expand(other.weights, other.classes, c),
            parts,
        )

    @property
    def n_features(self) -> int:
        return len(self.kinds)

    @property
    def n_classes(self) -> int:
        return int(self.classes.size)

    def allclose(self, other: MixedStats, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        """Whether every part agrees to ``rtol``."""
        return (
            self.kinds == other.kinds
            and np.array_equal(self.classes, other.classes)
            and np.array_equal(self.counts, other.counts)
            and _close(self.weights, other.weights, rtol, atol)
            and all(self.parts[k].allclose(other.parts[k], rtol, atol) for k in self.parts)
        )

    def __repr__(self) -> str:
        kinds = {k: self.kinds.count(k) for k in self.parts}
        return f"MixedStats(n_classes={self.n_classes}, columns={kinds})"

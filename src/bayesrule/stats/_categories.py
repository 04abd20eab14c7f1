"""Per-class weighted counts of integer categories: the categorical models' statistic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
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


__all__ = ["CategoryStats", "check_categories"]


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

"""Per-class weighted counts of integer categories: the categorical models' statistic."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._base import ClassStatistic
from ._bounds import feature_bounds
from ._common import (
    Floats as _F,
)
from ._common import (
    Rows,
    arrays_close,
    block_slices,
    check_removal,
    class_totals,
    label_repr,
)
from .schema import per_class

__all__ = ["MAX_CATEGORIES", "CategoryStats", "check_categories"]

#: The default bound on category codes: a code must be an integer in
#: ``[0, MAX_CATEGORIES)``. The statistics hold one cell per class, feature
#: and code up to the largest code seen, so a stray code such as 1e9 would
#: ask for gigabytes; it is refused, naming the column, before anything is
#: allocated. CategoricalNB and MixedNB raise it with ``max_categories``.
MAX_CATEGORIES = 2**16


def check_categories(
    X: _F, columns: ArrayLike | None = None, max_categories: int = MAX_CATEGORIES
) -> None:
    """Raise a ValueError naming the column and row unless every observed entry is a valid code.

    A valid code is an integer in ``[0, max_categories)``; NaN is missing and
    passes. ``columns`` names the columns of ``X`` in the message (by default
    their indices).
    """
    X = np.asarray(X)
    if X.dtype.kind not in "biufc":
        X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        X = np.atleast_2d(X)
    bad = _first_bad_block(X, max_categories)
    if bad is None:
        return
    s, bad = bad
    r, j = (int(v[0]) for v in np.nonzero(bad))
    r += s
    name: Any = j if columns is None else str(np.asarray(columns, dtype=object)[j])
    v = float(X[r, j])
    if v >= max_categories and np.isfinite(v) and v == np.floor(v):
        code = str(int(v)) if v < 1e18 else f"{v:g}"
        raise ValueError(
            f"column {name!r} holds category code {code} at row {r}; codes must be integers "
            f"in [0, {max_categories - 1}] (max_categories={max_categories}). Recode the "
            "column (e.g. with scikit-learn's OrdinalEncoder) or raise max_categories."
        )
    raise ValueError(
        f"column {name!r} must hold non-negative integer category codes; got {label_repr(v)} at row {r}."
    )


#: Entries of one block of rows judged at once by :func:`check_categories` (2 MiB
#: of float64): the block's temporaries stay in cache, none is made at full size.
CHECK_BLOCK = 2**18


def _first_bad_block(X: Any, max_categories: int) -> tuple[int, Any] | None:
    """The first row of the first block of rows holding an invalid entry, and its mask.

    Per block, the least and largest values (NaN propagates) settle the range,
    and ``floor`` the integers: the common case of valid codes costs these
    reductions over cached blocks; a block with a NaN or a bad value is then
    judged entry by entry. None when every entry is valid (or NaN).
    """
    n, p = X.shape
    if n == 0 or p == 0:
        return None
    rows = max(1, CHECK_BLOCK // p)
    exact = X.dtype.kind in "biu"  # integers: only the range can be wrong
    floors = None if exact else np.empty((min(rows, n), p), dtype=X.dtype)
    same = np.empty((min(rows, n), p), dtype=np.bool_)
    for s in range(0, n, rows):
        block = X[s : s + rows]
        lo, hi = block.min(), block.max()
        if lo >= 0 and hi < max_categories:
            if floors is None:
                continue
            f, e = floors[: block.shape[0]], same[: block.shape[0]]
            if np.equal(np.floor(block, out=f), block, out=e).all():
                continue
        values = np.asarray(block, dtype=np.float64) if block.dtype.kind not in "fc" else block
        with np.errstate(invalid="ignore"):
            bad = ~np.isnan(values) & (
                (values < 0) | (values != np.floor(values)) | (values >= max_categories)
            )
        if bad.any():
            return s, bad
    return None


@dataclass(frozen=True, eq=False, repr=False)
class CategoryStats(ClassStatistic):
    r"""Per-class, per-feature weighted counts of integer categories (NaN = missing).

    ``category_counts[k, j, c]`` is the weight of the class-``k`` rows whose
    feature ``j`` equals category ``c``; categories are codes ``0 .. C - 1``
    with ``C`` the largest code seen plus one (merging pads to the larger,
    subtracting keeps ``self``'s, and :meth:`allclose` pads before comparing).

    The laws of :class:`Statistic` hold up to the rounding of sums: merging
    adds, subtracting takes differences, which may not go below zero beyond
    rounding (removing a category a class does not hold raises
    :class:`StatisticsError`).

    Attributes
    ----------
    classes, counts, weights
        As in every statistic (see :class:`Statistic`).
    category_counts : ndarray of shape (n_classes, n_features, n_categories)
    """

    category_counts: _F = field(metadata=per_class("K", "p", "C", low=0.0))

    #: category codes are read as float64 (NaN = missing)
    input_dtype = np.float64

    @classmethod
    def _from_rows(cls, rows: Rows, *, max_categories: int = MAX_CATEGORIES) -> CategoryStats:
        """Statistics of one data set by one ``bincount`` over (class, feature, category).

        Every observed entry must be an integer code in ``[0, max_categories)``
        (checked before anything is allocated); NaN is missing.
        """
        X, c, yi, w, _ = rows
        check_categories(X, max_categories=max_categories)
        n, p = X.shape
        counts, weights = class_totals(yi, w, c.size)
        observed = ~np.isnan(X)
        C = int(np.max(X, where=observed, initial=-1.0)) + 1
        cells = c.size * p * C
        flat = np.zeros(cells)
        for sl in block_slices(n, p):
            ob = observed[sl]
            at, cols = np.nonzero(ob)
            cat = X[sl][at, cols].astype(np.intp)
            idx = (yi[sl][at] * p + cols) * C + cat
            flat += np.bincount(idx, weights=w[sl][at], minlength=cells)
        lo, hi = feature_bounds(X, w)
        return cls(c, counts, weights, flat.reshape(c.size, p, C), lower=lo, upper=hi)

    def _merge_aligned(self, other: CategoryStats) -> CategoryStats:
        C = max(self.n_categories, other.n_categories)
        a, b = self.padded(C), other.padded(C)
        return CategoryStats(
            a.classes,
            a.counts + b.counts,
            a.weights + b.weights,
            a.category_counts + b.category_counts,
        )

    def _subtract_aligned(self, other: CategoryStats) -> CategoryStats:
        C = self.n_categories
        a, b = self.padded(other.n_categories), other.padded(C)
        held, removed = a.category_counts, b.category_counts
        left = check_removal(held, removed, self.classes, axes=("feature", "category"))
        # the categories beyond self's hold nothing in either (checked above)
        return CategoryStats(self.classes, self.counts, self.weights, left[:, :, :C])

    def padded(self, n_categories: int) -> CategoryStats:
        """The same statistics with room for ``n_categories`` codes (zeros appended)."""
        extra = n_categories - self.n_categories
        if extra <= 0:
            return self
        cc = np.pad(self.category_counts, ((0, 0), (0, 0), (0, extra)))
        return CategoryStats(self.classes, self.counts, self.weights, cc)

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

    def _close(self, other: CategoryStats, rtol: float, atol: float) -> bool:
        # codes beyond the largest seen hold zero weight, so pad before comparing
        C = max(self.n_categories, other.n_categories)
        a, b = self.padded(C), other.padded(C)
        return arrays_close(a.weights, b.weights, rtol, atol) and arrays_close(
            a.category_counts, b.category_counts, rtol, atol
        )

    def __repr__(self) -> str:
        return (
            f"CategoryStats(n_classes={self.n_classes}, n_features={self.n_features}, "
            f"n_categories={self.n_categories}, rows={int(self.counts.sum())})"
        )

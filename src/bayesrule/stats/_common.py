"""Helpers shared by the statistics: label encoding, class alignment, blocking."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _parallel

#: Rows are processed in blocks of about this many float64 values (16 MiB), so
#: that the temporary copies a block needs stay small next to the training
#: matrix; a buffer this size is also reused by the allocator between calls
#: instead of being mapped (and page-faulted) afresh.
BLOCK_VALUES = 1 << 21


def as_classes(classes: ArrayLike) -> NDArray[Any]:
    """Sorted unique labels as a 1-D array."""
    c = np.unique(np.asarray(classes))
    if c.ndim != 1:
        raise ValueError(f"classes must be 1-dimensional; got shape {c.shape}.")
    return c


def encode(y: ArrayLike, classes: NDArray[Any]) -> NDArray[np.intp]:
    """Map labels to their index in ``classes``; unknown labels raise ValueError."""
    y = np.asarray(y)
    if classes.size == 0:
        raise ValueError("no classes were declared, so no label can be encoded.")
    try:
        idx = np.searchsorted(classes, y)
    except TypeError:
        raise ValueError(
            f"labels of type {y.dtype} cannot be compared with the classes {classes.tolist()}."
        ) from None
    idx = np.clip(idx, 0, classes.size - 1)
    unknown = classes[idx] != y
    if np.any(unknown):
        bad = np.unique(y[unknown])
        raise ValueError(
            f"y contains labels {bad.tolist()[:10]} that are not among the classes "
            f"{classes.tolist()[:20]}; declare every class up front (classes=...)."
        )
    return idx.astype(np.intp)


def prepare(
    X: Any, y: ArrayLike, sample_weight: ArrayLike | None, classes: ArrayLike | None
) -> tuple[Any, NDArray[Any], NDArray[np.intp], NDArray[np.float64], bool]:
    """The common start of every ``from_data``: ``(X, classes, codes, weights, unit)``.

    ``X`` is checked to be 2-D (dense arrays are not copied; sparse matrices
    are passed through), the classes default to the labels of ``y``, labels are
    encoded against them, and ``unit`` says whether every weight is 1.
    """
    if not hasattr(X, "tocsr"):
        X = np.asarray(X)
    if len(X.shape) != 2:
        raise ValueError(f"X must be 2-dimensional; got shape {X.shape}.")
    y = np.asarray(y)
    c = as_classes(y if classes is None else classes)
    n = X.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    unit = sample_weight is None or bool(np.all(w == 1.0))
    return X, c, encode(y, c), w, unit


def union_classes(a: NDArray[Any], b: NDArray[Any]) -> NDArray[Any]:
    """Sorted union of two label arrays, refusing to mix strings with numbers."""
    if a.size and b.size and (a.dtype.kind in "OUS") != (b.dtype.kind in "OUS"):
        raise ValueError(
            f"cannot merge statistics whose class labels are of different kinds: "
            f"{a.tolist()[:5]} and {b.tolist()[:5]}."
        )
    return np.union1d(a, b)


def expand(values: NDArray[Any], own: NDArray[Any], target: NDArray[Any]) -> NDArray[Any]:
    """Place per-class rows of ``values`` (indexed by ``own``) into ``target``'s order.

    Classes missing from ``own`` get zeros, which is the empty statistic.
    """
    if own.shape == target.shape and np.array_equal(own, target):
        return values
    out = np.zeros((target.size,) + values.shape[1:], dtype=values.dtype)
    out[np.searchsorted(target, own)] = values
    return out


def block_slices(n_rows: int, n_features: int) -> Iterator[slice]:
    """Row slices of at most about ``BLOCK_VALUES`` values each."""
    step = max(256, BLOCK_VALUES // max(n_features, 1))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def check_features(expected: int, got: int, what: str = "statistics") -> None:
    if expected != got:
        raise ValueError(f"expected {expected} features, got {got} ({what}).")


def one_hot_classes(yi: NDArray[np.intp], w: NDArray[np.float64], k: int) -> Any:
    """Sparse ``(k, n)`` CSR matrix whose row ``j`` holds the weights of class ``j``.

    ``one_hot_classes(yi, w, k) @ X`` gives per-class weighted sums in one product.
    """
    import scipy.sparse as sp

    n = yi.size
    return sp.csr_matrix((w, (yi, np.arange(n))), shape=(k, n))


def class_matrix(yi: NDArray[np.intp], w: NDArray[np.float64], k: int) -> Any:
    """``(k, n)`` matrix whose row ``j`` holds the weights of class ``j``'s rows.

    Dense with few classes, so that ``class_matrix(...) @ X`` is one BLAS
    product; sparse (:func:`one_hot_classes`) with many.
    """
    if k > 64:
        return one_hot_classes(yi, w, k)
    H = np.zeros((k, yi.size))
    H[yi, np.arange(yi.size)] = w
    return H


def syrk_add(D: NDArray[np.float64], acc: NDArray[np.float64]) -> None:
    """Add ``D' D`` to the symmetric ``acc`` in place.

    NumPy recognises ``D.T @ D`` and calls BLAS syrk (half the work of a
    general product), and releases the GIL while it runs, so that
    :func:`in_parallel` can run such products side by side.
    """
    if D.shape[0]:
        acc += np.dot(D.T, D)


def row_ranges(n: int, work: float) -> list[tuple[int, int]]:
    """Contiguous ``(start, stop)`` row ranges, one per thread :func:`in_parallel` will use."""
    parts = min(_parallel.thread_count(work), max(1, n // 64))
    edges = np.linspace(0, n, parts + 1).astype(int).tolist()
    return list(zip(edges[:-1], edges[1:], strict=True))


def arrays_close(
    a: NDArray[Any], b: NDArray[Any], rtol: float, atol: float = 0.0, floor: float = 0.0
) -> bool:
    """Entrywise ``|a - b| <= atol + rtol * max(|a|, |b|, floor)`` over the whole array.

    ``floor`` is the scale below which a centred moment is rounding noise: a
    moment that is zero in exact arithmetic (one distinct row, symmetric data)
    is compared on that scale rather than on its own.
    """
    if a.shape != b.shape:
        return False
    scale = max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)), floor)
    return bool(np.all(np.abs(a - b) <= atol + rtol * scale))


def noise_floor(weights: NDArray[np.float64], means: NDArray[np.float64], order: int) -> float:
    """Scale of a centred moment of ``order`` made of rounding noise alone.

    Centring loses about the digits of ``|mean|``; we take ``W (1e-6 |mean|)^order``
    (far above that loss, far below any real spread).
    """
    return (
        float(np.max(weights, initial=0.0))
        * (1e-6 * float(np.max(np.abs(means), initial=0.0))) ** order
    )


def class_totals(
    yi: NDArray[np.intp], w: NDArray[np.float64], k: int
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Per class: rows with positive weight, and the sum of the weights."""
    counts = np.bincount(yi, weights=(w > 0).astype(float), minlength=k).astype(np.int64)
    return counts, np.bincount(yi, weights=w, minlength=k).astype(np.float64)


#: Rows sampled (at a fixed stride) to estimate provisional class means.
PILOT_ROWS = 8192


def pilot_means(
    X: NDArray[Any], yi: NDArray[np.intp], w: NDArray[np.float64], k: int
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """Rows with positive weight, weight sums, and provisional class centres.

    The centres are the weighted class means of an evenly strided sample of
    at most about ``PILOT_ROWS`` rows (all rows for small data), so no extra
    pass over a large ``X`` is needed. Moments are then accumulated about these
    centres and corrected exactly with the residual sums: with centres close to
    the means (a sample of thousands of rows), nothing is lost, unlike raw sums
    of squares.
    """
    n, p = X.shape
    counts, weights = class_totals(yi, w, k)
    stride = max(1, n // PILOT_ROWS)
    rows = np.arange(0, n, stride)
    ws, ys = w[rows], yi[rows]
    Xs = np.asarray(X[rows], dtype=np.float64)
    sw = np.bincount(ys, weights=ws, minlength=k)
    sums = np.asarray(one_hot_classes(ys, ws, k) @ Xs)
    total = float(sw.sum())
    fallback = sums.sum(axis=0) / total if total > 0 else np.zeros(p)
    centres = np.where(sw[:, None] > 0, sums / np.where(sw > 0, sw, 1.0)[:, None], fallback)
    return counts, weights, centres


#: Rows sampled to estimate whether products about the origin would cancel.
PROBE_ROWS = 1024


def origin_cancellation(X: Any, yi: NDArray[np.intp], w: NDArray[np.float64], k: int) -> float:
    """Estimated ``max_j sum_i w_i x_ij^2 / sum_i w_i (x_ij - m_{y_i j})^2``.

    The largest ratio, over the columns, of the raw to the within-class sum
    of squares, on an evenly strided sample of about ``PROBE_ROWS`` rows: the
    factor by which ``X'X - sum_k W_k m_k m_k'`` would amplify rounding. A
    column without spread in the sample counts as 1 if it is zero there and
    as infinite otherwise, and so does anything non-finite.
    """
    n = X.shape[0]
    stride = max(1, n // PROBE_ROWS)
    Xs = np.asarray(X[::stride], dtype=np.float64)
    ys, ws = yi[::stride], w[::stride]
    sw = np.bincount(ys, weights=ws, minlength=k)
    means = np.asarray(one_hot_classes(ys, ws, k) @ Xs) / np.where(sw > 0, sw, 1.0)[:, None]
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        raw = ws @ (Xs * Xs)
        R = Xs - means[ys]
        within = ws @ (R * R)
        ratio = np.where(raw == 0.0, 1.0, raw / within)
    return float(np.max(ratio, initial=1.0)) if np.all(np.isfinite(ratio)) else np.inf


class ClassStatistic:
    """What every per-class statistic shares: the monoid plumbing around its merge rule.

    A subclass is a frozen dataclass whose first field is ``classes``; it
    lists in ``_per_class`` the fields indexed by class along their first axis
    (zero for a class not seen), and implements ``from_data``, ``n_features``
    and ``_merge_aligned(other)`` for two values over the same classes.
    ``merge`` unites the classes, so statistics of data sets that saw
    different classes merge too.
    """

    _per_class: ClassVar[tuple[str, ...]] = ()
    classes: NDArray[Any]
    counts: NDArray[np.int64]
    weights: NDArray[np.float64]

    @property
    def n_features(self) -> int:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    @property
    def n_classes(self) -> int:
        return int(self.classes.size)

    @classmethod
    def from_data(cls, X: Any, y: Any, sample_weight: Any = None, *, classes: Any = None) -> Any:
        raise NotImplementedError  # pragma: no cover

    def update(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        """Return the statistics of the rows seen so far plus ``(X, y, w)``."""
        shape = getattr(X, "shape", None) or np.shape(X)
        check_features(self.n_features, shape[1] if len(shape) == 2 else -1, "update")
        return self.merge(type(self).from_data(X, y, sample_weight, classes=self.classes))

    def merge(self, other: Any) -> Any:
        """Statistics of the union of the two data sets (classes are united)."""
        if type(other) is not type(self):
            raise TypeError(
                f"can only merge {type(self).__name__} with {type(self).__name__}, "
                f"not {type(other).__name__}."
            )
        check_features(self.n_features, other.n_features, "merge")
        c = union_classes(self.classes, other.classes)
        return self._aligned(c)._merge_aligned(other._aligned(c))

    def _merge_aligned(self, other: Any) -> Any:
        raise NotImplementedError  # pragma: no cover

    def _aligned(self, classes: NDArray[Any]) -> Any:
        if np.array_equal(classes, self.classes):
            return self
        changes = {f: expand(getattr(self, f), self.classes, classes) for f in self._per_class}
        return dataclasses.replace(self, classes=classes, **changes)  # type: ignore[type-var]

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n_classes={self.n_classes}, n_features={self.n_features}, "
            f"rows={int(self.counts.sum())}, weight={float(self.weights.sum()):g})"
        )

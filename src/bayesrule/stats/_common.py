"""Helpers shared by the statistics: label encoding, class alignment, blocking."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: Rows are processed in blocks of about this many float64 values, so that the
#: temporary copies a block needs stay small next to the training matrix.
BLOCK_VALUES = 1 << 22


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

"""A mergeable, order-free sample of each class's rows: the bottom-``m`` sketch of a row hash.

Every row gets a deterministic 64-bit key, a hash of its float64 values
(:func:`row_keys`). Per class, the sketch keeps the ``size`` smallest keys of
the rows of positive weight, with the summed weight of each key: identical
rows have one key, so a row of integer weight ``w`` and ``w`` copies of it
give the same sketch. Which rows are kept depends on the rows alone, never
on their order or on how they were split into blocks: merging the sketches
of blocks, in any order and any grouping, keeps the ``size`` smallest keys of
their union (a key among the ``size`` smallest of the union is among the
``size`` smallest of every block that holds it, so its weights are all
there). The kept keys are a uniform sample without replacement of the
class's distinct rows (the hash orders rows as a random permutation would).

A second pass then fetches the rows behind the kept keys
(:class:`KeyedRows`), which merge by union as well. Mixture discriminant
analysis seeds its components (k-means++) from this sample, so a fit in
memory, over blocks of a file and on a cluster starts from the same rows.

References
----------
A. Z. Broder, "On the resemblance and containment of documents", 1997
(bottom-``k`` sketches). E. Cohen and H. Kaplan, "Summarizing data using
bottom-k sketches", PODC 2007.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._common import (
    Floats as _F,
)
from ._common import (
    StatisticsError,
    as_classes,
    union_classes,
)

__all__ = ["KeySketch", "KeyedRows", "RowSample", "row_keys"]

_U = NDArray[np.uint64]

#: rows hashed at a time (bounds the (rows, features) temporaries)
_HASH_ROWS = 128
_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _fmix(h: _U) -> _U:
    """MurmurHash3's 64-bit finaliser: every input bit reaches every output bit."""
    h = h ^ (h >> np.uint64(33))
    h = h * _M1
    h = h ^ (h >> np.uint64(33))
    h = h * _M2
    return h ^ (h >> np.uint64(33))


def _column_multipliers(p: int) -> _U:
    """``p`` fixed odd 64-bit multipliers, one per feature (a SplitMix64 sequence)."""
    with np.errstate(over="ignore"):
        steps = (np.arange(1, p + 1, dtype=np.uint64) * _GOLDEN).astype(np.uint64)
    return _fmix(steps) | np.uint64(1)


def row_keys(X: ArrayLike) -> _U:
    """A deterministic 64-bit key of each row of ``X``, from its float64 values, shape (n,).

    Column ``j``'s value bits ``b_j`` (``-0.0`` read as ``0.0``) are
    multiplied by a fixed odd number ``a_j`` and folded (``t ^ t >> 31``), the
    ``p`` products summed modulo ``2^64`` and the sum finalised with
    MurmurHash3's mixer. The same values give the same key on every machine,
    in every block and in every order; float32 data give the keys of their
    float64 values.
    """
    A = np.asarray(X, dtype=np.float64)
    if A.ndim != 2:
        raise ValueError(f"X must be 2-dimensional; got shape {A.shape}.")
    n, p = A.shape
    mult = _column_multipliers(p)
    out = np.empty(n, dtype=np.uint64)
    shift = np.uint64(31)
    rows = min(_HASH_ROWS, max(n, 1))
    buf = np.empty((rows, p), dtype=np.float64)  # blocks that stay in cache
    spare = np.empty((rows, p), dtype=np.uint64)
    for s in range(0, n, rows):
        m = min(rows, n - s)
        np.add(A[s : s + m], 0.0, out=buf[:m])  # -0.0 becomes 0.0
        t, u = buf[:m].view(np.uint64), spare[:m]
        np.multiply(t, mult, out=t)
        np.right_shift(t, shift, out=u)
        np.bitwise_xor(t, u, out=t)
        out[s : s + m] = t.sum(axis=1, dtype=np.uint64)
    return _fmix(out ^ np.uint64(p))


def _checked_size(size: Any) -> int:
    """``size`` as a positive int, else a ValueError naming it."""
    if int(size) < 1:
        raise ValueError(f"size must be a positive int; got {size!r}.")
    return int(size)


def _entries(owner: ArrayLike, keys: ArrayLike) -> tuple[NDArray[np.int64], _U]:
    """Class indices as int64 and row keys as uint64."""
    return np.asarray(owner, dtype=np.int64), np.asarray(keys, dtype=np.uint64)


def _group_starts(o: NDArray[np.int64], k: _U) -> NDArray[np.bool_]:
    """Which entries, sorted by class then key, start a (class, key) group."""
    first = np.ones(o.size, dtype=bool)
    first[1:] = (o[1:] != o[:-1]) | (k[1:] != k[:-1])
    return first


def _first_per_class(o: NDArray[np.int64], size: int) -> NDArray[np.bool_]:
    """Which entries, sorted by class, are among the first ``size`` of their class."""
    return np.arange(o.size) - np.searchsorted(o, o, side="left") < size


def _bottom(owner: NDArray[np.int64], keys: _U, weights: _F, size: int) -> tuple[Any, Any, Any]:
    """Entries grouped by (class, key) with summed weights, the ``size`` smallest keys per class."""
    if keys.size == 0:
        return owner.astype(np.int64), keys.astype(np.uint64), weights.astype(np.float64)
    # ties within a (class, key) group in order of weight, so that their sum is
    # the same whatever order the blocks came in (for two parts exactly)
    order = np.lexsort((weights, keys, owner))
    o, k, w = owner[order], keys[order], weights[order]
    starts = np.flatnonzero(_group_starts(o, k))
    o, k, w = o[starts], k[starts], np.add.reduceat(w, starts)
    keep = _first_per_class(o, size)
    return o[keep].astype(np.int64), k[keep], w[keep]


@dataclass(frozen=True, eq=False, repr=False)
class KeySketch:
    r"""Per class, the ``size`` smallest row keys of rows of positive weight, with their weights.

    Laws: merge is associative and commutative, the sketch of no rows is its
    identity, and ``from_keys(A).merge(from_keys(B))`` keeps the same keys
    as ``from_keys(A ∪ B)`` (with the same weights, to the rounding of their
    sum). The classes are united as they appear.

    Attributes
    ----------
    size : int
        Keys kept per class at most.
    classes : (K,) sorted labels
    owner : (m,) int64 class index of each kept key (non-decreasing)
    keys : (m,) uint64, ascending within each class
    weights : (m,) the summed weight of the rows of each key
    """

    size: int
    classes: NDArray[Any]
    owner: NDArray[np.int64]
    keys: _U
    weights: _F

    @classmethod
    def from_keys(
        cls, keys: ArrayLike, y: ArrayLike, sample_weight: ArrayLike, classes: ArrayLike, size: int
    ) -> KeySketch:
        """The sketch of rows with keys ``keys``, class indices ``y`` into ``classes``, weights."""
        size = _checked_size(size)
        yi, k = _entries(y, keys)
        w = np.asarray(sample_weight, dtype=np.float64)
        pos = w > 0
        owner, kept, weights = _bottom(yi[pos], k[pos], w[pos], size)
        return cls(size, as_classes(classes), owner, kept, weights)

    def merge(self, other: KeySketch) -> KeySketch:
        if not isinstance(other, KeySketch):
            raise StatisticsError(f"cannot merge a KeySketch with a {type(other).__name__}.")
        if other.size != self.size:
            raise StatisticsError(
                f"cannot merge sketches of different sizes: {self.size} and {other.size}."
            )
        classes = union_classes(self.classes, other.classes)
        a = np.searchsorted(classes, self.classes)[self.owner]
        b = np.searchsorted(classes, other.classes)[other.owner]
        owner, keys, weights = _bottom(
            np.concatenate([a, b]).astype(np.int64),
            np.concatenate([self.keys, other.keys]),
            np.concatenate([self.weights, other.weights]),
            self.size,
        )
        return KeySketch(self.size, classes, owner, keys, weights)

    def aligned(self, classes: ArrayLike) -> KeySketch:
        """The same sketch over ``classes`` (a superset of its own)."""
        target = as_classes(classes)
        if np.array_equal(target, self.classes):
            return self
        if np.setdiff1d(self.classes, target).size:
            raise StatisticsError(
                f"the sketch's classes {self.classes.tolist()[:10]} are not all among "
                f"{target.tolist()[:10]}."
            )
        owner = np.searchsorted(target, self.classes)[self.owner].astype(np.int64)
        return KeySketch(self.size, target, owner, self.keys, self.weights)

    def selects(self, keys: ArrayLike, y: ArrayLike) -> NDArray[np.bool_]:
        """Which rows (keys, class indices into ``classes``) have a kept key of their class."""
        k = np.asarray(keys, dtype=np.uint64)
        yi = np.asarray(y, dtype=np.int64)
        out = np.zeros(k.size, dtype=bool)
        bounds = np.searchsorted(self.owner, np.arange(self.classes.size + 1))
        for c in np.unique(yi).tolist():
            kept = self.keys[bounds[c] : bounds[c + 1]]
            if kept.size:
                rows = np.flatnonzero(yi == c)
                out[rows] = np.isin(k[rows], kept)
        return out

    def of_class(self, k: int) -> tuple[_U, _F]:
        """The kept keys of class ``k`` (ascending) and their weights."""
        lo, hi = np.searchsorted(self.owner, [k, k + 1])
        return self.keys[lo:hi], self.weights[lo:hi]

    def __repr__(self) -> str:
        return f"KeySketch(size={self.size}, n_classes={self.classes.size}, kept={self.keys.size})"


@dataclass(frozen=True, eq=False, repr=False)
class KeyedRows:
    """Rows found by key (the rows behind a :class:`KeySketch`), merged by union.

    A key found in several blocks (identical rows) is kept once. Entries are
    sorted by class, then key.

    Attributes
    ----------
    owner : (m,) int64 class index
    keys : (m,) uint64
    rows : (m, d) the rows (or any per-row values)
    """

    owner: NDArray[np.int64]
    keys: _U
    rows: _F

    @classmethod
    def of(cls, owner: ArrayLike, keys: ArrayLike, rows: ArrayLike) -> KeyedRows:
        o, k = _entries(owner, keys)
        R = np.asarray(rows, dtype=np.float64)
        if o.size == 0:
            return cls(o, k, R)
        order = np.lexsort((k, o))
        o, k, R = o[order], k[order], R[order]
        first = _group_starts(o, k)
        return cls(o[first], k[first], np.ascontiguousarray(R[first]))

    def merge(self, other: KeyedRows) -> KeyedRows:
        if self.rows.shape[1:] != other.rows.shape[1:]:
            raise StatisticsError(
                f"cannot merge rows of shape {self.rows.shape[1:]} with rows of shape "
                f"{other.rows.shape[1:]}."
            )
        return KeyedRows.of(
            np.concatenate([self.owner, other.owner]),
            np.concatenate([self.keys, other.keys]),
            np.concatenate([self.rows, other.rows]),
        )

    def of_class(self, k: int, keys: ArrayLike) -> _F:
        """The rows of class ``k`` with ``keys`` (each must be present), in that order."""
        lo, hi = np.searchsorted(self.owner, [k, k + 1])
        mine = self.keys[lo:hi]
        want = np.asarray(keys, dtype=np.uint64)
        at = np.searchsorted(mine, want)
        if want.size and (
            np.any(at >= mine.size) or np.any(mine[np.minimum(at, mine.size - 1)] != want)
        ):
            raise StatisticsError(
                "rows of some sketched keys were not found in the second pass: the source "
                "changed between passes (each pass must read the same rows)."
            )
        return self.rows[lo:hi][at]

    def __repr__(self) -> str:
        return f"KeyedRows(kept={self.keys.size}, width={self.rows.shape[1:]})"


@dataclass(frozen=True, eq=False, repr=False)
class RowSample:
    r"""Per class, the rows of the ``size`` smallest keys, with their summed weights: one pass.

    The bottom-``size`` sketch of :class:`KeySketch` with each key's row
    carried along (any per-row values, e.g. projected rows), so that the
    sample and its rows come from one pass when the keys can be computed
    in it. Rows with one key are taken as one (their weights summed; the
    row kept is that of the smallest weight, ties to the smaller values), so
    keys should hash exactly what makes two rows the same. Merge laws as
    :class:`KeySketch`: associative and commutative, the sample of no rows
    is the identity, and the merge of two blocks' samples keeps the keys of
    the sample of their union.

    Attributes
    ----------
    size : int
    n_classes : int
    owner : (m,) int64 class index (non-decreasing)
    keys : (m,) uint64, ascending within each class
    weights : (m,)
    rows : (m, d)
    """

    size: int
    n_classes: int
    owner: NDArray[np.int64]
    keys: _U
    weights: _F
    rows: _F

    @classmethod
    def of(
        cls,
        owner: ArrayLike,
        keys: ArrayLike,
        weights: ArrayLike,
        rows: ArrayLike,
        n_classes: int,
        size: int,
    ) -> RowSample:
        """The sample of rows with class indices ``owner``; rows of zero weight are left out."""
        size = _checked_size(size)
        o, k = _entries(owner, keys)
        w = np.asarray(weights, dtype=np.float64)
        R = np.asarray(rows, dtype=np.float64)
        if R.ndim != 2 or R.shape[0] != o.size or k.size != o.size or w.size != o.size:
            raise ValueError(
                f"owner, keys, weights and rows must describe the same rows; got sizes "
                f"{o.size}, {k.size}, {w.size} and rows of shape {R.shape}."
            )
        pos = w > 0
        o, k, w, R = o[pos], k[pos], w[pos], R[pos]
        if o.size == 0:
            return cls(size, int(n_classes), o, k, w, R.reshape(0, R.shape[1]))
        # only the rows of each class's ``size`` smallest keys can stay
        order = np.lexsort((k, o))
        so, sk = o[order], k[order]
        group = np.cumsum(_group_starts(so, sk)) - 1
        first_group = group[np.searchsorted(so, so, side="left")]
        cand = order[group - first_group < size]
        o, k, w, R = o[cand], k[cand], w[cand], R[cand]
        # by class, key, weight, then the row's values: the same choice in any order
        cols = tuple(R[:, j] for j in range(R.shape[1] - 1, -1, -1))
        order = np.lexsort((*cols, w, k, o))
        o, k, w, R = o[order], k[order], w[order], R[order]
        starts = np.flatnonzero(_group_starts(o, k))
        o, k, w, R = o[starts], k[starts], np.add.reduceat(w, starts), R[starts]
        keep = _first_per_class(o, size)
        return cls(size, int(n_classes), o[keep], k[keep], w[keep], R[keep])

    def merge(self, other: RowSample) -> RowSample:
        if not isinstance(other, RowSample):
            raise StatisticsError(f"cannot merge a RowSample with a {type(other).__name__}.")
        if (other.size, other.n_classes) != (self.size, self.n_classes) or (
            self.rows.shape[1:] != other.rows.shape[1:]
        ):
            raise StatisticsError(
                f"cannot merge a sample of {self.size} rows per class of {self.n_classes} "
                f"classes, width {self.rows.shape[1:]}, with one of {other.size}, "
                f"{other.n_classes}, {other.rows.shape[1:]}."
            )
        return RowSample.of(
            np.concatenate([self.owner, other.owner]),
            np.concatenate([self.keys, other.keys]),
            np.concatenate([self.weights, other.weights]),
            np.concatenate([self.rows, other.rows]),
            self.n_classes,
            self.size,
        )

    def of_class(self, k: int) -> tuple[_F, _F, _U]:
        """The rows of class ``k`` in the order of their keys, their weights and keys."""
        lo, hi = np.searchsorted(self.owner, [k, k + 1])
        return self.rows[lo:hi], self.weights[lo:hi], self.keys[lo:hi]

    def __repr__(self) -> str:
        return f"RowSample(size={self.size}, n_classes={self.n_classes}, kept={self.keys.size})"

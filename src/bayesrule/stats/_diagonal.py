"""Per-class, per-feature weighted means and centred sums of squares (NaN = missing)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._util.parallel import blas_budget, in_parallel
from ._base import ClassStatistic
from ._bounds import (
    CHUNK_VALUES,
    FoldedRange,
    block_bounds,
    empty_bounds,
    union_bounds,
)
from ._common import (
    Floats as _F,
)
from ._common import (
    Rows,
    arrays_close,
    as_classes,
    block_slices,
    class_matrix,
    class_totals,
    downdate_moments,
    encode,
    noise_floor,
    row_ranges,
    scratch_array,
)
from ._moments import class_codes, gather_column
from .schema import per_class

__all__ = ["DiagonalStats"]


@dataclass(frozen=True, eq=False, repr=False)
class DiagonalStats(ClassStatistic):
    r"""Per-class, per-feature weighted moments; NaN entries are treated as missing.

    For class ``k`` and feature ``j`` it holds the weight of the rows where the
    feature is observed ``V_kj``, their weighted mean ``m_kj`` and centred sum of
    squares ``M2_kj = sum w_i (x_ij - m_kj)^2``; and per class the total row
    weight ``W_k`` (for the priors) and the number of rows with positive weight.

    Same monoid laws as :class:`ScatterStats` (see :class:`Statistic`):
    ``empty`` is the identity, ``merge`` is associative and commutative,
    ``from_data(A).merge(from_data(B)) == from_data(A ∪ B)``, and
    ``from_data(A ∪ B).subtract(from_data(B)) == from_data(A)``. Merging is
    the Chan-Golub-LeVeque update applied feature by feature, subtracting the
    same update run backwards (:func:`downdate_moments`) with each feature's
    own observed weight ``V_kj``.

    Attributes
    ----------
    classes, counts, weights
        As in every statistic (see :class:`Statistic`).
    feature_weights : ndarray of shape (n_classes, n_features)
    means : ndarray of shape (n_classes, n_features)
    m2 : ndarray of shape (n_classes, n_features)
    """

    feature_weights: _F = field(metadata=per_class("K", "p", low=0.0))
    means: _F = field(metadata=per_class("K", "p"))
    m2: _F = field(metadata=per_class("K", "p"))

    #: works as fast on F-ordered (feature-major) blocks as on C-ordered ones
    column_major = True

    @classmethod
    def _from_rows(cls, rows: Rows) -> DiagonalStats:
        """Statistics of one data set; per-class sums are sparse one-hot products."""
        X, c, yi, w, unit = rows
        n, p = X.shape
        if unit and n and isinstance(X, np.ndarray) and X.dtype.kind == "f":
            columns = list(X.T) if _by_columns(X) else None
            done = _unit_pass(X, columns, yi, c)
            if done is not None:
                return done
        out = cls.empty(c, p)
        bounds = empty_bounds(p)
        # two one-hot products (sums and squares), within the thread budget
        with blas_budget(2.0 * n * p * c.size):
            for sl in block_slices(n, p):
                nb, wb, vb, mb, m2b, block = _block_moments(X[sl], yi[sl], w[sl], c.size)
                out = out._merge_arrays(nb, wb, vb, mb, m2b)
                bounds = union_bounds(bounds, block)
        return out.with_bounds(*bounds)

    @classmethod
    def from_columns(
        cls,
        columns: Sequence[NDArray[Any]],
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        classes: ArrayLike | None = None,
    ) -> DiagonalStats:
        """The statistics of the rows whose features are ``columns``, one array per feature.

        Equal to ``from_data(X, y, sample_weight, classes=classes)`` with
        ``X`` the columns side by side (to rounding: the same pass, on the
        same values), without ``X`` ever being laid out: a data source that
        holds its features column by column (Arrow's record batches, read
        from Parquet) hands its column buffers over as they are. Rows of
        unit weight whose values are all finite take the column pass; any
        other block (weights, NaN entries, infinities) is laid out and
        summarised by :meth:`from_data`, which splits missing values out.

        Parameters
        ----------
        columns : sequence of ndarray of shape (n_samples,)
            The features, each a 1-D float array (float32 or float64), all of
            the same length.
        y, sample_weight, classes
            As for :meth:`from_data`.

        Raises
        ------
        ValueError
            If the columns are not 1-D arrays of one length, or a label is
            not among ``classes``.
        """
        cols = [np.asarray(col) for col in columns]
        if not cols:
            raise ValueError("columns must hold at least one feature; got none.")
        n = cols[0].shape[0] if cols[0].ndim == 1 else -1
        bad = next((j for j, col in enumerate(cols) if col.ndim != 1 or col.shape[0] != n), None)
        if bad is not None:
            raise ValueError(
                f"columns must be 1-D arrays of one length; column {bad} has shape "
                f"{cols[bad].shape}, column 0 {cols[0].shape}."
            )
        kinds = {col.dtype for col in cols}
        if sample_weight is None and n and len(kinds) == 1 and cols[0].dtype.kind == "f":
            yv = np.asarray(y)
            if yv.shape != (n,):
                raise ValueError(f"y must have one label per row ({n}); got shape {yv.shape}.")
            c = as_classes(yv if classes is None else classes)
            done = _unit_pass(None, cols, encode(yv, c), c)
            if done is not None:
                return done
        X = np.empty((n, len(cols)), dtype=np.result_type(*kinds, np.float32), order="F")
        for j, col in enumerate(cols):
            X[:, j] = col
        return cls.from_data(X, y, sample_weight, classes=classes)

    def _merge_aligned(self, other: DiagonalStats) -> DiagonalStats:
        b = other
        return self._merge_arrays(b.counts, b.weights, b.feature_weights, b.means, b.m2)

    def _merge_arrays(
        self, nb: NDArray[np.int64], wb: _F, vb: _F, mb: _F, m2b: _F
    ) -> DiagonalStats:
        va, ma = self.feature_weights, self.means
        V = va + vb
        safe = np.where(V > 0, V, 1.0)
        delta = mb - ma
        mean = ma + delta * (vb / safe)
        cross = va * vb / safe
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow stays inf, for the fit
            # a part without weight adds nothing (not inf * 0 = NaN where delta**2 overflows)
            m2 = self.m2 + m2b + np.where(cross > 0, delta * delta * cross, 0.0)
        return DiagonalStats(
            classes=self.classes,
            counts=self.counts + nb,
            weights=self.weights + wb,
            feature_weights=V,
            means=mean,
            m2=m2,
        )

    def _subtract_aligned(self, other: DiagonalStats) -> DiagonalStats:
        V, mean, m2 = downdate_moments(
            self.feature_weights,
            self.means,
            self.m2,
            other.feature_weights,
            other.means,
            other.m2,
            classes=self.classes,
        )
        return DiagonalStats(self.classes, self.counts, self.weights, V, mean, m2)

    @property
    def n_features(self) -> int:
        return int(self.means.shape[1])

    def variances(self, ddof: float = 0.0) -> _F:
        """Per-class, per-feature variances ``M2 / (V - ddof)``; NaN where undefined."""
        denom = self.feature_weights - ddof
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(denom > 0, self.m2 / np.where(denom > 0, denom, 1.0), np.nan)

    def pooled_variances(self, ddof: float = 1.0) -> _F:
        """Per-feature pooled within-class variance ``sum_k M2_k / (sum_k V_k - ddof K)``."""
        k = (self.feature_weights > 0).sum(axis=0)
        denom = self.feature_weights.sum(axis=0) - ddof * k
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(
                denom > 0, self.m2.sum(axis=0) / np.where(denom > 0, denom, 1.0), np.nan
            )

    def _close(self, other: DiagonalStats, rtol: float, atol: float) -> bool:
        return (
            arrays_close(self.weights, other.weights, rtol, atol)
            and arrays_close(self.feature_weights, other.feature_weights, rtol, atol)
            and arrays_close(self.means, other.means, rtol, atol)
            and arrays_close(
                self.m2, other.m2, rtol, atol, noise_floor(self.weights, self.means, 2)
            )
        )


def _unit_pass(
    X: NDArray[Any] | None,
    columns: list[NDArray[Any]] | None,
    yi: NDArray[np.intp],
    c: NDArray[Any],
) -> DiagonalStats | None:
    """The statistics of rows of unit weight by :func:`_unit_moments`; None if not all finite.

    The rows are split in ranges, one per thread, each summarised a slice
    at a time (a slice's class-ordered copy stays small), the slices merged
    in order. ``columns`` (one 1-D array per feature) when the features are
    held column by column, else the rows of ``X``.
    """
    n = len(yi)
    p = len(columns) if columns is not None else int(X.shape[1])  # type: ignore[union-attr]

    def unit_part(rows: tuple[int, int]) -> tuple[DiagonalStats, tuple[_F, _F]] | None:
        part, part_bounds = DiagonalStats.empty(c, p), empty_bounds(p)
        work = _Workspace()
        for sl in _unit_slices(columns is not None, rows[1] - rows[0], p):
            sl = slice(rows[0] + sl.start, rows[0] + sl.stop)
            if columns is not None:
                got = _unit_moments_by_columns([col[sl] for col in columns], yi[sl], c.size, work)
            else:
                got = _unit_moments(X[sl], yi[sl], c.size, work)  # type: ignore[index]
            if got is None:
                return None  # a NaN or infinity: the general path
            part = part._merge_arrays(*got[:5])
            part_bounds = union_bounds(part_bounds, got[5])
        return part, part_bounds

    cost = float(n) * p * RESIDUAL_MADDS
    parts = in_parallel(unit_part, row_ranges(n, cost), cost)
    if not all(part is not None for part in parts):
        return None
    out, bounds = DiagonalStats.empty(c, p), empty_bounds(p)
    for done in parts:
        assert done is not None
        out, bounds = out.merge(done[0]), union_bounds(bounds, done[1])
    return out.with_bounds(*bounds)


def _block_moments(
    X: NDArray[Any], yi: NDArray[np.intp], w: _F, k: int
) -> tuple[NDArray[np.int64], _F, _F, _F, _F, tuple[_F, _F]]:
    """Counts, weights, observed weights, means and M2 of a block; and its feature range."""
    given = X
    X = np.asarray(X, dtype=np.float64)
    H = class_matrix(yi, w, k)
    counts, weights = class_totals(yi, w, k)
    sums = _class_sums(H, X)
    if np.isnan(sums).any():
        # missing entries (NaN) in this block: split them out
        bounds = block_bounds(given, w)
        observed = ~np.isnan(X)
        X = np.where(observed, X, 0.0)
        V = _class_sums(H, observed.astype(np.float64))
        sums = _class_sums(H, X)
    else:
        # the common case: every feature observed with the rows' whole weight
        observed = None
        V = np.repeat(weights[:, None], X.shape[1], axis=1)
    safe = np.where(V > 0, V, 1.0)
    means = np.where(V > 0, sums / safe, 0.0)
    if observed is not None:
        D = X - means[yi]
        D *= observed
        np.multiply(D, D, out=D)
    else:
        # squared residuals chunk by chunk, each while it is in cache (no
        # block-sized gather of the means), into the float64 copy of X when
        # there is one; the range is taken from each chunk as it is read
        n, p = X.shape
        copied = not (isinstance(given, np.ndarray) and np.may_share_memory(X, given))
        D = X if copied else np.empty_like(X)
        fold = FoldedRange(p)
        if _feature_major(X):
            # columns in memory (as read from Parquet): the same, feature by feature
            _squared_residuals_by_column(X.T, means.T, yi, D.T, fold.bounds)
        else:
            for s, e, chunk in fold.chunks(X, 0, n):
                out = D[s:e]
                np.subtract(chunk, means[yi[s:e]], out=out)
                np.multiply(out, out, out=out)
        bounds = fold.settled(given, w)
    m2 = _class_sums(H, D)
    return counts, weights, V, means, m2, bounds


#: the cost of the unit-weight pass per value, in multiply-adds, for the thread budget
RESIDUAL_MADDS = 8


class _Workspace:
    """Buffers reused by the blocks of one thread's rows (see :func:`_unit_moments`).

    Fresh block-sized temporaries would be page-faulted in for every block
    where the allocator hands freed memory straight back to the system (as
    Dask's workers have it set, ``MALLOC_TRIM_THRESHOLD_``), which costs as
    much as the pass itself.
    """

    def __init__(self) -> None:
        self.held: dict[str, NDArray[Any]] = {}

    def get(self, name: str, size: int, dtype: Any) -> NDArray[Any]:
        buf = self.held.get(name)
        if buf is None or buf.size < size or buf.dtype != dtype:
            # within a streamed pass, the thread's own array from the block before
            buf = self.held[name] = scratch_array(f"diagonal-{name}", (size,), dtype)
        return buf[:size]


def _unit_moments(
    X: NDArray[Any], yi: NDArray[np.intp], k: int, work: _Workspace | None = None
) -> tuple[NDArray[np.int64], _F, _F, _F, _F, tuple[_F, _F]] | None:
    """The moments of rows of unit weight, the classes summed apart: None if X is not finite.

    The rows are put in class order (one gather, in X's own dtype, so that
    float32 blocks read from files are gathered at half the cost), and each
    class's rows are then summed, centred and squared a class at a time, in
    float64 (a float32 value's square is exact in float64): the exact
    two-pass moments, with no (classes x rows) product and no gather of the
    means. X laid out by columns (F order, as read from Parquet) has a pass
    of its own, :func:`_unit_moments_by_columns`. A block holding NaN or
    infinity gives None; the caller takes the general path, which splits
    missing values out. The gathered rows and the residuals live in
    ``work``'s buffers.
    """
    n, p = X.shape
    work = work if work is not None else _Workspace()
    if _by_columns(X):
        return _unit_moments_by_columns(list(X.T), yi, k, work)
    order = np.argsort(yi, kind="stable")
    edges = np.searchsorted(yi[order], np.arange(k + 1))
    counts = np.diff(edges).astype(np.int64)
    weights = counts.astype(np.float64)
    means = np.zeros((k, p))
    m2 = np.zeros((k, p))
    # the rows in class order (mode='clip': the indices are valid, and take
    # then writes to `out` directly)
    Xs = work.get("rows", n * p, X.dtype).reshape(n, p)
    np.take(X, order, axis=0, out=Xs, mode="clip")
    lo = Xs.min(axis=0).astype(np.float64)
    hi = Xs.max(axis=0).astype(np.float64)
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        return None
    residuals = work.get("residuals", int(counts.max()) * p, np.float64)  # the largest class
    for j in np.flatnonzero(counts).tolist():
        a, b = int(edges[j]), int(edges[j + 1])
        seg = Xs[a:b]
        mean = seg.sum(axis=0, dtype=np.float64) / weights[j]
        R = residuals[: seg.size].reshape(seg.shape)
        np.subtract(seg, mean, out=R)
        np.multiply(R, R, out=R)
        means[j] = mean
        m2[j] = R.sum(axis=0)
    V = np.repeat(weights[:, None], p, axis=1)
    return counts, weights, V, means, m2, (lo, hi)


#: rows a block laid out by columns is summarised in at once by :func:`_unit_moments`
COLUMN_BLOCK_ROWS = 1 << 16


def _unit_slices(by_columns: bool, n: int, p: int) -> Any:
    """The row slices :func:`_unit_moments` takes in turn.

    Rows laid out by columns are taken in slices of up to
    ``COLUMN_BLOCK_ROWS`` rows: their pass works a few columns at a time
    (:func:`_unit_moments_by_columns`), so its buffers stay small whatever
    the slice, and fewer slices mean fewer merges and class orderings.
    """
    if by_columns:
        return (slice(s, min(s + COLUMN_BLOCK_ROWS, n)) for s in range(0, n, COLUMN_BLOCK_ROWS))
    return block_slices(n, p)


def _by_columns(X: NDArray[Any]) -> bool:
    """Whether ``X`` (or a slice of its rows) has each feature's values contiguous, p > 1."""
    return bool(X.shape[1] > 1 and X.strides[0] == X.itemsize and X.strides[1] > X.strides[0])


#: bytes of float64 values a group of columns takes in :func:`_unit_moments_by_columns`:
#: the group's gathered values and residuals stay in cache between passes. Measured
#: on 2-core AMD EPYC (1 MB of L2 a core, 32 MB of L3), 20,000-65,536 rows of 256-784
#: float32 columns, one or two processes at once: 2-4 MB groups 4-6 % faster than 1 MB
#: (fewer NumPy calls a block), 8 MB slower again
GROUP_BYTES = 2 << 20


def _unit_moments_by_columns(
    columns: Sequence[NDArray[Any]], yi: NDArray[np.intp], k: int, work: _Workspace
) -> tuple[NDArray[np.int64], _F, _F, _F, _F, tuple[_F, _F]] | None:
    """:func:`_unit_moments` of rows held column by column (one 1-D array per feature).

    The columns of an F-ordered block, or the column buffers of an Arrow
    record batch as they were read (:meth:`DiagonalStats.from_columns`).

    The same exact two-pass moments, computed a few columns at a time so
    that each group's values, gathered in class order (one radix sort of
    the class codes per block) after each column's range is read from it,
    and its residuals stay in cache through the passes that follow: the
    values in float64, their class
    sums (one segmented reduction, ``np.add.reduceat``), the residuals
    (each class's segment less its mean, in place), their squares and
    their class sums. None when the block holds NaN or infinity.
    """
    n, p = len(yi), len(columns)
    order = np.argsort(class_codes(yi, k), kind="stable")
    counts = np.bincount(yi, minlength=k)[:k].astype(np.int64)
    edges = np.concatenate(([0], np.cumsum(counts)))
    weights = counts.astype(np.float64)
    present = np.flatnonzero(counts)
    starts = edges[present]
    held = weights[present]
    spans = [(int(edges[j]), int(edges[j + 1])) for j in present.tolist()]
    means = np.zeros((k, p))
    m2 = np.zeros((k, p))
    lo = np.empty(p)
    hi = np.empty(p)
    g = max(1, min(p, GROUP_BYTES // (8 * max(n, 1))))
    gathered = work.get("gathered", g * n, columns[0].dtype).reshape(g, n)
    residuals = work.get("residuals", g * n, np.float64).reshape(g, n)
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite: None below
        for a in range(0, p, g):
            b = min(p, a + g)
            G, R = gathered[: b - a], residuals[: b - a]
            for i in range(a, b):
                lo[i], hi[i] = gather_column(columns[i], order, G[i - a])
            R[...] = G
            mean = np.add.reduceat(R, starts, axis=1)
            mean /= held
            for q, (s, e) in enumerate(spans):
                np.subtract(R[:, s:e], mean[:, q : q + 1], out=R[:, s:e])
            np.multiply(R, R, out=R)
            means[present, a:b] = mean.T
            m2[present, a:b] = np.add.reduceat(R, starts, axis=1).T
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        return None  # a NaN or infinity: the general path
    V = np.repeat(weights[:, None], p, axis=1)
    return counts, weights, V, means, m2, (lo, hi)


def _class_sums(H: Any, A: _F) -> _F:
    """``H @ A``: per-class sums of the rows of ``A`` (``H`` the class matrix).

    For a feature-major ``A`` (F order) as ``(A' H')'``, the form the BLAS
    runs fast on such an array.
    """
    if _feature_major(A):
        return np.ascontiguousarray(np.asarray(A.T @ H.T).T)
    return np.asarray(H @ A)


def _squared_residuals_by_column(
    XT: _F, MT: _F, yi: NDArray[np.intp], DT: _F, folded: tuple[_F, _F]
) -> None:
    """``DT = (XT - MT[:, yi])**2`` for a feature-major ``XT`` (p, n), a few features at a time.

    Each group of features is reduced to its range and its squared residuals
    while it is in cache; ``folded`` is widened in place by the range.
    """
    p, n = XT.shape
    group = max(1, CHUNK_VALUES // max(n, 1))
    lo, hi = folded
    for a in range(0, p, group):
        b = min(p, a + group)
        rows = XT[a:b]
        if n:
            np.minimum(lo[a:b], rows.min(axis=1), out=lo[a:b])
            np.maximum(hi[a:b], rows.max(axis=1), out=hi[a:b])
        out = DT[a:b]
        np.subtract(rows, np.take(MT[a:b], yi, axis=1), out=out)
        np.multiply(out, out, out=out)


def _feature_major(X: Any) -> bool:
    """Whether ``X`` is a NumPy array laid out column by column (F order, not also C)."""
    flags = getattr(X, "flags", None)
    return bool(flags is not None and flags.f_contiguous and not flags.c_contiguous)

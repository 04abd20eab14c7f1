"""Per-class weighted means with one pooled within-class scatter: LDA's statistic."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._util.parallel import in_parallel
from ._base import ClassStatistic
from ._bounds import (
    FoldedRange,
    block_bounds,
    empty_bounds,
    feature_bounds,
    union_bounds,
)
from ._common import (
    BLOCK_VALUES,
    Rows,
    StatisticsError,
    arrays_close,
    as_classes,
    class_totals,
    downdate_scatter,
    encode,
    noise_floor,
    one_hot_classes,
    origin_cancellation,
    pilot_means,
    row_ranges,
    scratch_array,
    syrk_add,
)
from ._common import (
    Floats as _F,
)
from ._moments import class_codes, feature_major, gather_column, pooled_covariance
from ._scatter import ScatterStats, checked_columns
from .schema import per_class, shared

__all__ = ["PooledScatterStats"]


#: Largest ``sum_i x_ij^2 / S_jj`` (raw over within-class sum of squares of a
#: column) for which the scatter may be taken about the origin: the
#: cancellation then costs at most three of the sixteen digits.
ORIGIN_CANCELLATION = 1e3


@dataclass(frozen=True, eq=False, repr=False)
class PooledScatterStats(ClassStatistic):
    r"""Per-class weights and means, and the pooled within-class scatter.

    ``scatter = sum_k sum_{i in k} w_i (x_i - m_k)(x_i - m_k)'``. This is all a
    shared-covariance model (LDA) needs; it takes ``K`` times less memory than
    :class:`ScatterStats` and is computed with one symmetric product per block
    of rows, in the rows' own order.

    Laws as for :class:`ScatterStats` (see :class:`~bayesrule.stats.Statistic`),
    subtraction included. ``merge`` also takes :class:`ScatterStats` (as its
    pooled form, :meth:`from_scatter`); ``ScatterStats.merge`` does not take
    these (a class's own scatter cannot be recovered). Merging two values updates each class mean by the
    Chan-Golub-LeVeque rule and adds, for every class, the between-parts term
    ``(W_a W_b / W) d d'`` (``d`` the difference of the two parts' class means)
    to the scatter — one matrix product for all classes; ``subtract`` removes
    the same terms again (:func:`~bayesrule.stats._common.downdate_moments`).

    It cannot give the Ledoit-Wolf shrinkage intensity, which needs per-class
    fourth moments; :class:`ScatterStats` holds those, and LDA uses it.

    Attributes
    ----------
    classes, counts, weights
        As in every statistic (see :class:`Statistic`).
    means : ndarray of shape (n_classes, n_features)
    scatter : ndarray of shape (n_features, n_features)
    """

    means: _F = field(metadata=per_class("K", "p"))
    scatter: _F = field(metadata=shared("p", "p"))

    @classmethod
    def _from_rows(cls, rows: Rows) -> PooledScatterStats:
        """Statistics of one data set (as :class:`ScatterStats`).

        One pass of symmetric products over blocks ``[X - C, H]`` (``C`` the
        rows' class centres, ``H`` their one-hot codes) gives the scatter about
        the centres and the residual sums that correct it exactly. Where a
        sample shows that ``X``'s columns are not far from the origin against
        their within-class spread, the centres are zero and the blocks are
        plain copies of ``X``; the finished sums are then checked exactly
        (see :data:`ORIGIN_CANCELLATION`), and in the rare case that fails the
        pass is repeated about pilot class means, as it always is for data far
        from the origin. Both give the same statistics to rounding.
        """
        X, c, yi, w, unit = rows
        k = c.size
        if origin_cancellation(X, yi, w, k) <= ORIGIN_CANCELLATION / 10:
            counts, weights = class_totals(yi, w, k)
            stats = _pooled_products(X, c, yi, w, unit, counts, weights, None)
            if stats is not None:
                return stats
        counts, weights, centres = pilot_means(X, yi, w, k)
        stats = _pooled_products(X, c, yi, w, unit, counts, weights, centres)
        assert stats is not None  # about pilot means nothing is checked
        return stats

    @classmethod
    def from_columns(
        cls, columns: Sequence[Any], y: Any, *, classes: Any = None
    ) -> PooledScatterStats:
        """The statistics of unit-weight rows whose features are ``columns``, one array per feature.

        Equal (to rounding) to ``from_data(X, y, classes=classes)`` with ``X``
        the columns side by side. A source that holds its features column by
        column (Arrow's record batches, read from Parquet) hands its buffers
        over as they are; each column is gathered once, in class order, into
        one feature-major array (:func:`~._common.scratch_array`: within a
        streamed pass, the thread's reused one), its range taken while it is
        in cache, and the products run on blocks of one class each, which
        leave out the features the class never uses (zero in all its rows of
        the block; see :func:`_feature_major_part`).

        Parameters
        ----------
        columns : sequence of ndarray of shape (n_samples,)
            The features: 1-D float arrays of one dtype (float32 or float64)
            and one length.
        y, classes
            As for :meth:`from_data`.

        Raises
        ------
        ValueError
            If the columns are not 1-D float arrays of one dtype and length,
            there are none, or a label is not among ``classes``.
        """
        cols, y_arr = checked_columns(columns, y)
        n, p = y_arr.shape[0], len(cols)
        c = as_classes(y_arr if classes is None else classes)
        k = c.size
        yi = encode(y_arr, c)
        order = np.argsort(class_codes(yi, k), kind="stable")
        ys = yi[order]
        ones = np.ones(n)
        # the rows in class order, feature by feature: (p, n), whose transpose is the
        # block laid out feature-major (F order) with its rows sorted by class
        gathered = scratch_array("class_ordered", (p, n), cols[0].dtype)
        lo, hi = empty_bounds(p)
        for j, col in enumerate(cols):
            lo[j], hi[j] = gather_column(col, order, gathered[j])
        X = gathered.T
        if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
            lo, hi = feature_bounds(X)  # NaN or infinity: the ranges of the finite values
        rows = Rows(X, c, ys, ones, True)
        if n == 0:
            return cls._from_rows(rows)
        counts, weights = class_totals(ys, ones, k)
        if origin_cancellation(X, ys, ones, k) <= ORIGIN_CANCELLATION / 10:
            stats = _pooled_products(X, c, ys, ones, True, counts, weights, None, (lo, hi))
            if stats is not None:
                return stats
        counts, weights, centres = pilot_means(X, ys, ones, k)
        stats = _pooled_products(X, c, ys, ones, True, counts, weights, centres, (lo, hi))
        assert stats is not None  # about pilot means nothing is checked
        return stats

    @classmethod
    def from_scatter(cls, stats: Any) -> PooledScatterStats:
        """The pooled form of per-class statistics (:class:`ScatterStats` or an extension).

        Exact: the pooled scatter is the sum of the classes' own; classes,
        counts, weights, means and feature ranges are kept.
        """
        if isinstance(stats, PooledScatterStats):
            return stats
        if not isinstance(stats, ScatterStats):
            raise StatisticsError(
                f"PooledScatterStats.from_scatter takes ScatterStats; got {type(stats).__name__}."
            )
        return PooledScatterStats(
            classes=stats.classes,
            counts=stats.counts,
            weights=stats.weights,
            means=stats.means,
            scatter=stats.scatter.sum(axis=0),
            lower=stats.lower,
            upper=stats.upper,
        )

    def _common_form(self, other: Any) -> tuple[Any, Any]:
        # per-class statistics merge into pooled ones as their pooled form (exact);
        # the other way round is refused (a class's own scatter cannot be recovered)
        if isinstance(other, ScatterStats):
            return self, PooledScatterStats.from_scatter(other)
        return self, other

    def _merge_aligned(self, other: PooledScatterStats) -> PooledScatterStats:
        a, b, c = self, other, self.classes
        W = a.weights + b.weights
        safe = np.where(W > 0, W, 1.0)
        delta = b.means - a.means
        mean = a.means + delta * (b.weights / safe)[:, None]
        scaled = delta * np.sqrt(a.weights * b.weights / safe)[:, None]
        return PooledScatterStats(
            classes=c,
            counts=a.counts + b.counts,
            weights=W,
            means=mean,
            scatter=a.scatter + b.scatter + scaled.T @ scaled,
        )

    def _subtract_aligned(self, other: PooledScatterStats) -> PooledScatterStats:
        # the merge run backwards: S_A = S_C - S_B - sum_k (W_Ak W_Bk / W_Ck) d_k d_k'
        W_A, m_A, scatter = downdate_scatter(self, other)
        return PooledScatterStats(
            classes=self.classes,
            counts=self.counts,
            weights=W_A,
            means=m_A,
            scatter=scatter,
        )

    @property
    def n_features(self) -> int:
        return int(self.means.shape[1])

    def pooled_covariance(self, ddof: float = 1.0) -> _F:
        """Pooled within-class covariance ``S_w / (W - ddof * K)`` (K: classes with weight)."""
        return pooled_covariance(self.scatter, self.weights, ddof)

    def _close(self, other: PooledScatterStats, rtol: float, atol: float) -> bool:
        return (
            arrays_close(self.weights, other.weights, rtol, atol)
            and arrays_close(self.means, other.means, rtol, atol)
            and arrays_close(
                self.scatter, other.scatter, rtol, atol, noise_floor(self.weights, self.means, 2)
            )
        )


def _pooled_products(
    X: Any,
    c: NDArray[Any],
    yi: NDArray[np.intp],
    w: _F,
    unit: bool,
    counts: NDArray[np.int64],
    weights: _F,
    centres: _F | None,
    known: tuple[_F, _F] | None = None,
) -> PooledScatterStats | None:
    """The statistics from one pass of products about ``centres``.

    ``centres`` are per-class rows (pilot means), or ``None`` for the origin;
    for the origin the result is ``None`` when the cancellation check fails.
    ``known``: the rows' feature range, when the caller took it along its own
    pass (a feature-major ``X`` then skips it).
    """
    n, p = X.shape
    k = c.size
    # When there are few classes, the per-class residual sums ride along in
    # the symmetric product: with the (weighted) one-hot columns H appended
    # to the centred block D, syrk([D H]) holds D'D and D'H together.
    fuse = k <= max(8, p // 8)
    q = p + k if fuse else p
    # feature-major X (F order: Arrow's columns side by side, as read from Parquet):
    # each block is built transposed (see _feature_major_part)
    columns = feature_major(X)

    def part(rows: tuple[int, int]) -> tuple[_F, _F, tuple[_F, _F]]:
        lo, hi = rows
        step = max(64, BLOCK_VALUES // max(q, 1))
        if columns:
            return _feature_major_part(X, yi, w, unit, centres, k, fuse, (lo, hi), step, known)
        acc = np.zeros((q, q))
        s1 = np.zeros((k, p))
        bounds = empty_bounds(p)
        buf = np.empty((min(step, hi - lo), q))
        for s in range(lo, hi, step):
            e = min(s + step, hi)
            D, yb = buf[: e - s], yi[s:e]
            # the block is copied (or centred) chunk by chunk, each chunk's
            # feature range taken as it is read
            fold = FoldedRange(p)
            for a, b, chunk in fold.chunks(X, s, e):
                if centres is None:
                    D[a - s : b - s, :p] = chunk
                else:
                    np.subtract(chunk, centres[yi[a:b]], out=D[a - s : b - s, :p])
            block = fold.settled(X[s:e], None if unit else w[s:e])
            bounds = union_bounds(bounds, block)
            if fuse:
                D[:, p:] = 0.0
                D[np.arange(e - s), p + yb] = 1.0
            else:
                s1 += one_hot_classes(yb, w[s:e], k) @ D
            if not unit:
                D *= np.sqrt(w[s:e])[:, None]
            syrk_add(D, acc)
        return acc, s1, bounds

    work = float(n) * q * q / 2
    parts = in_parallel(part, row_ranges(n, work), work)
    full = sum(a for a, _, _ in parts[1:]) + parts[0][0]
    s1 = sum(b for _, b, _ in parts[1:]) + parts[0][1]
    bounds = empty_bounds(p)
    for _, _, b in parts:
        bounds = union_bounds(bounds, b)
    if known is not None:
        bounds = known
    if fuse:
        s1 = full[p:, :p]
    about = full[:p, :p]
    # Remove the offset of the centres from the means exactly:
    # S = S_about_c - sum_k W_k d_k d_k' with d_k = s1_k / W_k.
    d = s1 / np.where(weights > 0, weights, 1.0)[:, None]
    root = np.sqrt(weights)[:, None]
    scatter = about - (d * root).T @ (d * root)
    if centres is None:
        # sum w x^2 <= ORIGIN_CANCELLATION * S_jj for every column bounds the
        # error of every entry by about ORIGIN_CANCELLATION * eps * sqrt(S_ii S_jj).
        raw, within = np.diag(about), np.diag(scatter)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(raw == 0.0, 1.0, raw / within)
        # (the ratio is at least 1 in exact arithmetic; a hair below is rounding)
        if not bool(np.all((ratio > 0.0) & (ratio <= ORIGIN_CANCELLATION))):
            return None
        means = d
    else:
        means = centres + d
    means = np.where(weights[:, None] > 0, means, 0.0)  # no weight: the empty statistic
    return PooledScatterStats(
        classes=c,
        counts=counts,
        weights=weights,
        means=means,
        scatter=scatter,
        lower=bounds[0],
        upper=bounds[1],
    )


def _feature_major_part(
    X: Any,
    yi: NDArray[np.intp],
    w: _F,
    unit: bool,
    centres: _F | None,
    k: int,
    fuse: bool,
    rows: tuple[int, int],
    step: int,
    known: tuple[_F, _F] | None = None,
) -> tuple[_F, _F, tuple[_F, _F]]:
    """``(D'D, residual sums, feature range)`` of the rows ``lo:hi`` of a feature-major ``X``.

    The part of :func:`_pooled_products` for ``X`` in F order (Arrow's
    columns side by side, as read from Parquet): each block of at most
    ``step`` rows is built transposed, ``[X - C, H]'`` (one contiguous row
    per feature, copied from its column), and ``D'D = (D')(D')'`` is the
    same symmetric product. A feature that is zero in every row of the
    block, and whose centre is zero in every class, and a class without a
    row in it, add exactly nothing to any sum: the block leaves them out
    (their rows and columns of ``D'D`` stay as they were), as
    :func:`~._moments.moments_about` leaves out a class's zero columns.
    NaN and infinity are not zero, so they always reach the sums. Rows in
    class order (:meth:`PooledScatterStats.from_columns`) are cut into
    blocks of one class each, which leave out the features that class
    never uses. ``known``: the rows' feature range (not taken again).
    """
    p = X.shape[1]
    q = p + k if fuse else p
    acc = np.zeros((q, q))
    s1 = np.zeros((k, p))
    bounds = empty_bounds(p) if known is None else known
    XT = X.T  # (p, n), C order: a feature's values are contiguous
    # a feature with a non-zero centre has a residual in every row
    centred = np.zeros(p, dtype=bool) if centres is None else np.any(centres != 0, axis=0)
    edges = _sub_blocks(yi, rows, step)
    most = max((e - s for s, e in edges), default=0)
    flat = np.empty(most * q)
    picked = np.empty(most * p, dtype=X.dtype)
    for s, e in edges:
        block, yb = X[s:e], yi[s:e]
        if known is None:
            bounds = union_bounds(bounds, block_bounds(block, None if unit else w[s:e]))
        live = np.flatnonzero(np.any(block != 0, axis=0) | centred)
        present = np.flatnonzero(np.bincount(yb, minlength=k)) if fuse else live[:0]
        m = live.size
        width = m + present.size
        DT = flat[: (e - s) * width].reshape(width, e - s)  # contiguous: syrk
        if m == p:
            source = XT[:, s:e]
        else:
            source = picked[: (e - s) * m].reshape(m, e - s)
            np.take(XT[:, s:e], live, axis=0, out=source, mode="clip")
        if centres is None:
            np.copyto(DT[:m], source)
        else:
            np.subtract(source, centres[yb][:, live].T, out=DT[:m])
        if fuse:
            DT[m:] = 0.0
            DT[m + np.searchsorted(present, yb), np.arange(e - s)] = 1.0
        else:
            s1[:, live] += np.asarray(one_hot_classes(yb, w[s:e], k) @ DT.T)
        if not unit:
            DT *= np.sqrt(w[s:e])[None, :]
        product = np.dot(DT, DT.T)
        if width == q:
            acc += product
        else:
            # added at the live rows and columns through flat indices (a third of the
            # cost of ``acc[np.ix_(at, at)] += product``)
            at = np.concatenate([live, p + present])
            acc.reshape(-1)[(at[:, None] * q + at).reshape(-1)] += product.reshape(-1)
    return acc, s1, bounds


def _sub_blocks(yi: NDArray[np.intp], rows: tuple[int, int], step: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of the blocks of the rows ``lo:hi``: at most ``step`` rows each, about
    equal; where the labels are in class order, each class's rows apart."""
    lo, hi = rows
    seg = yi[lo:hi]
    runs = [lo, hi]
    if seg.size > 1 and bool(np.all(seg[1:] >= seg[:-1])):
        runs = [lo, *(lo + 1 + np.flatnonzero(seg[1:] != seg[:-1])).tolist(), hi]
    edges: list[tuple[int, int]] = []
    for a, b in zip(runs[:-1], runs[1:], strict=True):
        cuts = np.linspace(a, b, -(-(b - a) // step) + 1).astype(int).tolist()
        edges.extend(zip(cuts[:-1], cuts[1:], strict=True))
    return edges

"""Per-class weighted means and centred scatter matrices: a mergeable statistic."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._util.parallel import in_parallel
from ._base import ClassStatistic
from ._bounds import feature_bounds
from ._common import (
    BLOCK_VALUES,
    NEGATIVE_MOMENT,
    PROBE_ROWS,
    StatisticsError,
    arrays_close,
    class_matrix,
    class_totals,
    downdate_moments,
    label_repr,
    noise_floor,
    one_hot_classes,
    prepare,
    row_ranges,
    syrk_add,
)
from .schema import per_class

__all__ = ["ScatterStats"]

_F = NDArray[np.float64]


def _shift_higher(
    W: _F, tr: _F, Sd: _F, M3: _F, M4: _F, d: _F, s1: _F | None = None
) -> tuple[_F, _F]:
    """Re-centre ``M3`` and ``M4`` from residuals ``r`` to ``r - d``, from ``tr(S)`` and ``S d``.

    ``s1 = sum w r`` is zero when ``r`` is centred at the weighted mean (the
    default). With ``c = |d|^2``:
    ``M3' = M3 - tr(S) d - 2 S d + 2 (d.s1) d + c s1 - c W d`` and
    ``M4' = M4 - 4 d.M3 + 4 d'Sd + 2 c tr(S) + c^2 W - 4 c (d.s1)``; the
    scatter itself becomes ``S - d s1' - s1 d' + W d d'``.
    """
    c = np.einsum("kp,kp->k", d, d)
    M3_new = M3 - (tr + c * W)[:, None] * d - 2.0 * Sd
    M4_new = (
        M4
        - 4.0 * np.einsum("kp,kp->k", d, M3)
        + 4.0 * np.einsum("kp,kp->k", d, Sd)
        + 2.0 * c * tr
        + c * c * W
    )
    if s1 is not None:
        ds1 = np.einsum("kp,kp->k", d, s1)
        M3_new += 2.0 * ds1[:, None] * d + c[:, None] * s1
        M4_new -= 4.0 * c * ds1
    return M3_new, M4_new


def _matvec(S: _F, d: _F) -> _F:
    """``S_k d_k`` for every class, shape (k, p).

    einsum, not a batched ``matmul``: stacked matrix-vector products go to
    the BLAS one gemv at a time, and a multi-threaded gemv of this size is
    about ten times slower than einsum's loop (threads wake for little work).
    """
    return np.einsum("kpq,kq->kp", S, d)


def _add_outer(S: _F, f: _F, a: _F, b: _F, out: _F | None = None) -> _F:
    """``S_k + f_k a_k b_k'`` for every class.

    With many features, one class at a time (no ``k p^2`` temporary besides
    the result); ``out=S`` updates in place.
    """
    if out is None:
        out = S.copy()
    if a.shape[1] < 64:
        out += f[:, None, None] * a[:, :, None] * b[:, None, :]
        return out
    for k in np.flatnonzero(f * np.any(a != 0, axis=1) * np.any(b != 0, axis=1)).tolist():
        out[k] += np.outer(f[k] * a[k], b[k])
    return out


@dataclass(frozen=True, eq=False, repr=False)
class ScatterStats(ClassStatistic):
    r"""Per-class weighted sufficient statistics of a Gaussian with full covariance.

    For each class ``k`` with rows ``x_i`` and frequency weights ``w_i`` it holds
    the weight ``W_k = sum w_i``, the number of rows with positive weight, the
    mean ``m_k``, the centred scatter ``S_k = sum w_i (x_i - m_k)(x_i - m_k)'``,
    and two higher moments of the residual norm used by the Ledoit-Wolf
    shrinkage estimate, ``M3_k = sum w_i |r_i|^2 r_i`` and
    ``M4_k = sum w_i |r_i|^4`` (``r_i = x_i - m_k``).

    The statistics form a commutative monoid with subtraction (the laws of
    :class:`~bayesrule.stats.Statistic`):

    * ``ScatterStats.empty(classes, p)`` is the identity:
      ``s.merge(empty) == s``;
    * ``merge`` is associative and commutative;
    * ``from_data(A).merge(from_data(B)) == from_data(A ∪ B)``, and a row of
      integer weight ``w`` is the same as ``w`` copies of it;
    * ``from_data(A ∪ B).subtract(from_data(B)) == from_data(A)`` (a class
      left without rows becomes the empty statistic of that class).

    Merging uses the pairwise update of Chan, Golub and LeVeque (extended to
    ``M3`` and ``M4`` by re-centring each part at the merged mean), and
    subtracting runs the same update backwards, so nothing is ever computed
    from raw sums of squares. No hyperparameter (ddof, shrinkage,
    regularisation) lives here: estimates are derived on demand.

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
        Sorted class labels.
    counts : ndarray of shape (n_classes,), int64
        Rows seen with positive weight.
    weights : ndarray of shape (n_classes,)
        Sum of sample weights.
    means : ndarray of shape (n_classes, n_features)
    scatter : ndarray of shape (n_classes, n_features, n_features)
    m3 : ndarray of shape (n_classes, n_features)
    m4 : ndarray of shape (n_classes,)

    References
    ----------
    T. F. Chan, G. H. Golub and R. J. LeVeque, "Updating formulae and a
    pairwise algorithm for computing sample variances", COMPSTAT 1982.
    """

    means: _F = field(metadata=per_class("K", "p"))
    scatter: _F = field(metadata=per_class("K", "p", "p"))
    m3: _F = field(metadata=per_class("K", "p"))
    m4: _F = field(metadata=per_class("K"))

    #: works as fast on F-ordered (feature-major) blocks as on C-ordered ones
    #: from_data spreads one block's products over the threads itself (in_parallel),
    #: so a pass over blocks (fit_stream) takes them one at a time
    block_parallel = True
    column_major = True

    # -- construction ---------------------------------------------------------
    @classmethod
    def from_data(
        cls,
        X: Any,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        classes: ArrayLike | None = None,
    ) -> ScatterStats:
        """Statistics of one data set in a single blocked pass.

        The moments are accumulated about pilot class means (from a strided
        sample of rows) and then re-centred exactly at the class means with
        the residual sums accumulated alongside, so data far from the origin
        lose nothing.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite numbers; float32 is accepted, accumulation is float64.
        y : array-like of shape (n_samples,)
            Labels, each among ``classes`` when given.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative frequency weights (default: ones).
        classes : array-like, optional
            All class labels; defaults to the labels present in ``y``.
        """
        X, c, yi, w, unit = prepare(X, y, sample_weight, classes)
        counts, weights, centres = _pilot_centres(X, yi, w, c.size, unit)
        # a class's all-zero columns have mean exactly 0 and no residual
        dead = _zero_columns(X, yi, w, c.size)
        centres = np.where(dead, 0.0, centres)
        scatter, m3, m4, s1, _, _ = _moments_about(X, yi, w, centres, unit, dead)
        # The rounding error of the pilot centres, d = sum w r / W, is removed
        # exactly (this keeps every digit for data far from the origin).
        d = s1 / np.where(weights > 0, weights, 1.0)[:, None]
        m3, m4 = _shift_higher(
            weights, np.einsum("kpp->k", scatter), _matvec(scatter, d), m3, m4, d, s1
        )
        # S - d s1' - s1 d' + W d d' with s1 = W d: S - W d d', in place
        _add_outer(scatter, -weights, d, d, out=scatter)
        means = np.where(weights[:, None] > 0, centres + d, 0.0)  # no weight: the empty statistic
        m3 = np.where(weights[:, None] > 0, m3, 0.0)
        m4 = np.where(weights > 0, m4, 0.0)
        # the pass above visits rows in class order: the range is a pass of its own
        lo, hi = feature_bounds(X, None if unit else w)
        return cls(
            classes=c,
            counts=counts,
            weights=weights,
            means=means,
            scatter=scatter,
            m3=m3,
            m4=m4,
            lower=lo,
            upper=hi,
        )

    # -- monoid ---------------------------------------------------------------
    def _common_form(self, other: Any) -> tuple[Any, Any]:
        # a statistic with more moments (FourthMomentStats) merges with plain
        # ScatterStats as ScatterStats: what both hold, merged exactly
        if isinstance(other, ScatterStats) and type(other) is not type(self):
            if type(self) is ScatterStats:
                return self, other.scatter_stats()
            if type(other) is ScatterStats:
                return self.scatter_stats(), other
        return self, other

    def scatter_stats(self) -> ScatterStats:
        """These statistics as plain :class:`ScatterStats` (any further moments dropped)."""
        if type(self) is ScatterStats:
            return self
        return ScatterStats(**{f.name: getattr(self, f.name) for f in fields(ScatterStats)})

    def _merge_aligned(self, other: ScatterStats) -> ScatterStats:
        a, b = self, other
        W = a.weights + b.weights
        safe = np.where(W > 0, W, 1.0)
        delta = b.means - a.means
        mean = a.means + delta * (b.weights / safe)[:, None]
        # each part re-centred at the merged mean; the two rank-one terms of the
        # scatter combine into (W_a W_b / W) delta delta'
        M3a, M4a = _shift_higher(
            a.weights,
            _trace(a.scatter),
            _matvec(a.scatter, mean - a.means),
            a.m3,
            a.m4,
            mean - a.means,
        )
        M3b, M4b = _shift_higher(
            b.weights,
            _trace(b.scatter),
            _matvec(b.scatter, mean - b.means),
            b.m3,
            b.m4,
            mean - b.means,
        )
        scatter = np.add(a.scatter, b.scatter)
        _add_outer(scatter, a.weights * b.weights / safe, delta, delta, out=scatter)
        return ScatterStats(
            classes=self.classes,
            counts=a.counts + b.counts,
            weights=W,
            means=mean,
            scatter=scatter,
            m3=M3a + M3b,
            m4=M4a + M4b,
        )

    def _subtract_aligned(self, other: ScatterStats) -> ScatterStats:
        # C = self = A ∪ B, B = other. The scatter and mean by the backward
        # Chan update; M3 and M4 by running the merge backwards: B re-centred
        # at m_C is taken from C, which leaves A about m_C with residual sum
        # W_A (m_A - m_C); that is then re-centred at m_A.
        C, B = self, other
        W_A, m_A, scatter = downdate_moments(
            C.weights,
            C.means,
            C.scatter,
            B.weights,
            B.means,
            B.scatter,
            outer=True,
            classes=C.classes,
        )
        left = W_A > 0
        e = np.where(left[:, None], C.means - B.means, 0.0)  # B's shift to m_C
        d = np.where(left[:, None], m_A - C.means, 0.0)  # A's shift from m_C to m_A
        trB, SBe, SBd = _trace(B.scatter), _matvec(B.scatter, e), _matvec(B.scatter, d)
        M3_Bc, M4_Bc = _shift_higher(B.weights, trB, SBe, B.m3, B.m4, e)
        # B about m_C: S_B' = S_B + W_B e e'; so S_B' d and tr(S_B') from matvecs
        eB = (B.weights * np.einsum("kp,kp->k", e, d))[:, None] * e
        tr_Ac = _trace(C.scatter) - trB - B.weights * np.einsum("kp,kp->k", e, e)
        SAc_d = _matvec(C.scatter, d) - SBd - eB
        M3_A, M4_A = _shift_higher(
            W_A, tr_Ac, SAc_d, C.m3 - M3_Bc, C.m4 - M4_Bc, d, W_A[:, None] * d
        )
        # M4 is a sum of non-negative terms: clearly negative means B was not in C.
        # Its rounding residue is on the scale of the means' rounding, 1e-6 |m|
        # amplified by W_C / W_A (as in downdate_moments), to the fourth power
        # and times p (a class left with one row has M4 = 0 exactly).
        u = 1e-6 * np.maximum(np.abs(C.means), np.abs(B.means)).max(axis=1, initial=0.0)
        u = u * C.weights / np.where(left, W_A, 1.0)
        scale = np.abs(C.m4) + np.abs(M4_Bc) + C.weights * C.n_features * u**4
        bad = M4_A < -NEGATIVE_MOMENT * scale
        if np.any(bad):
            k = int(np.flatnonzero(bad)[0])
            raise StatisticsError(
                f"cannot subtract: the fourth moment of class {label_repr(C.classes[k])} would be "
                f"{M4_A[k]:g} (on a scale of {scale[k]:g}); the subtracted statistics are "
                "not part of these."
            )
        return ScatterStats(
            classes=C.classes,
            counts=C.counts - B.counts,
            weights=W_A,
            means=m_A,
            scatter=scatter,
            m3=np.where(left[:, None], M3_A, 0.0),
            m4=np.where(left, np.maximum(M4_A, 0.0), 0.0),
        )

    # -- derived estimates ----------------------------------------------------
    @property
    def n_features(self) -> int:
        return int(self.means.shape[1])

    def covariances(self, ddof: float = 1.0) -> _F:
        """Per-class covariances ``S_k / (W_k - ddof)``, shape (n_classes, p, p).

        Raises ValueError naming the class when ``W_k - ddof <= 0``.
        """
        denom = self.weights - ddof
        if np.any(denom <= 0):
            k = int(np.flatnonzero(denom <= 0)[0])
            raise ValueError(
                f"class {label_repr(self.classes[k])} has total weight {self.weights[k]:g} "
                f"({self.counts[k]} rows); at least {ddof + 1:g} is needed to estimate "
                "its covariance."
            )
        return self.scatter / denom[:, None, None]

    def pooled_scatter(self) -> _F:
        """Within-class scatter ``sum_k S_k``, shape (p, p)."""
        return self.scatter.sum(axis=0)

    def pooled_covariance(self, ddof: float = 1.0) -> _F:
        """Pooled within-class covariance ``sum_k S_k / (W - ddof * K)``.

        ``ddof=1`` gives the unbiased ``1 / (n - K)`` estimate and ``ddof=0`` the
        maximum-likelihood ``1 / n`` one. Only classes with positive weight count.
        """
        k = int(np.count_nonzero(self.weights > 0))
        denom = self.weights.sum() - ddof * k
        if denom <= 0:
            raise ValueError(
                f"the pooled covariance needs more weight than classes: total weight "
                f"{self.weights.sum():g} with {k} classes (the unbiased estimate divides by weight - classes); give rows more weight (sample_weight) or use bias=True."
            )
        return self.pooled_scatter() / denom

    def _close(self, other: ScatterStats, rtol: float, atol: float) -> bool:
        return (
            arrays_close(self.weights, other.weights, rtol, atol)
            and arrays_close(self.means, other.means, rtol, atol)
            and arrays_close(self.scatter, other.scatter, rtol, atol, self._floor(2))
            and self._m3_close(other, rtol, atol)
            and arrays_close(self.m4, other.m4, rtol, atol, self._floor(4))
        )

    def _floor(self, order: int) -> float:
        return noise_floor(self.weights, self.means, order)

    def _m3_close(self, other: ScatterStats, rtol: float, atol: float) -> bool:
        # M3 can vanish by symmetry, so compare it on its natural scale,
        # |M3_k| <= sqrt(M4_k tr(S_k)) (Cauchy-Schwarz), not on its own size.
        tr = _trace(self.scatter)
        scale = float(np.sqrt(np.max(np.abs(self.m4) * np.abs(tr), initial=0.0)))
        scale = max(scale, self._floor(3))
        return bool(np.all(np.abs(self.m3 - other.m3) <= atol + rtol * scale))


def _trace(S: _F) -> _F:
    return np.einsum("kpp->k", S)


def _zero_columns(X: NDArray[Any], yi: NDArray[np.intp], w: _F, k: int) -> NDArray[np.bool_]:
    """Per class, the columns that are exactly zero in every row of positive weight.

    Such a column has no residual in that class (its mean is exactly 0), so
    the class's products can leave it out: never-lit pixels, absent words
    and one-hot codes often make a class's products much smaller. A strided
    sample first shows whether any class could have such columns; most dense
    data have none, and then no pass is spent. The answer is exact:
    ``sum w |x| == 0`` holds only for zeros (NaN and infinity count as
    non-zero).
    """
    n, p = X.shape
    if not _maybe_zero_columns(X, yi, w):
        return np.zeros((k, p), dtype=bool)

    def part(bounds: tuple[int, int]) -> _F:
        lo, hi = bounds
        total = np.zeros((k, p))
        step = max(64, BLOCK_VALUES // max(p, 1))
        buf = np.empty((min(step, hi - lo), p))
        for s in range(lo, hi, step):
            e = min(s + step, hi)
            A = np.abs(X[s:e], out=buf[: e - s])
            total += class_matrix(yi[s:e], w[s:e], k) @ A
        return total

    work = float(n) * p * k
    with np.errstate(invalid="ignore", over="ignore"):
        total = sum(in_parallel(part, row_ranges(n, work), work))
    return np.asarray(total == 0.0)


#: Rows of each class (evenly strided among its rows) averaged for its pilot centre.
PILOT_PER_CLASS = 256


def _pilot_centres(
    X: NDArray[Any], yi: NDArray[np.intp], w: _F, k: int, unit: bool
) -> tuple[NDArray[np.int64], _F, _F]:
    """Rows with positive weight, weight sums, and provisional class centres.

    Like :func:`~bayesrule.stats._common.pilot_means`, but each class's centre
    is the weighted mean of at most ``PILOT_PER_CLASS`` of its own rows of
    positive weight (evenly strided), so that every class present has a
    centre of its own, however rare, and the cost does not grow with the
    rows: the moments are corrected exactly to the class means afterwards.
    A class without such rows gets 0 (its statistics are empty).
    """
    n, p = X.shape
    counts, weights = class_totals(yi, w, k)
    centres = np.zeros((k, p))
    order = np.argsort(yi, kind="stable")
    if not unit:
        order = order[w[order] > 0]
    if order.size == 0:
        return counts, weights, centres
    sorted_y = yi[order]
    bounds = np.searchsorted(sorted_y, np.arange(k + 1))
    step = np.maximum(1, np.diff(bounds) // PILOT_PER_CLASS)
    pos = np.arange(order.size) - bounds[sorted_y]
    take = pos % step[sorted_y] == 0
    rows, ys = order[take], sorted_y[take]
    ws = w[rows]
    sw = np.bincount(ys, weights=ws, minlength=k)
    present = sw > 0
    if _feature_major(X):
        # feature-major: the sample's columns, summed class by class (in class order)
        # taken in file order (one sweep over each column), then put in class order
        at = np.sort(rows)
        XsT = np.take(np.take(X.T, at, axis=1), np.argsort(yi[at], kind="stable"), axis=1)
        XsT = XsT.astype(np.float64)
        if not unit:
            XsT *= ws
        starts = np.flatnonzero(np.concatenate(([True], ys[1:] != ys[:-1])))
        centres[ys[starts]] = np.add.reduceat(XsT, starts, axis=1).T / sw[ys[starts], None]
        return counts, weights, centres
    sums = np.asarray(one_hot_classes(ys, ws, k) @ np.asarray(X[rows], dtype=np.float64))
    centres[present] = sums[present] / sw[present, None]
    return counts, weights, centres


def _maybe_zero_columns(X: NDArray[Any], yi: NDArray[np.intp], w: _F) -> bool:
    """Whether, in a strided sample of rows of positive weight, a class has an all-zero column.

    Every column that is zero in all of a class's rows is zero in the sample
    too, so False means no class has one. Comparisons and a segmented OR over
    the sample's rows in class order: no BLAS product, whose threads cost far
    more than so small a product on a busy machine.
    """
    n = X.shape[0]
    stride = max(1, n // PROBE_ROWS)
    ys, ws = yi[::stride], w[::stride]
    Xs = X[::stride]
    if not bool(np.all(ws > 0)):
        keep = ws > 0
        ys, Xs = ys[keep], Xs[keep]
    if ys.size == 0:
        return False
    order = np.argsort(ys, kind="stable")
    ys = ys[order]
    starts = np.flatnonzero(np.concatenate(([True], ys[1:] != ys[:-1])))
    # NaN and infinity are non-zero here, as in the exact pass
    lit = np.logical_or.reduceat(np.asarray(Xs)[order] != 0, starts, axis=0)
    return not bool(lit.all())


def _moments_about(
    X: NDArray[Any],
    yi: NDArray[np.intp],
    w: _F,
    centres: _F,
    unit: bool,
    dead: NDArray[np.bool_] | None = None,
    fourth: bool = False,
) -> tuple[_F, _F, _F, _F, _F | None, _F | None]:
    """Per-class scatter, M3, M4, residual sums, and (``fourth``) T and Q about the class centres.

    Rows are put in class order (one stable argsort) and visited in blocks of
    bounded size. Each block of residuals ``R`` is written into a reused
    buffer as ``[R, 1, |R|^2]`` (rows scaled by ``sqrt(w)``), so that one
    symmetric product (BLAS syrk) yields ``R'R``, the residual sums ``R'1``,
    ``M3 = R'|R|^2`` and ``M4 = |R|^2' |R|^2`` together. A class's columns
    marked ``dead`` (zero in all its rows, see :func:`_zero_columns`) are left
    out of its blocks; their centres must be 0. Large passes are split into contiguous
    ranges of the class-ordered rows, one per thread: equal rows whatever the
    class sizes; a class cut by a range boundary is summed from its parts in
    range order.

    With ``fourth``, the block is ``[R, 1, R o R]`` instead (``o`` the
    entrywise product), and the same product also yields
    ``T = (R o R)' R`` and ``Q = (R o R)' (R o R)`` (see
    :class:`~bayesrule.stats.FourthMomentStats`); ``M3`` and ``M4`` are
    their sums.
    """
    k, p = centres.shape
    scatter = np.zeros((k, p, p))
    m3 = np.zeros((k, p))
    m4 = np.zeros(k)
    s1 = np.zeros((k, p))
    t = np.zeros((k, p, p)) if fourth else None
    q = np.zeros((k, p, p)) if fourth else None
    order = np.argsort(yi, kind="stable")
    if not unit:
        order = order[w[order] > 0]
    bounds = np.searchsorted(yi[order], np.arange(k + 1)).tolist()
    if dead is None:
        dead = np.zeros((k, p), dtype=bool)
    cols: list[NDArray[np.intp] | None] = [
        np.flatnonzero(~dead[j]) if dead[j].any() else None for j in range(k)
    ]
    width = [p if c is None else c.size for c in cols]

    def extra(m: int) -> int:  # columns after R: [1, |R|^2] or [1, R o R]
        return m + 1 if fourth else 2

    step = max(64, BLOCK_VALUES // (p + extra(p)))

    def store(j: int, acc: _F, whole: bool) -> None:
        m, c = width[j], cols[j]
        at = (slice(None), slice(None)) if c is None else np.ix_(c, c)
        if whole:  # the first and only part: assigning is cheaper than adding
            scatter[j][at] = acc[:m, :m]
        else:
            scatter[j][at] += acc[:m, :m]
        at1 = slice(None) if c is None else c
        s1[j, at1] += acc[m, :m]
        if t is None or q is None:
            m3[j, at1] += acc[m + 1, :m]
            m4[j] += acc[m + 1, m + 1]
            return
        T, Q = acc[m + 1 :, :m], acc[m + 1 :, m + 1 :]
        t[j][at] += T
        q[j][at] += Q
        m3[j, at1] += T.sum(axis=0)
        m4[j] += Q.sum()

    # feature-major X (F order, as read from Parquet columns): the range's rows
    # are put in class order once, as a (p, rows) array, and each block of
    # residuals is built transposed, [R, 1, |R|^2]' (same product, no
    # transposition of X)
    columns = _feature_major(X) and p > 1

    def part(lohi: tuple[int, int]) -> list[tuple[int, _F]]:
        lo, hi = lohi
        shared = []
        flat = np.empty(min(step, hi - lo) * (p + extra(p)))
        XsT = np.take(X.T, order[lo:hi], axis=1) if columns else None
        for j in range(k):
            a, b = max(bounds[j], lo), min(bounds[j + 1], hi)
            if a >= b:
                continue
            m, c = width[j], cols[j]
            n_col = m + extra(m)
            acc = np.zeros((n_col, n_col))
            blocks = -(-(b - a) // step)
            edges = np.linspace(a, b, blocks + 1).astype(int).tolist()
            for s, e in zip(edges[:-1], edges[1:], strict=True):
                rows = order[s:e]
                if XsT is not None:
                    BT = flat[: (e - s) * n_col].reshape(n_col, e - s)  # contiguous: syrk
                    RT = BT[:m]
                    if c is None:
                        np.subtract(XsT[:, s - lo : e - lo], centres[j][:, None], out=RT)
                    else:
                        np.subtract(XsT[c, s - lo : e - lo], centres[j, c][:, None], out=RT)
                    BT[m] = 1.0
                    if fourth:
                        np.multiply(RT, RT, out=BT[m + 1 :])
                    else:
                        np.einsum("ij,ij->j", RT, RT, out=BT[m + 1])
                    if not unit:
                        BT *= np.sqrt(w[rows])[None, :]
                    if e > s:
                        acc += np.dot(BT, BT.T)
                    continue
                B = flat[: (e - s) * n_col].reshape(e - s, n_col)  # contiguous: syrk
                R = B[:, :m]
                if c is None:
                    np.subtract(X[rows], centres[j], out=R)
                else:
                    np.subtract(X[np.ix_(rows, c)], centres[j, c], out=R)
                B[:, m] = 1.0
                if fourth:
                    np.multiply(R, R, out=B[:, m + 1 :])
                else:
                    np.einsum("ij,ij->i", R, R, out=B[:, m + 1])
                if not unit:
                    B *= np.sqrt(w[rows])[:, None]
                syrk_add(B, acc)
            if a == bounds[j] and b == bounds[j + 1]:
                store(j, acc, True)  # the whole class is in this range: nobody else writes it
            else:
                shared.append((j, acc))
        return shared

    n = order.size
    work = (
        float(
            sum((bounds[j + 1] - bounds[j]) * (width[j] + extra(width[j])) ** 2 for j in range(k))
        )
        / 2
    )
    for shared in in_parallel(part, row_ranges(n, work), work):
        for j, acc in shared:
            store(j, acc, False)
    return scatter, m3, m4, s1, t, q


def _feature_major(X: Any) -> bool:
    """Whether ``X`` is a NumPy array laid out column by column (F order, not also C)."""
    flags = getattr(X, "flags", None)
    return bool(flags is not None and flags.f_contiguous and not flags.c_contiguous)

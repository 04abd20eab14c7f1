"""Per-class weighted means and centred scatter matrices: a mergeable statistic."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ._base import ClassStatistic
from ._bounds import feature_bounds
from ._common import (
    NEGATIVE_MOMENT,
    Rows,
    StatisticsError,
    arrays_close,
    as_classes,
    class_totals,
    downdate_scatter,
    encode,
    label_repr,
    noise_floor,
    scratch_array,
)
from ._common import (
    Floats as _F,
)
from ._moments import (
    add_outer,
    class_bounds,
    class_codes,
    class_order,
    gather_column,
    matvec,
    moments_about,
    pilot_centres,
    pilot_sample,
    pooled_covariance,
    sample_centres,
    shift_higher,
    zero_columns,
)
from .schema import per_class

__all__ = ["ScatterStats", "checked_columns"]


def checked_columns(columns: Sequence[Any], y: Any) -> tuple[list[Any], Any]:
    """``(columns, y)`` as arrays, checked for a ``from_columns``: 1-D float columns of one
    dtype (float32 or float64) and length, at least one, and one label per row.

    Raises
    ------
    ValueError
        Naming the first column that differs from the first one, or the shape of ``y``.
    """
    cols = [np.asarray(col) for col in columns]
    if not cols:
        raise ValueError("columns must hold at least one feature; got none.")
    first = cols[0]
    n = first.shape[0] if first.ndim == 1 else -1
    bad = next(
        (
            j
            for j, col in enumerate(cols)
            if col.ndim != 1 or col.shape[0] != n or col.dtype != first.dtype
        ),
        None,
    )
    if bad is not None or first.dtype not in (np.float32, np.float64):
        j = 0 if bad is None else bad
        raise ValueError(
            "columns must be 1-D float32 or float64 arrays of one dtype and length; "
            f"column {j} is {cols[j].dtype} of shape {cols[j].shape}, column 0 "
            f"{first.dtype} of shape {first.shape}."
        )
    y_arr = np.asarray(y)
    if y_arr.shape != (n,):
        raise ValueError(f"y must be 1-D with {n} labels, one per row; got shape {y_arr.shape}.")
    return cols, y_arr


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
    classes, counts, weights
        As in every statistic (see :class:`Statistic`).
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
    def _from_rows(cls, rows: Rows) -> ScatterStats:
        """Statistics of one data set in a single blocked pass.

        The moments are accumulated about pilot class means (from a strided
        sample of rows) and then re-centred exactly at the class means with
        the residual sums accumulated alongside, so data far from the origin
        lose nothing. ``X`` holds finite numbers; float32 is accepted, the
        accumulation is float64.
        """
        return cls._scatter_pass(rows)

    @classmethod
    def _scatter_pass(
        cls,
        rows: Rows,
        pilot: tuple[Any, _F, _F] | None = None,
        bounds: tuple[_F, _F] | None = None,
    ) -> ScatterStats:
        """:meth:`_from_rows`, given what the caller already took along its own pass over ``X``.

        ``pilot`` is :func:`~._moments.pilot_centres` of the rows and
        ``bounds`` their :func:`~._bounds.feature_bounds`, when known.
        """
        X, c, yi, w, unit = rows
        # the rows in class order, sorted once for the pilot and the moment pass
        ordered = class_order(yi, w, c.size, unit)
        if pilot is None:
            pilot = pilot_centres(X, yi, w, c.size, unit, ordered)
        counts, weights, centres = pilot
        # a class's all-zero columns have mean exactly 0 and no residual
        dead = zero_columns(X, yi, w, c.size)
        centres = np.where(dead, 0.0, centres)
        # one pass for C- and F-ordered blocks (Parquet's columns side by side)
        scatter, m3, m4, s1, _, _ = moments_about(X, yi, w, centres, unit, dead, ordered=ordered)
        # The rounding error of the pilot centres, d = sum w r / W, is removed
        # exactly (this keeps every digit for data far from the origin).
        d = s1 / np.where(weights > 0, weights, 1.0)[:, None]
        m3, m4 = shift_higher(
            weights, np.einsum("kpp->k", scatter), matvec(scatter, d), m3, m4, d, s1
        )
        # S - d s1' - s1 d' + W d d' with s1 = W d: S - W d d', in place
        add_outer(scatter, -weights, d, d, out=scatter)
        means = np.where(weights[:, None] > 0, centres + d, 0.0)  # no weight: the empty statistic
        m3 = np.where(weights[:, None] > 0, m3, 0.0)
        m4 = np.where(weights > 0, m4, 0.0)
        # the pass above visits rows in class order: the range is a pass of its own
        lo, hi = feature_bounds(X, None if unit else w) if bounds is None else bounds
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

    @classmethod
    def from_columns(cls, columns: Sequence[Any], y: Any, *, classes: Any = None) -> ScatterStats:
        """The statistics of unit-weight rows whose features are ``columns``, one array per feature.

        Equal to ``from_data(X, y, classes=classes)`` with ``X`` the columns
        side by side: the same products over the same rows in the same
        (class) order. A source that holds its features column by column
        (Arrow's record batches, read from Parquet) hands its buffers over
        as they are; each column is gathered once, in class order, into one
        feature-major array (the copy that laying the block out and then
        putting its rows in class order would make twice), on which the
        pass of :meth:`from_data` runs without gathering again. Within a
        streamed pass that array is the thread's reused one
        (:func:`~._common.scratch_space`).

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
        first, n = cols[0], y_arr.shape[0]
        c = as_classes(y_arr if classes is None else classes)
        k, p = c.size, len(cols)
        yi = encode(y_arr, c)
        order = np.argsort(class_codes(yi, k), kind="stable")
        ys = yi[order]
        ones = np.ones(n)
        rows = Rows(None, c, ys, ones, True)
        # the rows in class order, feature by feature: (p, n), whose transpose is the
        # block laid out feature-major (F order) with its rows sorted by class
        gathered = scratch_array("class_ordered", (p, n), first.dtype)
        own = cls._from_rows.__func__ is ScatterStats._from_rows.__func__  # type: ignore[attr-defined]
        if n == 0 or not own:  # no rows, or a statistic with a pass of its own
            for j, col in enumerate(cols):
                gather_column(col, order, gathered[j])
            return cls._from_rows(rows._replace(X=gathered.T))
        # the pilot sample and the range are taken column by column as each is
        # gathered (still in cache), not in passes of their own over the block
        at, ys_at = pilot_sample(ys, k, (np.arange(n), class_bounds(ys, k)))
        sample = np.empty((p, at.size), dtype=first.dtype)
        lo, hi = np.empty(p), np.empty(p)
        for j, col in enumerate(cols):
            row = gathered[j]
            lo[j], hi[j] = gather_column(col, order, row)
            np.take(row, at, out=sample[j], mode="wrap")
        counts, weights = class_totals(ys, ones, k)
        centres = sample_centres(sample, ys_at, ones[: at.size], k, True)
        if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
            lo, hi = feature_bounds(gathered.T)  # NaN or infinity: the ranges of the finite values
        return cls._scatter_pass(rows._replace(X=gathered.T), (counts, weights, centres), (lo, hi))

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
        M3a, M4a = a._higher_about(mean)
        M3b, M4b = b._higher_about(mean)
        scatter = np.add(a.scatter, b.scatter)
        add_outer(scatter, a.weights * b.weights / safe, delta, delta, out=scatter)
        return ScatterStats(
            classes=self.classes,
            counts=a.counts + b.counts,
            weights=W,
            means=mean,
            scatter=scatter,
            m3=M3a + M3b,
            m4=M4a + M4b,
        )

    def _higher_about(self, centre: _F) -> tuple[_F, _F]:
        """``m3`` and ``m4`` of these rows about ``centre`` (one per class) instead of their means."""
        d = centre - self.means
        return shift_higher(
            self.weights, _trace(self.scatter), matvec(self.scatter, d), self.m3, self.m4, d
        )

    def _subtract_aligned(self, other: ScatterStats) -> ScatterStats:
        # C = self = A ∪ B, B = other. The scatter and mean by the backward
        # Chan update; M3 and M4 by running the merge backwards: B re-centred
        # at m_C is taken from C, which leaves A about m_C with residual sum
        # W_A (m_A - m_C); that is then re-centred at m_A.
        C, B = self, other
        W_A, m_A, scatter = downdate_scatter(C, B)
        left = W_A > 0
        e = np.where(left[:, None], C.means - B.means, 0.0)  # B's shift to m_C
        d = np.where(left[:, None], m_A - C.means, 0.0)  # A's shift from m_C to m_A
        trB, SBe, SBd = _trace(B.scatter), matvec(B.scatter, e), matvec(B.scatter, d)
        M3_Bc, M4_Bc = shift_higher(B.weights, trB, SBe, B.m3, B.m4, e)
        with np.errstate(over="ignore", invalid="ignore"):  # higher powers: see shift_higher
            # B about m_C: S_B' = S_B + W_B e e'; so S_B' d and tr(S_B') from matvecs
            eB = (B.weights * np.einsum("kp,kp->k", e, d))[:, None] * e
            tr_Ac = _trace(C.scatter) - trB - B.weights * np.einsum("kp,kp->k", e, e)
            SAc_d = matvec(C.scatter, d) - SBd - eB
            M3_A, M4_A = shift_higher(
                W_A, tr_Ac, SAc_d, C.m3 - M3_Bc, C.m4 - M4_Bc, d, W_A[:, None] * d
            )
        # M4 is a sum of non-negative terms: clearly negative means B was not in C.
        # Its rounding residue is on the scale of the means' rounding, 1e-6 |m|
        # amplified by W_C / W_A (as in downdate_moments), to the fourth power
        # and times p (a class left with one row has M4 = 0 exactly).
        u = 1e-6 * np.maximum(np.abs(C.means), np.abs(B.means)).max(axis=1, initial=0.0)
        u = u * C.weights / np.where(left, W_A, 1.0)
        with np.errstate(over="ignore", invalid="ignore"):
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
        return pooled_covariance(self.pooled_scatter(), self.weights, ddof)

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

"""Per-class scatter plus the entrywise fourth moments of the residuals: a mergeable statistic."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from ._bounds import feature_bounds
from ._common import (
    Floats as _F,
)
from ._common import (
    Rows,
    arrays_close,
    pilot_means,
)
from ._moments import add_outer, matvec, moments_about, shift_higher, zero_columns
from ._scatter import ScatterStats
from .schema import per_class

__all__ = ["FourthMomentStats"]


def _shift_fourth(W: _F, S: _F, T: _F, Q: _F, d: _F, s1: _F | None = None) -> tuple[_F, _F]:
    r"""Re-centre ``T`` and ``Q`` from residuals ``r`` to ``r - d`` (every class at once).

    ``S``, ``T`` and ``Q`` are taken about the old centre, and ``s1 = sum w r``
    (zero, the default, when the old centre is the weighted mean). With
    ``A_j = S_jj``:

    ``T'_jl = T_jl - A_j d_l - 2 d_j S_jl - d_j^2 d_l W + 2 d_j d_l s1_j + d_j^2 s1_l``,

    ``Q'_jl = Q_jl - 2 d_l T_jl - 2 d_j T_lj + d_l^2 A_j + d_j^2 A_l + 4 d_j d_l S_jl
    + d_j^2 d_l^2 W - 2 d_j d_l^2 s1_j - 2 d_j^2 d_l s1_l``.
    """
    A = np.einsum("kjj->kj", S)
    d2 = d * d
    dj, dl = d[:, :, None], d[:, None, :]
    dS = dj * S  # d_j S_jl
    dTl = T * dl  # d_l T_jl
    Q_new = Q - 2.0 * (dTl + np.swapaxes(dTl, 1, 2))
    Q_new += A[:, :, None] * d2[:, None, :] + d2[:, :, None] * A[:, None, :]
    Q_new += 4.0 * dS * dl
    Q_new += W[:, None, None] * (d2[:, :, None] * d2[:, None, :])
    T_new = T - A[:, :, None] * dl - 2.0 * dS - W[:, None, None] * (d2[:, :, None] * dl)
    if s1 is not None:
        s1j, s1l = s1[:, :, None], s1[:, None, :]
        T_new += 2.0 * dj * dl * s1j + d2[:, :, None] * s1l
        cross = dj * d2[:, None, :] * s1j  # d_j d_l^2 s1_j
        Q_new -= 2.0 * (cross + np.swapaxes(cross, 1, 2))
    return T_new, Q_new


@dataclass(frozen=True, eq=False, repr=False)
class FourthMomentStats(ScatterStats):
    r""":class:`ScatterStats` plus the entrywise third and fourth residual moments.

    Besides what :class:`ScatterStats` holds, for each class ``k`` with
    residuals ``r_i = x_i - m_k`` and weights ``w_i``:

    * ``t[k, j, l] = sum_i w_i r_ij^2 r_il`` (not symmetric);
    * ``q[k, j, l] = sum_i w_i r_ij^2 r_il^2``.

    They are what the Ledoit-Wolf shrinkage intensity needs in the
    correlation scale: with ``v_j = 1 / var_j``, the sum of the fourth powers
    of the standardised residual norms is ``sum_i w_i |D^-1/2 r_i|^4 = v' Q v``
    (:func:`bayesrule.covariance.standardised_intensity`). Unlike ``M4`` of
    :class:`ScatterStats`, this cannot be formed before the variances are
    known, so ``Q`` (and ``T``, which its merge needs) are kept whole:
    ``O(K p^2)`` more numbers and about four times the work of the scatter
    pass. Estimators collect it only when asked (``moments='fourth'``, or
    ``moments='auto'`` with a Ledoit-Wolf ``shrinkage`` at the first fit).

    The family ``{W, m, S, T, Q}`` is closed under a shift of the centre
    (:func:`_shift_fourth`), so merging re-centres each part at the merged
    mean and adds, and subtracting runs that backwards; the laws of
    :class:`~bayesrule.stats.Statistic` hold as for :class:`ScatterStats`.
    Merged with a plain :class:`ScatterStats`, the result is a
    :class:`ScatterStats` of what both hold (``T`` and ``Q`` are dropped).

    Attributes
    ----------
    classes, counts, weights, means, scatter, m3, m4
        As in :class:`ScatterStats` (``m3`` and ``m4`` are the sums of
        ``t`` over ``j`` and of ``q``).
    t : ndarray of shape (n_classes, n_features, n_features)
    q : ndarray of shape (n_classes, n_features, n_features)

    References
    ----------
    O. Ledoit and M. Wolf, "A well-conditioned estimator for large-dimensional
    covariance matrices", Journal of Multivariate Analysis 88(2), 2004.
    """

    t: _F = field(metadata=per_class("K", "p", "p"))
    q: _F = field(metadata=per_class("K", "p", "p"))

    @classmethod
    def _extend(cls, base: ScatterStats, t: _F, q: _F) -> FourthMomentStats:
        values = {f.name: getattr(base, f.name) for f in fields(ScatterStats)}
        return cls(**values, t=t, q=q)

    @classmethod
    def _from_rows(cls, rows: Rows) -> FourthMomentStats:
        """Statistics of one data set in a single blocked pass (as :class:`ScatterStats`)."""
        X, c, yi, w, unit = rows
        counts, weights, centres = pilot_means(X, yi, w, c.size)
        dead = zero_columns(X, yi, w, c.size)
        centres = np.where(dead, 0.0, centres)
        scatter, m3, m4, s1, t, q = moments_about(X, yi, w, centres, unit, dead, fourth=True)
        assert t is not None and q is not None
        d = s1 / np.where(weights > 0, weights, 1.0)[:, None]
        # T and Q first: their shift needs the scatter about the pilot centres
        t, q = _shift_fourth(weights, scatter, t, q, d, s1)
        m3, m4 = shift_higher(
            weights, np.einsum("kpp->k", scatter), matvec(scatter, d), m3, m4, d, s1
        )
        add_outer(scatter, -weights, d, d, out=scatter)
        lo, hi = feature_bounds(X, None if unit else w)
        has = weights > 0
        base = ScatterStats(
            classes=c,
            counts=counts,
            weights=weights,
            means=np.where(has[:, None], centres + d, 0.0),
            scatter=scatter,
            m3=np.where(has[:, None], m3, 0.0),
            m4=np.where(has, m4, 0.0),
            lower=lo,
            upper=hi,
        )
        keep = has[:, None, None]
        return cls._extend(base, np.where(keep, t, 0.0), np.where(keep, q, 0.0))

    def _merge_aligned(self, other: ScatterStats) -> FourthMomentStats:
        assert isinstance(other, FourthMomentStats)
        base = ScatterStats._merge_aligned(self, other)
        parts = []
        for s in (self, other):
            d = base.means - s.means
            parts.append(_shift_fourth(s.weights, s.scatter, s.t, s.q, d))
        return self._extend(base, parts[0][0] + parts[1][0], parts[0][1] + parts[1][1])

    def _subtract_aligned(self, other: ScatterStats) -> FourthMomentStats:
        # as ScatterStats: B re-centred at m_C is taken from C, which leaves A
        # about m_C with residual sum W_A (m_A - m_C); that is re-centred at m_A
        assert isinstance(other, FourthMomentStats)
        C, B = self, other
        base = ScatterStats._subtract_aligned(C, B)  # raises for B not part of C
        left = base.weights > 0
        e = np.where(left[:, None], C.means - B.means, 0.0)
        d = np.where(left[:, None], base.means - C.means, 0.0)
        T_Bc, Q_Bc = _shift_fourth(B.weights, B.scatter, B.t, B.q, e)
        S_Ac = C.scatter - add_outer(B.scatter, B.weights, e, e)
        T, Q = _shift_fourth(
            base.weights, S_Ac, C.t - T_Bc, C.q - Q_Bc, d, base.weights[:, None] * d
        )
        keep = left[:, None, None]
        return self._extend(base, np.where(keep, T, 0.0), np.where(keep, Q, 0.0))

    def _close(self, other: ScatterStats, rtol: float, atol: float) -> bool:
        assert isinstance(other, FourthMomentStats)
        if not ScatterStats._close(self, other, rtol, atol):
            return False
        # T can vanish by symmetry: compare it on |T_jl| <= sqrt(Q_jj S_ll)
        q_diag = np.abs(np.einsum("kjj->kj", self.q))
        s_diag = np.abs(np.einsum("kjj->kj", self.scatter))
        scale = float(np.sqrt(np.max(q_diag, initial=0.0) * np.max(s_diag, initial=0.0)))
        scale = max(scale, self._floor(3))
        return bool(np.all(np.abs(self.t - other.t) <= atol + rtol * scale)) and arrays_close(
            self.q, other.q, rtol, atol, self._floor(4)
        )

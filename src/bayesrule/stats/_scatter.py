"""Per-class weighted means and centred scatter matrices: a mergeable statistic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._parallel import in_parallel
from ._common import (
    BLOCK_VALUES,
    ClassStatistic,
    arrays_close,
    as_classes,
    noise_floor,
    pilot_means,
    prepare,
    syrk_add,
)

__all__ = ["ScatterStats"]

_F = NDArray[np.float64]


def _shift(W: _F, S: _F, M3: _F, M4: _F, d: _F, s1: _F | None = None) -> tuple[_F, _F, _F]:
    """Re-centre per-class moments from residuals ``r`` to ``r - d``.

    ``s1 = sum w r`` is zero when ``r`` is centred at the weighted mean (the
    default). With ``c = |d|^2``:
    ``S' = S - d s1' - s1 d' + W d d'``,
    ``M3' = M3 - tr(S) d - 2 S d + 2 (d.s1) d + c s1 - c W d`` and
    ``M4' = M4 - 4 d.M3 + 4 d'Sd + 2 c tr(S) + c^2 W - 4 c (d.s1)``.
    """
    c = np.einsum("kp,kp->k", d, d)
    Sd = np.einsum("kpq,kq->kp", S, d)
    tr = np.einsum("kpp->k", S)
    S_new = S + W[:, None, None] * d[:, :, None] * d[:, None, :]
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
        S_new -= d[:, :, None] * s1[:, None, :] + s1[:, :, None] * d[:, None, :]
        M3_new += 2.0 * ds1[:, None] * d + c[:, None] * s1
        M4_new -= 4.0 * c * ds1
    return S_new, M3_new, M4_new


@dataclass(frozen=True, eq=False, repr=False)
class ScatterStats(ClassStatistic):
    r"""Per-class weighted sufficient statistics of a Gaussian with full covariance.

    For each class ``k`` with rows ``x_i`` and frequency weights ``w_i`` it holds
    the weight ``W_k = sum w_i``, the number of rows with positive weight, the
    mean ``m_k``, the centred scatter ``S_k = sum w_i (x_i - m_k)(x_i - m_k)'``,
    and two higher moments of the residual norm used by the Ledoit-Wolf
    shrinkage estimate, ``M3_k = sum w_i |r_i|^2 r_i`` and
    ``M4_k = sum w_i |r_i|^4`` (``r_i = x_i - m_k``).

    The statistics form a commutative monoid:

    * ``ScatterStats.empty(classes, p)`` is the identity:
      ``s.merge(empty) == s``;
    * ``merge`` is associative and commutative;
    * ``from_data(A).merge(from_data(B)) == from_data(A ∪ B)``, and a row of
      integer weight ``w`` is the same as ``w`` copies of it.

    Merging uses the pairwise update of Chan, Golub and LeVeque, so nothing is
    ever computed from raw sums of squares. No hyperparameter (ddof,
    shrinkage, regularisation) lives here: estimates are derived on demand.

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

    classes: NDArray[Any]
    counts: NDArray[np.int64]
    weights: _F
    means: _F
    scatter: _F
    m3: _F
    m4: _F

    _per_class = ("counts", "weights", "means", "scatter", "m3", "m4")

    # -- construction ---------------------------------------------------------
    @classmethod
    def empty(cls, classes: ArrayLike, n_features: int) -> ScatterStats:
        """The identity element: no rows seen for any of ``classes``."""
        c = as_classes(classes)
        k, p = c.size, int(n_features)
        return cls(
            classes=c,
            counts=np.zeros(k, dtype=np.int64),
            weights=np.zeros(k),
            means=np.zeros((k, p)),
            scatter=np.zeros((k, p, p)),
            m3=np.zeros((k, p)),
            m4=np.zeros(k),
        )

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
        n, p = X.shape
        counts, weights, means = pilot_means(X, yi, w, c.size)
        scatter, m3, m4, s1 = _centred_moments(X, yi, w, means, unit)
        # One refinement step: the rounding error of the first-pass means,
        # d = sum w r / W, is removed exactly (this keeps every digit for data
        # far from the origin).
        d = s1 / np.where(weights > 0, weights, 1.0)[:, None]
        scatter, m3, m4 = _shift(weights, scatter, m3, m4, d, s1)
        means = np.where(weights[:, None] > 0, means + d, 0.0)  # no weight: the empty statistic
        return cls(
            classes=c, counts=counts, weights=weights, means=means, scatter=scatter, m3=m3, m4=m4
        )

    # -- monoid ---------------------------------------------------------------
    def _merge_aligned(self, other: ScatterStats) -> ScatterStats:
        b = other
        return self._merge_arrays(b.counts, b.weights, b.means, b.scatter, b.m3, b.m4)

    def _merge_arrays(
        self, nb: NDArray[np.int64], wb: _F, mb: _F, Sb: _F, M3b: _F, M4b: _F
    ) -> ScatterStats:
        wa, ma = self.weights, self.means
        W = wa + wb
        safe = np.where(W > 0, W, 1.0)
        fa = (wa / safe)[:, None]
        fb = (wb / safe)[:, None]
        mean = fa * ma + fb * mb
        Sa2, M3a2, M4a2 = _shift(wa, self.scatter, self.m3, self.m4, mean - ma)
        Sb2, M3b2, M4b2 = _shift(wb, Sb, M3b, M4b, mean - mb)
        return ScatterStats(
            classes=self.classes,
            counts=self.counts + nb,
            weights=W,
            means=mean,
            scatter=Sa2 + Sb2,
            m3=M3a2 + M3b2,
            m4=M4a2 + M4b2,
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
                f"class {self.classes[k]!r} has total weight {self.weights[k]:g} "
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
                f"{self.weights.sum():g} with {k} classes."
            )
        return self.pooled_scatter() / denom

    def allclose(self, other: ScatterStats, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        """Whether two statistics agree to ``rtol`` (scaled by each array's size)."""

        return (
            np.array_equal(self.classes, other.classes)
            and np.array_equal(self.counts, other.counts)
            and arrays_close(self.weights, other.weights, rtol, atol)
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
        tr = np.einsum("kpp->k", self.scatter)
        scale = float(np.sqrt(np.max(np.abs(self.m4) * np.abs(tr), initial=0.0)))
        scale = max(scale, self._floor(3))
        return bool(np.all(np.abs(self.m3 - other.m3) <= atol + rtol * scale))


def _centred_moments(
    X: NDArray[Any], yi: NDArray[np.intp], w: _F, means: _F, unit: bool
) -> tuple[_F, _F, _F, _F]:
    """Per-class scatter, M3, M4 and residual sums about the given class means.

    Rows are visited class by class (after one argsort) in blocks of bounded
    size. Each block of residuals ``R`` is written into a reused buffer as
    ``[R, 1, |R|^2]`` (rows scaled by ``sqrt(w)``), so that one symmetric
    product (BLAS syrk) yields ``R'R``, the residual sums ``R'1``, ``M3 = R'|R|^2``
    and ``M4 = |R|^2' |R|^2`` together.
    """
    k, p = means.shape
    scatter = np.zeros((k, p, p))
    m3 = np.zeros((k, p))
    m4 = np.zeros(k)
    s1 = np.zeros((k, p))
    q = p + 2
    order = np.argsort(yi, kind="stable")
    bounds = np.searchsorted(yi[order], np.arange(k + 1))
    step = max(64, BLOCK_VALUES // q)

    def one_class(j: int) -> None:
        acc = np.zeros((q, q))
        rows_j = order[bounds[j] : bounds[j + 1]]
        if not unit:
            rows_j = rows_j[w[rows_j] > 0]
        buf = np.empty((min(step, rows_j.size), q))
        for s in range(0, rows_j.size, step):
            rows = rows_j[s : s + step]
            B = buf[: rows.size]
            R = B[:, :p]
            np.subtract(X[rows], means[j], out=R)
            B[:, p] = 1.0
            np.einsum("ij,ij->i", R, R, out=B[:, p + 1])
            if not unit:
                B *= np.sqrt(w[rows])[:, None]
            syrk_add(B, acc)
        scatter[j] = acc[:p, :p]
        s1[j] = acc[p, :p]
        m3[j] = acc[p + 1, :p]
        m4[j] = acc[p + 1, p + 1]

    present = np.flatnonzero(np.diff(bounds)).tolist()
    in_parallel(one_class, present, float(X.shape[0]) * q * q / 2)
    return scatter, m3, m4, s1

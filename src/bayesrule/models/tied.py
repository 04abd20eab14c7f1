"""Gaussian classes sharing one covariance: the class models of LDA."""

from __future__ import annotations

from collections.abc import Iterator
from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._util.products import rows_dot
from ._covariances import needs_statistics
from ._terms import Terms, matrix_exponent, row_exponent
from ._types import LOG_2PI as _LOG_2PI
from ._types import Floats as _F
from .covariance import (
    ESTIMATED,
    NEEDS_FOURTH,
    constant_features,
    shrink,
    shrink_to_diagonal,
    standardised_intensity,
)
from .gaussian import Gaussian

__all__ = ["TiedGaussian", "range_whitening"]


#: Largest ``c_j^2 / Sigma_jj`` (squared distance of a feature's centre from
#: the origin, in within-class variances) for which the discriminant is
#: computed from ``X`` rather than ``X - c``: the products' rounding then grows
#: by at most about ``sqrt(ORIGIN_RATIO)``.
ORIGIN_RATIO = 100.0

#: Rows per block when centring ``X`` for a product: the centred copy of a
#: block stays in cache (a few MiB for MNIST's rows) and is reused.
_BLOCK_ROWS = 1024


def _check_finite(cov: _F) -> None:
    if not np.all(np.isfinite(cov)):
        raise ValueError(
            "the pooled within-class covariance is not finite: X holds values so large "
            "that their squares overflow float64; rescale X."
        )


def range_whitening(cov: _F, tol: float) -> _F:
    """Whitening ``W`` (``p x r``) on the range of ``cov``: ``W W' = cov^+``.

    The rank is decided on the correlation matrix ``C = D^-1/2 cov D^-1/2``
    (``D`` the variances), so that it does not depend on the units of the
    features: an eigen-direction of ``C`` is kept when its standard deviation
    exceeds ``tol`` (its eigenvalue exceeds ``tol**2``), and features without
    variance are set aside. This is the rule of scikit-learn's ``svd`` solver
    (singular values of the within-class residuals, each feature scaled by
    its standard deviation, compared with ``tol``) and of MASS's ``lda``
    (the same, up to MASS's divisors ``n - 1`` and ``n - K``). With
    ``C = U L U'`` restricted to the kept directions,
    ``W = D^-1/2 U L^-1/2``; the matching factor ``A = cov W = D^1/2 U
    L^1/2`` (``W' A = I``, ``A A' = cov`` on the range) is only needed for
    densities and sampling and is formed there. Columns are in decreasing
    order of eigenvalue.

    Raises ValueError when ``cov`` is not finite or is zero.
    """
    _check_finite(cov)
    var = np.diag(cov).copy()
    live = var > 0
    if not live.any():
        raise ValueError(
            "the pooled within-class covariance is zero: every class is constant, "
            "so no discriminant can be estimated."
        )
    s = np.sqrt(var[live])
    C = cov[np.ix_(live, live)] / np.outer(s, s)
    lam, U = np.linalg.eigh(C)
    keep = np.flatnonzero(lam > float(tol) ** 2)[::-1]  # largest first
    whiten = np.zeros((cov.shape[0], keep.size))
    whiten[live] = U[:, keep] / (s[:, None] * np.sqrt(lam[keep]))
    return whiten


def check_shrinkage(shrinkage: Any) -> None:
    """ValueError unless ``shrinkage`` is None, a float in [0, 1], 'auto', 'ledoit-wolf' or 'oas'."""
    if shrinkage is None or (isinstance(shrinkage, str) and shrinkage in ESTIMATED):
        return
    if (
        isinstance(shrinkage, Real)
        and not isinstance(shrinkage, bool)
        and 0.0 <= float(shrinkage) <= 1.0
    ):
        return
    raise ValueError(
        "shrinkage must be None, a float in [0, 1], 'auto', 'ledoit-wolf' or 'oas'; "
        f"got {shrinkage!r}."
    )


def _standardised_pooled(
    stats: Any, shrinkage: str, ddof: float, constant_unit_scale: bool = False
) -> tuple[_F, _F]:
    """The pooled covariance of the classes' standardised-shrunk scatters, and the intensities.

    ``constant_unit_scale``: a feature constant within a class is shrunk
    there towards a variance of ``a_k mu_k`` in its own units (scikit-learn),
    not towards 0 (see :func:`~bayesrule.covariance.shrink_to_diagonal`).
    """
    needs_statistics(stats, shrinkage)
    present = np.flatnonzero(stats.weights > 0)
    q = getattr(stats, "q", None) if shrinkage in NEEDS_FOURTH else None
    p = stats.n_features
    total = np.zeros((p, p))
    intensity = np.zeros(present.size)
    for i, k in enumerate(present.tolist()):
        W = float(stats.weights[k])
        a, mu = standardised_intensity(
            shrinkage, stats.scatter[k], W, stats.means[k], None if q is None else q[k]
        )
        intensity[i] = a
        if not a:
            total += stats.scatter[k]
            continue
        constant = None
        if constant_unit_scale:
            constant = constant_features(np.diag(stats.scatter[k]) / W, stats.means[k], W)
        # the scatter is W times the covariance: a variance of 1 is W there
        total += shrink_to_diagonal(stats.scatter[k], a, mu, constant, unit=W)
    # the divisor of the unshrunk pooled covariance (already checked positive)
    return total / (float(stats.weights.sum()) - ddof * present.size), intensity


class TiedGaussian:
    r"""Gaussian class densities ``N(mu_k, Sigma)`` with one shared covariance.

    The family of LDA. It holds the class means, the shared covariance and a
    whitening ``W`` on the covariance's range (``W W' = Sigma^+``, rank ``r``).
    Every computation with rows of ``X`` is made on ``X - centre`` (the
    centre is the data's mean), so that the results do not depend on where
    the data lie: adding ``1e8`` to every feature changes nothing but
    rounding of the inputs themselves. When ``r < p`` the densities are those
    on the affine subspace ``mu_k + range(Sigma)`` (pseudo-determinant form),
    evaluated at the projection of ``x``.

    Build it with :meth:`from_stats` (the derivation) or
    :meth:`from_covariance`.

    Parameters
    ----------
    means : array-like of shape (n_classes, p)
    covariance : array-like of shape (p, p)
    whitening : array-like of shape (p, r)
        ``W`` with ``W W' = covariance^+`` on its range.
    centre : array-like of shape (p,), optional
        The point rows are centred at (default: the mean of ``means``).
    shrinkage : float or array-like of shape (n_classes,), default=0.0
        The shrinkage intensity that was applied to ``covariance``, per class
        (for reference).
    """

    def __init__(
        self,
        means: ArrayLike,
        covariance: ArrayLike,
        whitening: ArrayLike,
        centre: ArrayLike | None = None,
        shrinkage: ArrayLike = 0.0,
    ) -> None:
        self.means = np.atleast_2d(np.asarray(means, dtype=float))
        self.covariance = np.asarray(covariance, dtype=float)
        self.whitening = np.asarray(whitening, dtype=float)
        self.centre = self.means.mean(axis=0) if centre is None else np.asarray(centre, dtype=float)
        self.shrinkage = np.broadcast_to(
            np.asarray(shrinkage, dtype=float), (self.means.shape[0],)
        ).copy()
        W = self.whitening
        # class means in whitened coordinates about the centre, (K, r)
        self.whitened_means = (self.means - self.centre) @ W
        # the discriminant about the centre: x -> (x - c)' coef_k + quad_k
        self.coef = self.whitened_means @ W.T  # (K, p)
        self.quad = -0.5 * np.einsum("kr,kr->k", self.whitened_means, self.whitened_means)
        # Where every feature's centre is within ORIGIN_RATIO standard
        # deviations of the origin (pixel intensities, standardised data),
        # products with X itself lose under a digit to those with X - c, and
        # save the pass that centres X: x' coef_k + (quad_k - c' coef_k).
        var = np.diag(self.covariance)
        live = np.any(W != 0, axis=1)
        self._origin = bool(np.all(self.centre[live] ** 2 <= ORIGIN_RATIO * var[live]))
        self._quad_origin = self.quad - self.coef @ self.centre
        # scikit-learn's decision form in one product with X (LDA's
        # decision_function where the centre is near the origin):
        # x' (coef_k + s) + (quad0_k - c' s / 2), s = Sigma^+ c
        Sc = W @ (W.T @ self.centre)
        self.origin_coef = self.coef + Sc
        self.origin_const = self._quad_origin - 0.5 * float(self.centre @ Sc)
        self._log_norm: float | None = None
        self._log_pdet = 0.0
        self._factor = np.zeros((0, 0))
        #: features with variance in ``covariance``: ``rank < n_varying`` means
        #: that directions were dropped for collinearity
        self.n_varying = int(np.count_nonzero(np.diag(self.covariance) > 0))

    # -- construction -----------------------------------------------------------
    @classmethod
    def from_stats(
        cls,
        stats: Any,
        *,
        shrinkage: Any = None,
        tol: float = 1e-4,
        ddof: float = 1.0,
        constant_unit_scale: bool = False,
    ) -> TiedGaussian:
        """The family of the classes with data (``stats.weights > 0``).

        Parameters
        ----------
        stats : ScatterStats, FourthMomentStats or PooledScatterStats
            Per-class weights and means and the within-class scatter (per
            class for an estimated ``shrinkage``; Ledoit-Wolf also needs the
            fourth moments of :class:`~bayesrule.stats.FourthMomentStats`).
        shrinkage : None, 'auto', 'ledoit-wolf', 'oas' or float in [0, 1]
            A float ``a``: the pooled covariance ``Sigma`` becomes
            ``(1 - a) Sigma + a tr(Sigma)/p I`` (scikit-learn's meaning).
            'auto' / 'ledoit-wolf' and 'oas': each class's scatter is shrunk in
            its correlation scale, ``(1 - a_k) S_k + a_k mu_k diag(S_k)``, with
            ``a_k`` and ``mu_k`` from
            :func:`~bayesrule.covariance.standardised_intensity`, and the
            shrunk scatters are pooled. The result does not depend on the
            features' units; with ``ddof=0``, ``constant_unit_scale=True``
            and the class proportions as priors it is scikit-learn's
            ``shrinkage='auto'`` estimate (``ddof=1`` divides the same sum by
            ``W - K``).
        tol : float, default=1e-4
            Rank tolerance on standard deviations in the correlation scale
            (see :func:`range_whitening`): scikit-learn's and MASS's
            meaning, free of the features' units.
        ddof : float, default=1.0
            The pooled covariance is ``S_w / (W - ddof * K)``.
        constant_unit_scale : bool, default=False
            For an estimated shrinkage: False shrinks a feature constant
            within a class towards 0 there (the target ``a_k mu_k diag(S_k)``, free of the
            features' units); True gives it scikit-learn's
            ``StandardScaler`` scale 1, so it is shrunk towards a variance of
            ``a_k mu_k`` in its own units (scikit-learn's model, which then
            depends on those units).

        Raises
        ------
        ValueError
            For an invalid ``shrinkage`` or ``tol``, for an estimated
            shrinkage without the statistics it needs, for too little weight,
            or for a covariance that is zero or not finite.
        """
        check_shrinkage(shrinkage)
        if not isinstance(tol, Real) or isinstance(tol, bool) or not tol >= 0:
            raise ValueError(f"tol must be a non-negative float; got {tol!r}.")
        present = stats.weights > 0
        cov = stats.pooled_covariance(ddof)
        _check_finite(cov)
        intensity: Any = 0.0
        if isinstance(shrinkage, str):
            cov, intensity = _standardised_pooled(stats, shrinkage, ddof, constant_unit_scale)
        elif shrinkage is not None and float(shrinkage) > 0:
            intensity = float(shrinkage)
            cov = shrink(cov, intensity)
        weights = stats.weights[present]
        means = stats.means[present]
        centre = weights @ means / weights.sum()
        return cls.from_covariance(means, cov, tol=tol, centre=centre, shrinkage=intensity)

    @classmethod
    def from_covariance(
        cls,
        means: ArrayLike,
        covariance: ArrayLike,
        *,
        tol: float = 1e-4,
        centre: ArrayLike | None = None,
        shrinkage: ArrayLike = 0.0,
    ) -> TiedGaussian:
        """From class means and a shared covariance (rank decided by ``tol``)."""
        cov = np.asarray(covariance, dtype=float)
        return cls(means, cov, range_whitening(cov, tol), centre, shrinkage)

    def __getstate__(self) -> dict[str, Any]:
        # the densities' constants are built on first use (_densities): a pickle
        # leaves them out, so that scoring a model does not change its bytes
        state = dict(self.__dict__)
        state.update(_log_norm=None, _log_pdet=0.0, _factor=np.zeros((0, 0)))
        return state

    # -- the family ---------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.means.shape[0])

    def __getitem__(self, k: int) -> Gaussian:
        """The Gaussian of the ``k``-th class (with ``mean``, ``covariance``, ``sample``)."""
        self._densities()
        return Gaussian(self.means[k], self._factor, self.whitening, self._log_pdet)

    @property
    def n_features(self) -> int:
        return int(self.means.shape[1])

    @property
    def rank(self) -> int:
        return int(self.whitening.shape[1])

    def _densities(self) -> float:
        # Built on first use: classification does not need the pseudo-determinant.
        if self._log_norm is None:
            var = np.diag(self.covariance)
            # the factor A = cov W (A A' = cov on its range, W' A = I);
            # pdet(A A') = det(A'A)
            factor = self.covariance @ self.whitening
            A = factor[var > 0]
            _, log_pdet = np.linalg.slogdet(A.T @ A)
            self._factor, self._log_pdet = factor, float(log_pdet)
            self._log_norm = -0.5 * (float(log_pdet) + self.rank * _LOG_2PI)
        return self._log_norm

    def _centred_blocks(self, X: Any) -> Iterator[tuple[int, _F]]:
        """``(start, X[start:stop] - centre)`` for blocks of rows, in one reused buffer."""
        X = np.asarray(X)
        n = X.shape[0]
        buf = np.empty((min(n, _BLOCK_ROWS), self.n_features))
        for s in range(0, n, _BLOCK_ROWS):
            e = min(s + _BLOCK_ROWS, n)
            yield s, np.subtract(X[s:e], self.centre, out=buf[: e - s])

    def relative_log_prob(self, X: Any) -> _F:
        """``log p_k(x)`` up to a term that is the same for every class, shape (n, K).

        ``(x - c)' coef_k + quad_k``: one matrix product with ``X - centre``
        (centred a block of rows at a time), or with ``X`` itself when the
        centre is near the origin (see :data:`ORIGIN_RATIO`); what is dropped
        is ``log_norm - |W'(x - c)|^2 / 2``.
        """
        # (K, p) x (p, rows) is the shape OpenBLAS runs fastest for few classes
        if self._origin:
            # rows_dot: the shape for the BLAS's threads, float32 converted by blocks
            res = rows_dot(np.asarray(X), self.coef)
            res += self._quad_origin
            return res
        out = np.empty((len(self), np.shape(X)[0]))
        for s, D in self._centred_blocks(X):
            out[:, s : s + D.shape[0]] = self.coef @ D.T
        out += self.quad[:, None]
        return out.T

    def log_prob(self, X: Any) -> _F:
        """Log density of each row under each class, shape (n, K)."""
        log_norm = self._densities()
        out = np.empty((np.shape(X)[0], len(self)))
        for s, D in self._centred_blocks(X):
            Z = D @ self.whitening
            row = log_norm - 0.5 * np.einsum("ij,ij->i", Z, Z)
            out[s : s + D.shape[0]] = Z @ self.whitened_means.T + row[:, None]
        out += self.quad
        return out

    def log_prob_terms(self, X: Any) -> Terms:
        """``log_prob`` as scaled terms that cannot overflow (see :mod:`bayesrule.models._terms`).

        With ``d = (x - centre) 2^-E``: the quadratic ``-|d W|^2 / 2``
        (the same for every class), the linear ``d coef_k'`` and the constant
        ``quad_k + log_norm``, with exponents ``2E``, ``E`` and 0.
        """
        log_norm = self._densities()
        X = np.asarray(X, dtype=np.float64)
        n, K = X.shape[0], len(self)
        E = np.maximum(row_exponent(X), matrix_exponent(self.centre))
        with np.errstate(under="ignore"):
            D = np.ldexp(X, -E) - np.ldexp(self.centre, -E)
        e_w, e_c = matrix_exponent(self.whitening), matrix_exponent(self.coef)
        Z = D @ np.ldexp(self.whitening, -e_w)
        quad = np.broadcast_to(-0.5 * np.einsum("ij,ij->i", Z, Z)[:, None], (n, K))
        lin = D @ np.ldexp(self.coef, -e_c).T
        const = np.broadcast_to(self.quad + log_norm, (n, K))
        return [(quad, 2 * E + 2 * e_w), (lin, E + e_c), (const, 0)]

    def __repr__(self) -> str:
        return (
            f"TiedGaussian(n_classes={len(self)}, n_features={self.n_features}, rank={self.rank})"
        )

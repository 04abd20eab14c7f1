"""Gaussian models of a class, and the family of per-class Gaussians of QDA and RDA.

:class:`Gaussian` is one multivariate normal built from a mean and a
covariance. :class:`GaussianFamily` holds one Gaussian per class, each with
its own covariance, derived from :class:`bayesrule.stats.ScatterStats` by
:meth:`GaussianFamily.from_stats`: the per-class covariance estimate, Friedman's
blend with the pooled covariance, shrinkage, ``reg_param`` and the test for
singular covariances all live there, so that every estimator built on it
(QDA, RDA, RDA-CV) derives its classes in exactly the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import LinAlgError, cholesky
from scipy.linalg.lapack import dtrtri

from .._util.parallel import in_parallel, prediction_threads
from .._util.products import rows_dot
from ._covariances import (
    _label,
    blended_covariance,
    check_own_weight,
    class_covariances,
    correlation_singular,
    mean_pooled_variance,
    range_scale,
)
from ._terms import Terms, matrix_exponent, row_exponent
from ._types import LOG_2PI as _LOG_2PI
from ._types import Floats as _F
from .covariance import (
    shrink,
)

__all__ = [
    "Gaussian",
    "GaussianFamily",
    "SingularCovarianceError",
    "blended_covariance",
    "check_own_weight",
    "class_covariances",
    "correlation_singular",
    "mean_pooled_variance",
    "range_scale",
    "TriangularStack",
    "stacked_log_prob",
]


#: Default relative eigenvalue tolerance: directions whose variance is below
#: ``RANK_TOL * largest variance`` are treated as having none.
RANK_TOL = 1e-10


class Gaussian:
    r"""A multivariate normal distribution, possibly degenerate.

    It is stored through a factor ``A`` of its covariance, ``Sigma = A A'``
    (``p x r``, rank ``r``), and a matching whitening ``W`` with ``W' A = I``,
    so that ``(x - mean) W`` has identity covariance. When ``r < p`` the
    distribution lives on the affine subspace ``mean + range(A)``;
    :meth:`log_prob` is then the density with respect to Lebesgue measure on
    that subspace (pseudo-determinant form), evaluated at the projection of
    ``x`` onto it.

    Parameters
    ----------
    mean : array-like of shape (p,)
    factor : array-like of shape (p, r)
    whitening : array-like of shape (p, r)
    log_pdet : float
        Log pseudo-determinant of ``A A'``.
    """

    def __init__(
        self,
        mean: ArrayLike,
        factor: ArrayLike,
        whitening: ArrayLike | None,
        log_pdet: float,
        *,
        cholesky: ArrayLike | None = None,
    ) -> None:
        self.mean = np.asarray(mean, dtype=float)
        self.factor = np.asarray(factor, dtype=float)
        self._whitening = None if whitening is None else np.asarray(whitening, dtype=float)
        self._derived_whitening = whitening is None
        self.log_pdet = float(log_pdet)
        self.log_norm = -0.5 * (self.log_pdet + self.rank * _LOG_2PI)
        # For a full-rank covariance, the lower Cholesky factor C (Sigma = C C')
        # gives an upper triangular whitening C^-T: Mahalanobis distances take
        # products with its column blocks, about 5/8 of a full product's work.
        self.cholesky = None if cholesky is None else np.asarray(cholesky, dtype=float)
        if self._whitening is None and self.cholesky is None:
            raise ValueError("a Gaussian needs a whitening matrix or a Cholesky factor.")

    def __getstate__(self) -> dict[str, Any]:
        # a whitening derived from the Cholesky factor on first use is a cache:
        # a pickle leaves it out, so that predicting does not change a model's bytes
        state = dict(self.__dict__)
        if self.cholesky is not None and getattr(self, "_derived_whitening", False):
            state["_whitening"] = None
        return state

    @property
    def whitening(self) -> _F:
        """``W`` with ``W' A = I`` (for a Cholesky factor, ``C^-T``)."""
        if self._whitening is None:
            assert self.cholesky is not None
            inverse, info = dtrtri(self.cholesky, lower=1)
            if info != 0:  # pragma: no cover - a Cholesky factor has a positive diagonal
                raise np.linalg.LinAlgError("singular Cholesky factor")
            self._whitening = np.ascontiguousarray(np.tril(inverse).T)
        return self._whitening

    @classmethod
    def from_cholesky(cls, mean: ArrayLike, chol: ArrayLike) -> Gaussian:
        """From the lower Cholesky factor ``C`` of a positive definite covariance ``C C'``."""
        C = np.asarray(chol, dtype=float)
        d = np.diag(C)
        if np.any(d <= 0):
            raise ValueError("a Cholesky factor must have a positive diagonal.")
        return cls(mean, C, None, 2.0 * float(np.sum(np.log(d))), cholesky=C)

    @classmethod
    def from_eigh(
        cls, mean: ArrayLike, eigenvalues: ArrayLike, eigenvectors: ArrayLike
    ) -> Gaussian:
        """From positive eigenvalues ``(r,)`` and orthonormal eigenvectors ``(p, r)``."""
        lam = np.asarray(eigenvalues, dtype=float)
        V = np.asarray(eigenvectors, dtype=float)
        if np.any(lam <= 0):
            raise ValueError("eigenvalues of a Gaussian must be positive.")
        root = np.sqrt(lam)
        return cls(mean, V * root, V / root, float(np.sum(np.log(lam))))

    @classmethod
    def from_covariance(
        cls, mean: ArrayLike, covariance: ArrayLike, *, tol: float = RANK_TOL
    ) -> Gaussian:
        """Build from a symmetric positive semi-definite covariance matrix.

        Eigen-directions with eigenvalue at most ``tol * max eigenvalue`` are dropped.
        """
        cov = np.asarray(covariance, dtype=float)
        lam, V = np.linalg.eigh(cov)
        keep = lam > tol * max(float(lam[-1]), 0.0)
        if not keep.any():
            raise ValueError("the covariance matrix is zero: no direction has any variance.")
        return cls.from_eigh(mean, lam[keep][::-1], V[:, keep][:, ::-1])

    @property
    def n_features(self) -> int:
        return int(self.mean.size)

    @property
    def rank(self) -> int:
        return int(self.factor.shape[1])

    @property
    def covariance(self) -> _F:
        return self.factor @ self.factor.T

    def mahalanobis2(self, X: ArrayLike, block_rows: int = 8192) -> _F:
        """Squared Mahalanobis distance of each row to the mean, shape (n,)."""
        X = np.asarray(X, dtype=float)
        out = np.empty(X.shape[0])
        W = self.whitening
        p = W.shape[0]
        # C^-T is upper triangular: its columns a:b have no entries below row b,
        # so those columns of (x - mean) C^-T need only the first b features.
        parts = min(4, p) if self.cholesky is not None else 1
        edges = np.linspace(0, W.shape[1], parts + 1).astype(int).tolist()
        for s in range(0, X.shape[0], block_rows):
            D = X[s : s + block_rows] - self.mean
            total = np.zeros(D.shape[0])
            for a, b in zip(edges[:-1], edges[1:], strict=True):
                rows = b if self.cholesky is not None else p
                Z = D[:, :rows] @ W[:rows, a:b]
                total += np.einsum("ij,ij->i", Z, Z)
            out[s : s + block_rows] = total
        return out

    def log_prob(self, X: ArrayLike) -> _F:
        """Log density at each row of ``X``, shape (n,)."""
        return self.log_norm - 0.5 * self.mahalanobis2(X)

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        """Draw ``n`` rows."""
        return self.mean + rng.standard_normal((n, self.rank)) @ self.factor.T

    def __repr__(self) -> str:
        return f"Gaussian(n_features={self.n_features}, rank={self.rank})"


def stacked_log_prob(gaussians: Sequence[Gaussian], X: ArrayLike) -> _F:
    """Log densities of several Gaussians, shape (n, len(gaussians)).

    Gaussians with Cholesky factors of one size share :class:`TriangularStack`
    (one product per column block for all of them, with the triangles' blocks
    only); otherwise each costs one product of ``X`` with its whitening, the
    Gaussians shared among threads, each running single-threaded BLAS products.
    """
    gaussians = list(gaussians)
    stack = TriangularStack.of(gaussians)
    if stack is not None:
        return stack.log_prob(X)
    X = np.asarray(X, dtype=float)
    n, p = X.shape
    work = float(n) * p * p * len(gaussians)
    columns = in_parallel(lambda g: g.log_prob(X), gaussians, work)
    return np.column_stack(columns) if columns else np.empty((n, 0))


class TriangularStack:
    r"""The upper triangular whitenings of K full-rank Gaussians, stacked by column blocks.

    For a Gaussian with lower Cholesky factor ``C`` (``Sigma = C C'``), the
    whitening ``U = C^-T`` is upper triangular: the columns ``a:b`` of
    ``(x - mean) U`` need only the first ``b`` features. The columns are cut
    into ``parts`` blocks; block ``j`` of every class is stacked side by
    side into one ``(b_j, K (b_j - a_j))`` matrix, so that each block costs
    one GEMM for all the classes together, and the multiply-adds per row are
    ``K p^2 (parts + 1) / (2 parts)``, against ``K p^2`` for a full rotation
    per class (scikit-learn's) and ``K p (p + 1) / 2`` for the triangles
    themselves.

    The rows are centred once, at the mean of the means ``c``:
    ``(x - mean_k) U_k = (x - c) U_k - (mean_k - c) U_k``. Row blocks are
    shared among threads (:func:`~bayesrule._util.parallel.in_parallel`),
    each making single-threaded products, as many as the BLAS would use
    also on a busy machine (:func:`~bayesrule._util.parallel.prediction_threads`:
    the threads never wait for one another); ``n_threads`` sets them.
    """

    #: columns per block of the triangle (more blocks: closer to half the work,
    #: smaller products)
    BLOCK_COLUMNS = 96
    MAX_PARTS = 8
    #: entries of the products of one row block (a few MiB: kept in cache)
    BLOCK_ENTRIES = 1 << 19

    def __init__(self, means: _F, whitenings: Sequence[_F], log_norms: _F) -> None:
        K, p = means.shape
        self.n_classes, self.n_features = K, p
        self.log_norms = np.asarray(log_norms, dtype=np.float64)
        self.centre = means.mean(axis=0)
        parts = int(min(self.MAX_PARTS, max(1, round(p / self.BLOCK_COLUMNS))))
        self.edges = np.linspace(0, p, parts + 1).astype(int).tolist()
        self.blocks: list[tuple[int, _F, _F]] = []
        offsets = [(m - self.centre) @ U for m, U in zip(means, whitenings, strict=True)]
        for a, b in zip(self.edges[:-1], self.edges[1:], strict=True):
            S = np.concatenate([U[:b, a:b] for U in whitenings], axis=1)
            o = np.concatenate([off[a:b] for off in offsets])
            self.blocks.append((b, np.asfortranarray(S), o))

    @classmethod
    def of(cls, gaussians: Sequence[Gaussian]) -> TriangularStack | None:
        """The stack of ``gaussians``, or None unless all have Cholesky factors of one size."""
        if not gaussians or any(g.cholesky is None for g in gaussians):
            return None
        p = gaussians[0].n_features
        if any(g.n_features != p or g.rank != p for g in gaussians):
            return None
        return cls(
            np.array([g.mean for g in gaussians]),
            [g.whitening for g in gaussians],
            np.array([g.log_norm for g in gaussians]),
        )

    @property
    def multiply_adds(self) -> float:
        """Multiply-adds of the products per row."""
        return float(sum(b * S.shape[1] for b, S, _ in self.blocks))

    def mahalanobis2(self, X: ArrayLike) -> _F:
        """Squared Mahalanobis distances of each row to each class's mean, shape (n, K)."""
        X = np.asarray(X, dtype=np.float64)
        n, K = X.shape[0], self.n_classes
        out = np.empty((n, K))
        widest = max(S.shape[1] for _, S, _ in self.blocks)
        rows = max(16, self.BLOCK_ENTRIES // max(widest, 1))
        starts = list(range(0, n, rows))

        def block(s: int) -> None:
            D = X[s : s + rows] - self.centre
            total = np.zeros((D.shape[0], K))
            for b, S, o in self.blocks:
                Z = D[:, :b] @ S
                Z -= o
                Z3 = Z.reshape(D.shape[0], K, -1)
                total += np.einsum("ikj,ikj->ik", Z3, Z3)
            out[s : s + rows] = total

        work = float(n) * self.multiply_adds
        in_parallel(block, starts, work, threads=prediction_threads(work))
        return out

    def log_prob(self, X: ArrayLike) -> _F:
        """Log density of each row under each class, shape (n, K)."""
        out = self.mahalanobis2(X)
        out *= -0.5
        out += self.log_norms
        return out


def gaussian_terms(gaussians: Sequence[Gaussian], X: ArrayLike) -> Terms:
    r"""Log densities of several Gaussians as scaled terms that cannot overflow.

    With ``c`` the mean of the means, ``d = (x - c) 2^-E`` (entries below 2
    in magnitude), ``z_k = d W_k`` and ``w_k = (mean_k - c) W_k``:
    ``log p_k(x) = 2^2E (-|z_k|^2 / 2) + 2^E z_k . w_k - |w_k|^2 / 2 + log_norm_k``.
    Classes with the same whitening share their quadratic term bit for bit,
    so that it cancels exactly from Bayes' rule. Shape (n, len(gaussians)).
    """
    X = np.asarray(X, dtype=np.float64)
    n, K = X.shape[0], len(gaussians)
    c = np.mean([g.mean for g in gaussians], axis=0)
    E = np.maximum(row_exponent(X), matrix_exponent(c))
    with np.errstate(under="ignore"):
        D = np.ldexp(X, -E) - np.ldexp(c, -E)
    quad = np.empty((n, K))
    lin = np.empty((n, K))
    const = np.empty(K)
    e_w = np.empty(K, dtype=np.int64)
    seen: list[tuple[Any, int]] = []
    for k, g in enumerate(gaussians):
        W = g.whitening
        e_w[k] = matrix_exponent(W)
        Ws = np.ldexp(W, -int(e_w[k]))
        same = next((j for Wj, j in seen if Wj.shape == W.shape and np.array_equal(Wj, W)), None)
        if same is None:
            Z = D @ Ws
            quad[:, k] = -0.5 * np.einsum("ij,ij->i", Z, Z)
            seen.append((W, k))
        else:
            Z = D @ Ws
            quad[:, k] = quad[:, same]
        w = (g.mean - c) @ W
        lin[:, k] = Z @ w
        const[k] = -0.5 * float(w @ w) + g.log_norm
    return [(quad, 2 * E + 2 * e_w), (lin, E + e_w), (np.broadcast_to(const, (n, K)), 0)]


# --------------------------------------------------------------------------- family
class SingularCovarianceError(LinAlgError):
    """A class covariance that is singular (or not finite) for the given ``tol``.

    Both a ``ValueError`` and a ``numpy.linalg.LinAlgError`` (what
    scikit-learn's QDA raises). ``detail`` is the diagnosis alone (which
    class, which eigenvalues), so that an estimator can add the remedy in its
    own parameters' names, after ``lead`` (scikit-learn's wording, if any);
    ``label`` and ``n_samples`` name the class and its row count.
    """

    def __init__(
        self,
        detail: str,
        remedy: str,
        *,
        lead: str = "",
        label: Any = None,
        n_samples: int | None = None,
    ) -> None:
        super().__init__(f"{lead} {detail}: {remedy}." if lead else f"{detail}: {remedy}.")
        self.detail = detail
        self.label = label
        self.n_samples = n_samples


class GaussianFamily:
    r"""One Gaussian per class, each with its own covariance (QDA, RDA).

    ``log_prob(X)`` stacks the classes' log densities, shape
    ``(n, len(family))``; ``family[i]`` is the :class:`Gaussian` of the ``i``-th
    class with data (in the order of ``stats.classes``).

    Parameters
    ----------
    gaussians : sequence of Gaussian
    covariances : ndarray of shape (len(gaussians), p, p)
        The covariance of each Gaussian, as derived (kept exactly, not
        recomputed from a factor).
    shrinkage : ndarray of shape (len(gaussians),), optional
        The shrinkage intensity of each class.
    """

    def __init__(
        self,
        gaussians: Sequence[Gaussian],
        covariances: ArrayLike,
        shrinkage: ArrayLike | None = None,
    ) -> None:
        self.gaussians = list(gaussians)
        self.covariances = np.asarray(covariances, dtype=float)
        self.shrinkage = (
            np.zeros(len(self.gaussians)) if shrinkage is None else np.asarray(shrinkage, float)
        )
        # Classes sharing one covariance (RDA with alpha=0) have the same
        # quadratic term: Bayes' rule then needs only the linear one.
        self._linear: tuple[_F, _F, _F] | None = None
        # the stacked triangular whitenings of the prediction path, built on first use
        self._stack: TriangularStack | Literal[False] | None = None
        if len(self.gaussians) > 1:
            W0 = self.gaussians[0].whitening
            if all(
                g.whitening.shape == W0.shape and np.array_equal(g.whitening, W0)
                for g in self.gaussians[1:]
            ):
                c = np.mean([g.mean for g in self.gaussians], axis=0)
                w = np.array([(g.mean - c) @ W0 for g in self.gaussians])  # (K, r)
                const = -0.5 * np.einsum("kr,kr->k", w, w) + [g.log_norm for g in self.gaussians]
                self._linear = (c, w @ W0.T, const)

    @classmethod
    def from_stats(
        cls,
        stats: Any,
        *,
        ddof: float = 1.0,
        alpha: float = 1.0,
        shrinkage: Any = None,
        ridge: float = 0.0,
        reg_param: float = 0.0,
        tol: float = 1.0e-4,
        covariances: _F | None = None,
        constant_unit_scale: bool = False,
        target_scale: _F | None = None,
    ) -> GaussianFamily:
        r"""The Gaussians of the classes with positive weight in ``stats`` (a ScatterStats).

        For each class ``k``:

        1. ``Sigma_k = S_k / (W_k - ddof)`` (or ``covariances[k]``);
        2. Friedman's blend ``alpha Sigma_k + (1 - alpha) Sigma_pooled``;
        3. shrinkage: a float ``a`` gives ``(1 - a) Sigma + a tr(Sigma)/p I``;
           'auto'/'ledoit-wolf'/'oas' estimate ``a_k`` per class in its
           correlation scale and give ``(1 - a_k) Sigma + a_k mu_k diag(Sigma)``
           (free of the features' units; with ``constant_unit_scale`` a
           feature constant within the class has 1 in ``diag(Sigma)`` there,
           scikit-learn's model, see :func:`class_covariances`);
        4. ``ridge``: ``(1 - ridge) Sigma + ridge t I`` with ``t = tr(Sigma_pooled)/p``
           the average within-class variance (one ridge for every class,
           relative to the data's scale: see :func:`mean_pooled_variance`);
        5. ``(1 - reg_param) Sigma + reg_param I`` (in the features' units);
        6. the result is singular — a ValueError naming the class — when a
           feature has no variance in it, or when its correlation matrix has
           an eigenvalue at most ``tol`` (see :func:`correlation_singular`;
           ``tol`` has no units).

        QDA is ``alpha=1``; RDA(alpha, gamma) is ``shrinkage=gamma``.

        With ``target_scale`` ``s`` (shape (p,), positive; RDA passes
        :func:`range_scale`), a float shrinkage (step 3) and the ridge
        (step 4) act on ``D^-1 Sigma D^-1`` (``D = diag(s)``, the covariance of
        ``x / s``; ``t`` that matrix's average pooled variance) and the result
        is mapped back by ``D (.) D``: the targets become ``(tr(D^-1 Sigma
        D^-1)/p) D^2`` and ``t D^2``, diagonal in the features' units. Without
        float shrinkage and ridge it changes nothing; ``reg_param`` stays in
        the features' units.

        Raises
        ------
        SingularCovarianceError
            A ValueError naming the singular class.
        ValueError
            A class with too little weight for its own covariance (``alpha > 0``).

        References
        ----------
        J. H. Friedman, "Regularized discriminant analysis", Journal of the
        American Statistical Association 84(405), 1989.
        """
        rho = float(ridge)
        gamma = 0.0 if shrinkage is None or isinstance(shrinkage, str) else float(shrinkage)
        scale = None
        if target_scale is not None and (gamma > 0 or rho > 0):
            scale = np.asarray(target_scale, dtype=np.float64)
            if isinstance(shrinkage, str):
                raise ValueError(
                    f"target_scale applies to a float shrinkage; got shrinkage={shrinkage!r}."
                )
            if scale.shape != (stats.n_features,) or not np.all(np.isfinite(scale) & (scale > 0)):
                raise ValueError(
                    f"target_scale must hold {stats.n_features} positive finite numbers."
                )
        covs, intensity, lower = class_covariances(
            stats,
            ddof=ddof,
            alpha=alpha,
            shrinkage=None if scale is not None else shrinkage,
            covariances=covariances,
            constant_unit_scale=constant_unit_scale,
        )
        p = stats.n_features
        if scale is not None:
            # the shrinkage and the ridge in the coordinates x / scale
            outer = np.outer(scale, scale)
            covs /= outer
            if gamma > 0:
                intensity[:] = gamma
                lower = gamma * np.einsum("kii->k", covs) / p
                for i in range(covs.shape[0]):
                    covs[i] = shrink(covs[i], gamma)
        if rho:
            t = mean_pooled_variance(stats, ddof, scale)
            covs *= 1.0 - rho
            covs[:, np.arange(p), np.arange(p)] += rho * t
            lower = (1.0 - rho) * lower + rho * t
        if scale is not None:
            covs *= outer
            # the eigenvalues of D C D are at least lmin(C) min(s)^2
            lower = lower * float(np.min(scale)) ** 2
        # the eigenvalues of (1 - r) Sigma_shrunk + r I are at least (1 - r) lower + r
        r = float(reg_param)
        floors = r + (1.0 - r) * lower
        if r:
            covs *= 1.0 - r
            covs[:, np.arange(p), np.arange(p)] += r
        present = np.flatnonzero(stats.weights > 0)
        gaussians = []
        for i, k in enumerate(present):
            what = f"the covariance matrix of class {_label(stats.classes, k)}"
            if not np.all(np.isfinite(covs[i])):
                raise ValueError(
                    f"{what} is not finite: X holds values so large that their squares "
                    "overflow float64; rescale X."
                )
            singular, reason = correlation_singular(covs[i], tol, lower=float(floors[i]))
            chol = None
            if not singular:
                try:
                    chol = cholesky(covs[i], lower=True)
                except LinAlgError:
                    reason = "its Cholesky factorisation failed"
            if chol is None:
                raise SingularCovarianceError(
                    f"{what} is singular ({reason}; {stats.counts[k]} samples, {p} features)",
                    "regularise it (shrinkage, ridge, reg_param or a smaller alpha)",
                    label=stats.classes[k],
                    n_samples=int(stats.counts[k]),
                )
            gaussians.append(Gaussian.from_cholesky(stats.means[k], chol))
        return cls(gaussians, covs, intensity)

    def __len__(self) -> int:
        return len(self.gaussians)

    def __getitem__(self, i: int) -> Gaussian:
        return self.gaussians[i]

    def __getstate__(self) -> dict[str, Any]:
        # the stack is a cache of the prediction path, rebuilt on first use: a
        # pickle (and so a model's bytes) is the same before and after predicting
        state = dict(self.__dict__)
        state["_stack"] = None
        return state

    @property
    def means(self) -> _F:
        """The class means, shape (len(family), p)."""
        return np.array([g.mean for g in self.gaussians])

    def log_prob(self, X: ArrayLike) -> _F:
        """Log density of each row under each class, shape (n, len(family))."""
        stack = getattr(self, "_stack", None)
        if stack is None:
            stack = self._stack = TriangularStack.of(self.gaussians) or False
        if isinstance(stack, TriangularStack):
            return stack.log_prob(X)
        return stacked_log_prob(self.gaussians, X)

    def relative_log_prob(self, X: ArrayLike) -> _F:
        """``log_prob`` up to a term the same for every class, shape (n, len(family)).

        When every class has the same covariance, the shared quadratic term
        is left out and one linear product remains; otherwise ``log_prob``.
        """
        if self._linear is None:
            return self.log_prob(X)
        c, coef, const = self._linear
        with np.errstate(over="ignore", invalid="ignore"):
            out = rows_dot(np.asarray(X, dtype=np.float64) - c, coef)
        out += const
        return out

    def log_prob_terms(self, X: ArrayLike) -> Terms:
        """``log_prob`` as scaled terms that cannot overflow (see :mod:`bayesrule.models._terms`)."""
        return gaussian_terms(self.gaussians, X)

    def __repr__(self) -> str:
        p = self.covariances.shape[-1] if self.covariances.ndim == 3 else 0
        return f"GaussianFamily(n_classes={len(self)}, n_features={p})"

"""Gaussian models of one class, built from a mean and a covariance."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg.lapack import dtrtri

from .._parallel import in_parallel

__all__ = ["Gaussian", "stacked_log_prob"]

_F = NDArray[np.float64]
_LOG_2PI = float(np.log(2.0 * np.pi))

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
        self.log_pdet = float(log_pdet)
        self.log_norm = -0.5 * (self.log_pdet + self.rank * _LOG_2PI)
        # For a full-rank covariance, the lower Cholesky factor C (Sigma = C C')
        # gives an upper triangular whitening C^-T: Mahalanobis distances take
        # products with its column blocks, about 5/8 of a full product's work.
        self.cholesky = None if cholesky is None else np.asarray(cholesky, dtype=float)
        if self._whitening is None and self.cholesky is None:
            raise ValueError("a Gaussian needs a whitening matrix or a Cholesky factor.")

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

    Each Gaussian costs one product of ``X`` with its whitening (for a
    Cholesky factor, with the blocks of the triangle only); the Gaussians are
    shared among threads, each running single-threaded BLAS products.
    """
    X = np.asarray(X, dtype=float)
    n, p = X.shape
    work = float(n) * p * p * len(gaussians)
    columns = in_parallel(lambda g: g.log_prob(X), list(gaussians), work)
    return np.column_stack(columns) if columns else np.empty((n, 0))

"""Gaussian models of one class, built from a mean and a covariance."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["Gaussian", "stacked_log_prob"]

_F = NDArray[np.float64]
_LOG_2PI = float(np.log(2.0 * np.pi))

#: Default relative eigenvalue tolerance: directions whose variance is below
#: ``RANK_TOL * largest variance`` are treated as having none.
RANK_TOL = 1e-10


class Gaussian:
    r"""A multivariate normal distribution, possibly degenerate.

    It is stored through the eigendecomposition of its covariance,
    ``Sigma = V diag(lam) V'``, keeping the ``r`` directions whose eigenvalue
    exceeds ``tol * max(lam)``. When ``r < p`` the distribution lives on the
    affine subspace ``mean + range(V)``; :meth:`log_prob` is then the density
    with respect to Lebesgue measure on that subspace, evaluated at the
    projection of ``x`` onto it (the pseudo-determinant and pseudo-inverse
    form).

    Parameters
    ----------
    mean : array-like of shape (p,)
    eigenvalues : array-like of shape (r,)
        Positive variances along the principal axes.
    eigenvectors : array-like of shape (p, r)
        Orthonormal principal axes.
    """

    def __init__(self, mean: ArrayLike, eigenvalues: ArrayLike, eigenvectors: ArrayLike) -> None:
        self.mean = np.asarray(mean, dtype=float)
        self.eigenvalues = np.asarray(eigenvalues, dtype=float)
        self.eigenvectors = np.asarray(eigenvectors, dtype=float)
        if np.any(self.eigenvalues <= 0):
            raise ValueError("eigenvalues of a Gaussian must be positive.")
        self.whitening = self.eigenvectors / np.sqrt(self.eigenvalues)
        self.log_norm = -0.5 * (
            float(np.sum(np.log(self.eigenvalues))) + self.eigenvalues.size * _LOG_2PI
        )

    @classmethod
    def from_covariance(
        cls, mean: ArrayLike, covariance: ArrayLike, *, tol: float = RANK_TOL
    ) -> Gaussian:
        """Build from a symmetric positive semi-definite covariance matrix."""
        cov = np.asarray(covariance, dtype=float)
        lam, V = np.linalg.eigh(cov)
        keep = lam > tol * max(float(lam[-1]), 0.0)
        if not keep.any():
            raise ValueError("the covariance matrix is zero: no direction has any variance.")
        lam, V = lam[keep][::-1], V[:, keep][:, ::-1]
        return cls(mean, lam, V)

    @property
    def n_features(self) -> int:
        return int(self.mean.size)

    @property
    def rank(self) -> int:
        return int(self.eigenvalues.size)

    @property
    def covariance(self) -> _F:
        V = self.eigenvectors
        return (V * self.eigenvalues) @ V.T

    def log_prob(self, X: ArrayLike) -> _F:
        """Log density at each row of ``X``, shape (n,)."""
        Z = (np.asarray(X, dtype=float) - self.mean) @ self.whitening
        return self.log_norm - 0.5 * np.einsum("ij,ij->i", Z, Z)

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        """Draw ``n`` rows."""
        Z = rng.standard_normal((n, self.rank))
        return self.mean + (Z * np.sqrt(self.eigenvalues)) @ self.eigenvectors.T

    def __repr__(self) -> str:
        return f"Gaussian(n_features={self.n_features}, rank={self.rank})"


def stacked_log_prob(gaussians: Sequence[Gaussian], X: ArrayLike, block_rows: int = 2048) -> _F:
    """Log densities of several Gaussians at once, shape (n, len(gaussians)).

    All whitening matrices are stacked side by side so that every block of
    rows needs a single matrix product, ``X W`` with ``W = [W_1 ... W_K]``;
    ``(x - m_k) W_k = x W_k - m_k W_k``.
    """
    X = np.asarray(X, dtype=float)
    W = np.hstack([g.whitening for g in gaussians])
    shift = np.concatenate([g.mean @ g.whitening for g in gaussians])
    ranks = np.array([g.rank for g in gaussians])
    starts = np.concatenate([[0], np.cumsum(ranks)[:-1]])
    log_norm = np.array([g.log_norm for g in gaussians])
    out = np.empty((X.shape[0], len(gaussians)))
    for s in range(0, X.shape[0], block_rows):
        Z: Any = X[s : s + block_rows] @ W
        Z -= shift
        Z *= Z
        out[s : s + block_rows] = log_norm - 0.5 * np.add.reduceat(Z, starts, axis=1)
    return out

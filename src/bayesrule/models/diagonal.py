"""Gaussians with diagonal covariance: the class model of Gaussian naive Bayes."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._products import rows_dot
from ._missing import as_2d_params, finish, split_missing

__all__ = ["DiagonalGaussian"]

_F = NDArray[np.float64]
_LOG_2PI = float(np.log(2.0 * np.pi))


class DiagonalGaussian:
    r"""Independent normal features, ``x_j ~ N(mean_j, var_j)``, for one or several classes.

    Parameters
    ----------
    mean : array-like of shape (n_features,) or (n_classes, n_features)
    var : array-like of the same shape
        Positive variances.

    ``log_prob`` of a (n, p) matrix is (n,) for one class and (n, n_classes)
    for several, computed for all classes by two matrix products,
    ``-(1/2) [x^2 A' - 2 x B' + c]`` with ``A = 1/var`` and ``B = mean/var``;
    the data and means are first centred at the average class mean so the
    expansion loses no digits on data far from the origin. NaN entries are
    missing and their term is dropped (exact marginalisation).
    """

    def __init__(self, mean: ArrayLike, var: ArrayLike) -> None:
        self._single, (self.mean, self.var) = as_2d_params(mean, var)
        if np.any(~(self.var > 0)):
            raise ValueError("var of a DiagonalGaussian must be positive.")
        self.center = self.mean.mean(axis=0)
        d = self.mean - self.center
        self._A = 1.0 / self.var
        self._B = d * self._A
        self._C = d * self._B + np.log(self.var) + _LOG_2PI

    def log_prob(self, X: ArrayLike) -> _F:
        """Log density of each row, shape (n,) or (n, n_classes)."""
        Xc = np.asarray(X, dtype=np.float64) - self.center
        # Optimistic: a NaN shows up in the products; only then split it out.
        missing = None
        X0 = Xc
        with np.errstate(invalid="ignore", over="ignore"):
            out = rows_dot(X0 * X0, self._A)
            out -= 2.0 * rows_dot(X0, self._B)
        if not np.all(np.isfinite(out)):
            X0, missing = split_missing(Xc)
            out = rows_dot(X0 * X0, self._A)
            out -= 2.0 * rows_dot(X0, self._B)
        out += self._C.sum(axis=1)
        if missing is not None:
            out -= missing @ self._C.T
        out *= -0.5
        return finish(out, self._single)

    def __getitem__(self, k: int) -> DiagonalGaussian:
        return DiagonalGaussian(self.mean[k], self.var[k])

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        """Draw ``n`` rows from a single-class model."""
        return self.mean[0] + np.sqrt(self.var[0]) * rng.standard_normal((n, self.var.shape[1]))

    def __repr__(self) -> str:
        k, p = self.mean.shape
        return f"DiagonalGaussian(n_classes={k}, n_features={p})"

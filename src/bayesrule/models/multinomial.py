"""The multinomial class model of multinomial naive Bayes."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from .._products import rows_dot
from ._missing import as_2d_params, finish, split_missing

__all__ = ["Multinomial", "log_multinomial_coefficient"]

_F = NDArray[np.float64]


def log_multinomial_coefficient(X0: Any) -> _F:
    """``log (sum_j x_j)! - sum_j log x_j!`` per row of non-negative counts, shape (n,)."""
    if sp.issparse(X0):
        X0 = sp.csr_matrix(X0)
        total = np.asarray(X0.sum(axis=1)).ravel()
        per = np.add.reduceat(
            np.append(gammaln(X0.data + 1.0), 0.0), np.minimum(X0.indptr[:-1], X0.data.size)
        )
        per[np.diff(X0.indptr) == 0] = 0.0
        return gammaln(total + 1.0) - per
    X0 = np.asarray(X0)
    return gammaln(X0.sum(axis=1) + 1.0) - gammaln(X0 + 1.0).sum(axis=1)


class Multinomial:
    r"""Counts ``x ~ Multinomial(sum_j x_j, theta)`` for one or several classes.

    Parameters
    ----------
    log_theta : array-like of shape (n_features,) or (n_classes, n_features)
        Log category probabilities; ``exp(log_theta)`` sums to 1 per class.
    mean_total : float or array-like of shape (n_classes,), default=1.0
        Mean number of trials per row; :meth:`sample` draws each row's total
        from a Poisson distribution with this mean.

    ``log_prob`` is the log probability of each row *given its total*. With
    missing (NaN) entries it is the probability of the observed counts given
    their total, whose category probabilities are ``theta`` renormalised over
    the observed features: exactly the model fitted without the missing
    features, when ``theta`` was estimated with additive smoothing.
    """

    def __init__(self, log_theta: ArrayLike, mean_total: ArrayLike = 1.0) -> None:
        self._single, (self.log_theta,) = as_2d_params(log_theta)
        self.mean_total = np.broadcast_to(
            np.asarray(mean_total, dtype=float), (self.log_theta.shape[0],)
        ).copy()

    def relative_log_prob(self, X: Any) -> _F:
        """``log_prob`` minus the multinomial coefficient (the same for every class)."""
        if not sp.issparse(X):
            # Optimistic: without NaN this one product is the answer; a NaN
            # shows up in the product, and only then are missing entries split out.
            out = rows_dot(np.asarray(X, dtype=np.float64), self.log_theta)
            if np.all(np.isfinite(out)):
                return out
        X0, missing = split_missing(X)
        out = rows_dot(X0, self.log_theta)
        if missing is not None:
            total = np.asarray(X0.sum(axis=1)).reshape(-1, 1)
            observed_mass = 1.0 - np.asarray(missing @ np.exp(self.log_theta).T)
            with np.errstate(divide="ignore"):
                out -= total * np.log(np.clip(observed_mass, 0.0, None))
        return out

    def log_prob(self, X: Any) -> _F:
        """Log probability of each row given its total, shape (n,) or (n, n_classes)."""
        X0, _ = split_missing(X)
        out = self.relative_log_prob(X) + log_multinomial_coefficient(X0)[:, None]
        return finish(out, self._single)

    def __getitem__(self, k: int) -> Multinomial:
        return Multinomial(self.log_theta[k], self.mean_total[k])

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        """Draw ``n`` rows of counts from a single-class model."""
        theta = np.exp(self.log_theta[0])
        totals = rng.poisson(self.mean_total[0], size=n)
        return rng.multinomial(totals, theta / theta.sum()).astype(np.float64)

    def __repr__(self) -> str:
        k, p = self.log_theta.shape
        return f"Multinomial(n_classes={k}, n_features={p})"

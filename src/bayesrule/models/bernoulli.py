"""Independent Bernoulli features: the class model of Bernoulli naive Bayes."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from .._products import rows_dot
from ._missing import as_2d_params, finish, split_missing

__all__ = ["Bernoulli"]

_F = NDArray[np.float64]


class Bernoulli:
    r"""``x_j ~ Bernoulli(p_j)`` independently, for one or several classes.

    Parameters
    ----------
    log_p : array-like of shape (n_features,) or (n_classes, n_features)
        ``log p_j``, each below 0 (probabilities strictly between 0 and 1).

    ``log_prob(X)`` takes 0/1 data (dense with NaN as missing, or
    scipy.sparse) and is ``X (log p - log(1 - p))' + sum_j log(1 - p_j)``:
    one matrix product for every class.
    """

    def __init__(self, log_p: ArrayLike) -> None:
        self._single, (self.log_p,) = as_2d_params(log_p)
        if np.any(~(self.log_p < 0)):
            raise ValueError("log_p of a Bernoulli must be negative (p strictly below 1).")
        self.log_q = np.log(-np.expm1(self.log_p))

    def log_prob(self, X: Any) -> _F:
        """Log probability of each row, shape (n,) or (n, n_classes)."""
        if not sp.issparse(X):
            # Optimistic: a NaN shows up in the product; only then split it out.
            out = rows_dot(np.asarray(X, dtype=np.float64), self.log_p - self.log_q)
            out += self.log_q.sum(axis=1)
            if np.all(np.isfinite(out)):
                return finish(out, self._single)
        X0, missing = split_missing(X)
        out = rows_dot(X0, self.log_p - self.log_q) + self.log_q.sum(axis=1)
        if missing is not None:
            out -= np.asarray(missing @ self.log_q.T)
        return finish(out, self._single)

    def __getitem__(self, k: int) -> Bernoulli:
        return Bernoulli(self.log_p[k])

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        """Draw ``n`` rows of 0/1 from a single-class model."""
        return (rng.random((n, self.log_p.shape[1])) < np.exp(self.log_p[0])).astype(np.float64)

    def __repr__(self) -> str:
        k, p = self.log_p.shape
        return f"Bernoulli(n_classes={k}, n_features={p})"

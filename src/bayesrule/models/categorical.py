"""Independent categorical features: the class model of categorical naive Bayes."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

__all__ = ["Categorical"]

_F = NDArray[np.float64]


class Categorical:
    r"""``x_j ~ Categorical(probs_j)`` independently, for one or several classes.

    Parameters
    ----------
    log_probs : array-like of shape (n_features, n_categories) or
        (n_classes, n_features, n_categories)
        Log probabilities of the codes ``0 .. n_categories - 1`` (``-inf`` for
        padding of features with fewer categories).
    log_unseen : array-like of shape (n_features,) or (n_classes, n_features)
        Log probability given to a code at or beyond ``n_categories`` (a
        category never seen in training): the smoothed probability of an
        unseen category, instead of an error.

    ``log_prob`` gathers the table entries of all features and classes by
    one sparse one-hot matrix product; NaN entries are missing.
    """

    def __init__(self, log_probs: ArrayLike, log_unseen: ArrayLike) -> None:
        lp = np.asarray(log_probs, dtype=float)
        self._single = lp.ndim == 2
        self.log_probs = lp[None] if self._single else lp
        K, p, C = self.log_probs.shape
        self.log_unseen = np.broadcast_to(np.asarray(log_unseen, dtype=float), (K, p)).copy()
        # one table row per (feature, code), plus an "unseen" code per feature
        table = np.concatenate([self.log_probs, self.log_unseen[:, :, None]], axis=2)
        self._table = table.reshape(K, p * (C + 1)).T

    def log_prob(self, X: ArrayLike) -> _F:
        """Log probability of each row, shape (n,) or (n, n_classes)."""
        X = np.asarray(X, dtype=np.float64)
        K, p, C = self.log_probs.shape
        rows, cols = np.nonzero(~np.isnan(X))
        codes = np.minimum(X[rows, cols], C).astype(np.intp)
        onehot = sp.csr_matrix(
            (np.ones(rows.size), (rows, cols * (C + 1) + codes)), shape=(X.shape[0], p * (C + 1))
        )
        # a sparse product touches only the stored entries, so -inf stays -inf
        out = np.asarray(onehot @ self._table)
        return out[:, 0] if self._single else out

    def __getitem__(self, k: int) -> Categorical:
        return Categorical(self.log_probs[k], self.log_unseen[k])

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        """Draw ``n`` rows of codes from a single-class model."""
        cum = np.cumsum(np.exp(self.log_probs[0]), axis=1)
        cum /= cum[:, -1:]
        u = rng.random((n, cum.shape[0]))
        return (u[:, :, None] > cum[None]).sum(axis=2).astype(np.float64)

    def __repr__(self) -> str:
        k, p, c = self.log_probs.shape
        return f"Categorical(n_classes={k}, n_features={p}, n_categories={c})"

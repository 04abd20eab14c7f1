"""Independent Bernoulli features: the class model of Bernoulli naive Bayes."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .._util.products import note_finite, rows_dot
from ..stats import class_label
from ._checks import feature_name
from ._family import SmoothedFamily, Smoothing
from ._missing import as_2d_params, finish, split_missing
from ._terms import Terms, scale_rows
from ._types import Floats as _F

__all__ = ["Bernoulli", "bernoulli_log_p"]


def bernoulli_log_p(stats: Any, alpha: Any) -> _F:
    """``log((S_kj + alpha) / (V_kj + 2 alpha))`` for every class: smoothed feature probabilities.

    ``stats`` is a :class:`bayesrule.stats.CountStats` of 0/1 data (``S``: the
    weighted number of ones, ``V``: the weight of the rows observing the
    feature); ``alpha`` a checked float or per-feature array. A class without
    data gets ``log 1/2``.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.log(stats.sums + alpha) - np.log(stats.feature_weights + 2.0 * alpha))


class Bernoulli(SmoothedFamily):
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

    @classmethod
    def _smoothed(cls, stats: Any, s: Smoothing) -> Bernoulli:
        """``p_kj = (S_kj + alpha) / (V_kj + 2 alpha)`` from 0/1 data's ``CountStats``.

        A probability of 1 or undefined (``alpha=0``) raises a ValueError.
        """
        present, a, alpha, feature_names = s
        log_p = bernoulli_log_p(stats, a)[present]
        if np.any(~(log_p < 0)):
            k, j = (int(v[0]) for v in np.nonzero(~(log_p < 0)))
            name = feature_name(feature_names, j)
            label = class_label(stats.classes[present], k)
            weight = float(np.asarray(stats.feature_weights)[present][k, j])
            if float(np.broadcast_to(np.asarray(a, dtype=float), (log_p.shape[1],))[j]) > 0:
                # alpha is positive: it vanished in rounding against the class's weight
                raise ValueError(
                    f"feature {name!r} has probability 1 in class {label!r} to float64 "
                    f"precision: alpha={alpha} is negligible against the class's total weight "
                    f"{weight:g}; rescale sample_weight (only the weights relative to alpha "
                    "matter) or raise alpha."
                )
            raise ValueError(
                f"alpha={alpha} leaves feature {name!r} with "
                f"probability 1 (or undefined) in class {label!r}; "
                "use alpha > 0."
            )
        return cls(log_p)

    def log_prob(self, X: Any) -> _F:
        """Log probability of each row, shape (n,) or (n, n_classes)."""
        if not sp.issparse(X):
            # Optimistic: a NaN shows up in the product; only then split it out.
            # rows_dot converts float32 (the binarized data) a block at a time
            out = rows_dot(np.asarray(X), self.log_p - self.log_q)
            out += self.log_q.sum(axis=1)
            with np.errstate(over="ignore", invalid="ignore"):
                finite = bool(np.isfinite(np.sum(out)))  # one sum, no temporary
            if finite or np.all(np.isfinite(out)):
                out = finish(out, self._single)
                note_finite(out)  # the estimator need not look again
                return out
        X0, missing = split_missing(X)
        out = rows_dot(X0, self.log_p - self.log_q) + self.log_q.sum(axis=1)
        if missing is not None:
            out -= np.asarray(missing @ self.log_q.T)
        return finish(out, self._single)

    def log_prob_terms(self, X: Any) -> Terms:
        """``log_prob`` as scaled terms: ``2^E u (log p - log q)'`` and ``sum_j log q_j``.

        (``u = x 2^-E``; for 0/1 data ``E`` is at most 1.)
        """
        U, E = scale_rows(X)
        U, missing = split_missing(U)
        linear = rows_dot(U, self.log_p - self.log_q)
        const = np.broadcast_to(self.log_q.sum(axis=1), linear.shape).copy()
        if missing is not None:
            const -= np.asarray(missing @ self.log_q.T)
        return [(linear, E), (const, 0)]

    def __len__(self) -> int:
        return int(self.log_p.shape[0])

    def __getitem__(self, k: int) -> Bernoulli:
        return Bernoulli(self.log_p[k])

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        """Draw ``n`` rows of 0/1 from a single-class model."""
        return (rng.random((n, self.log_p.shape[1])) < np.exp(self.log_p[0])).astype(np.float64)

    def __repr__(self) -> str:
        k, p = self.log_p.shape
        return f"Bernoulli(n_classes={k}, n_features={p})"

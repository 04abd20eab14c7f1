"""Independent Poisson counts: the class model of Poisson naive Bayes."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.special import gammaln

from .._util.products import rows_dot
from ..stats import class_label
from ._checks import feature_name, smoothing
from ._missing import as_2d_params, finish, split_missing
from ._terms import Terms, scale_rows
from ._types import Floats as _F

__all__ = ["Poisson", "poisson_rates", "poisson_reference"]


def poisson_rates(stats: Any, alpha: Any) -> _F:
    """``(S_kj + alpha) / V_kj`` for every class: the smoothed mean count of each feature.

    ``stats`` is a :class:`bayesrule.stats.CountStats`; a class without data
    gets ``alpha``.
    """
    V = stats.feature_weights
    return np.asarray((stats.sums + alpha) / np.where(V > 0, V, 1.0))


def _sum_log_factorials(X0: Any) -> _F:
    if sp.issparse(X0):
        G = sp.csr_matrix(X0, copy=True)
        G.data = gammaln(G.data + 1.0)
        return np.asarray(G.sum(axis=1)).ravel()
    return gammaln(np.asarray(X0) + 1.0).sum(axis=1)


def log_factorial_scaled(X0: _F, U: _F, E: Any) -> _F:
    """``2^-E sum_j log x_j!`` per row, finite where ``log x_j!`` itself overflows.

    ``U = X0 2^-E``. Beyond the float64 range Stirling's leading term
    ``x (log x - 1)`` is used, ``2^E u (log x - 1)``: its relative error is
    below 1e-300 there.
    """
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        g = gammaln(X0 + 1.0)
        big = ~np.isfinite(g)
        scaled = np.ldexp(np.where(big, 0.0, g), -np.broadcast_to(E, X0.shape))
        if big.any():
            scaled = np.where(big, U * (np.log(X0) - 1.0), scaled)
    return np.asarray(scaled.sum(axis=1))


def poisson_reference(rate: ArrayLike) -> tuple[_F, _F]:
    """``(ref, D)``: each feature's largest class rate, and ``D = log(rate / ref)`` to rounding.

    ``rate`` of shape (n_classes, n_features), positive; ``ref`` of shape
    (n_features,), ``D`` of the shape of ``rate``. The Poisson scores
    ``x D' - sum_j (rate_j - ref_j)`` differ from the log probabilities by a
    term the same for every class, and keep the digits of their differences
    for large counts whose class rates are close.

    Near 1 the ratio's logarithm is ``log1p((rate - ref) / ref)``, exact to
    rounding however close the rates; farther the ratio itself, or (where
    it would underflow) the difference of the logarithms. Where the
    reference sums overflow float64 (rates near its maximum) the reference
    is 1: the plain ``log(rate)``.
    """
    rate = np.atleast_2d(np.asarray(rate, dtype=np.float64))
    log_rate = np.log(rate)
    ref = rate.max(axis=0)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        ratio = rate / ref
        near = np.log1p((rate - ref) / ref)
        far = np.log(np.maximum(ratio, 1e-300))
        D = np.where(ratio >= 0.5, near, np.where(ratio > 1e-300, far, log_rate - np.log(ref)))
        sums_finite = np.isfinite(ref.sum()) and np.all(np.isfinite((rate - ref).sum(axis=1)))
    if not sums_finite:
        return np.ones_like(ref), log_rate
    return ref, D


class Poisson:
    r"""``x_j ~ Poisson(rate_j)`` independently, for one or several classes.

    Parameters
    ----------
    rate : array-like of shape (n_features,) or (n_classes, n_features)
        Positive rates.

    ``log_prob(X) = X log(rate)' - sum_j rate_j - sum_j log x_j!``; dense
    (NaN = missing, its term dropped) or scipy.sparse input.

    The classes are compared relative to a reference rate of each feature,
    ``ref_j`` (the largest rate of the feature over the classes):
    ``relative_log_prob(X) = X D' - sum_j (rate_j - ref_j)`` with
    ``D_kj = log(rate_kj / ref_j)`` computed from ``(rate_kj - ref_j) / ref_j``
    (``log1p``), so that large counts whose class rates are close keep the
    digits of their differences.
    """

    def __init__(self, rate: ArrayLike) -> None:
        self._single, (self.rate,) = as_2d_params(rate)
        if np.any(~(self.rate > 0)):
            raise ValueError("rate of a Poisson must be positive.")
        self.log_rate = np.log(self.rate)
        # The class scores relative to a reference rate of each feature: the
        # classes' terms x log(rate_kj) - rate_kj are 1e17 for counts of 4e15,
        # their differences a few units, which the rounding of the terms
        # themselves would swallow.
        self.ref, self.log_ratio = poisson_reference(self.rate)
        self.log_ref = np.log(self.ref)
        self._delta = self.rate - self.ref
        self._delta_sum = self._delta.sum(axis=1)
        self._rate_sum = self.rate.sum(axis=1)

    @classmethod
    def from_stats(cls, stats: Any, *, alpha: Any = 1.0, feature_names: Any = None) -> Poisson:
        """The Poisson model of each class with positive weight in ``stats``.

        Parameters
        ----------
        stats : bayesrule.stats.CountStats
        alpha : float or array-like of shape (n_features,), default=1.0
            Added to each class's count total of each feature, so that a
            feature never seen non-zero keeps a positive rate:
            ``rate_kj = (S_kj + alpha) / V_kj``.
        feature_names : sequence of str, optional
            Used in error messages.

        Raises
        ------
        ValueError
            If alpha is negative or of the wrong shape, a class never observes
            a feature, or a rate is 0 (``alpha=0``).
        """
        present, a = smoothing(stats, alpha, True, feature_names)
        with np.errstate(over="ignore", invalid="ignore"):
            rate = poisson_rates(stats, a)[present]
            total = rate.sum(axis=1)
        if not (np.all(np.isfinite(rate)) and np.all(np.isfinite(total))):
            bad = ~np.isfinite(rate) | ~np.isfinite(total)[:, None]
            k, j = (int(v[0]) for v in np.nonzero(bad))
            label = class_label(stats.classes[present], k)
            raise ValueError(
                f"the Poisson rates of class {label!r} overflow float64 (feature "
                f"{feature_name(feature_names, j)!r}: (count + alpha) / weight with alpha={alpha} "
                f"and weight {stats.feature_weights[present][k, j]:g}): alpha is too large or the "
                "class's sample weights are too small; lower alpha or rescale sample_weight."
            )
        if np.any(~(rate > 0)):
            k, j = (int(v[0]) for v in np.nonzero(~(rate > 0)))
            raise ValueError(
                f"alpha={alpha} leaves feature {feature_name(feature_names, j)!r} with rate 0 in "
                f"class {class_label(stats.classes[present], k)!r}; use alpha > 0."
            )
        return cls(rate)

    def relative_log_prob(self, X: Any) -> _F:
        """``log_prob`` less ``sum_j (x_j log ref_j - ref_j - log x_j!)`` over the observed features.

        That part is the same for every class (``ref_j`` is the reference
        rate of feature ``j``, :attr:`ref`), so Bayes' rule does not need it:
        ``X D' - sum_j (rate_kj - ref_j)`` with ``D_kj = log(rate_kj / ref_j)``,
        missing (NaN) entries dropped. Shape (n, n_classes).
        """
        X0, missing = split_missing(X)
        return self._relative(X0, missing)

    def _relative(self, X0: Any, missing: Any) -> _F:
        out = rows_dot(X0, self.log_ratio) - self._delta_sum
        if missing is not None:
            out += np.asarray(missing @ self._delta.T)
        return out

    def log_prob(self, X: Any) -> _F:
        """Log probability of each row, shape (n,) or (n, n_classes)."""
        X0, missing = split_missing(X)
        # the relative scores with the reference rates' sum put back (-sum_j rate_kj
        # over the observed features), then x log(ref)' - log x! as one column
        out = rows_dot(X0, self.log_ratio) - self._rate_sum
        if missing is not None:
            out += np.asarray(missing @ self.rate.T)
        shared = np.asarray(X0 @ self.log_ref, dtype=np.float64).ravel()
        shared -= _sum_log_factorials(X0)
        out += shared[:, None]
        return finish(out, self._single)

    def log_prob_terms(self, X: Any) -> Terms:
        """``log_prob`` as scaled terms that cannot overflow (see :mod:`bayesrule.models._terms`).

        With ``u = x 2^-E``: ``2^E u D'`` and ``-sum_j (rate_kj - ref_j)`` (the
        relative scores), then the parts the same for every class (bitwise
        equal columns, which cancel exactly between the classes):
        ``2^E u log(ref)'``, ``-sum_j ref_j`` and the log factorials, for
        dense ``X``; missing entries dropped.
        """
        U, E = scale_rows(X)
        U, missing = split_missing(U)
        n, K = U.shape[0], len(self)
        linear = rows_dot(U, self.log_ratio)
        const = np.broadcast_to(-self._delta_sum, linear.shape).copy()
        shared_const = np.full(n, -float(self.ref.sum()))
        if missing is not None:
            const += missing @ self._delta.T
            shared_const += missing @ self.ref
        shared_linear = np.asarray(U @ self.log_ref, dtype=np.float64)
        X0 = np.ldexp(U, E)
        return [
            (linear, E),
            (const, 0),
            (np.broadcast_to(shared_linear[:, None], (n, K)), E),
            (np.broadcast_to(shared_const[:, None], (n, K)), 0),
            (np.broadcast_to(-log_factorial_scaled(X0, U, E)[:, None], (n, K)), E),
        ]

    def __len__(self) -> int:
        return int(self.rate.shape[0])

    def __getitem__(self, k: int) -> Poisson:
        return Poisson(self.rate[k])

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        """Draw ``n`` rows of counts from a single-class model."""
        return rng.poisson(self.rate[0], size=(n, self.rate.shape[1])).astype(np.float64)

    def __repr__(self) -> str:
        k, p = self.rate.shape
        return f"Poisson(n_classes={k}, n_features={p})"

"""The multinomial class model of multinomial naive Bayes, and complement naive Bayes' weights."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from .._util.products import note_finite, noted_finite, rows_dot
from ._family import SmoothedFamily, Smoothing
from ._missing import as_2d_params, finish, split_missing
from ._terms import Terms, scale_rows
from ._types import Floats as _F

__all__ = [
    "ComplementWeights",
    "Multinomial",
    "complement_log_theta",
    "log_multinomial_coefficient",
    "multinomial_log_theta",
]

#: rows of the observed-entry indicator formed at once for sparse input
_ROWS = 4096


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
    total = gammaln(X0.sum(axis=1, dtype=np.float64) + 1.0)
    # log 0! = 0: only the non-zero entries (a minority in count data) add a
    # term, summed per row from their row counts (no index arrays)
    nonzero = X0 != 0
    counts = np.count_nonzero(nonzero, axis=1)
    if int(counts.sum()) > X0.size // 2:
        return np.asarray(total - gammaln(np.asarray(X0, dtype=np.float64) + 1.0).sum(axis=1))
    terms = gammaln(np.asarray(X0[nonzero], dtype=np.float64) + 1.0)
    per = np.zeros(X0.shape[0])
    rows = np.flatnonzero(counts)
    if rows.size:
        starts = np.concatenate(([0], np.cumsum(counts[rows])[:-1]))
        per[rows] = np.add.reduceat(terms, starts)
    return np.asarray(total - per)


def _check_counts(sums: _F) -> None:
    if not np.all(np.isfinite(sums)):
        k, j = (int(v[0]) for v in np.nonzero(~np.isfinite(sums)))
        raise ValueError(
            f"the weighted count of feature {j} in class {k} overflows float64: X or "
            "sample_weight holds values so large that their sums overflow; rescale them."
        )


def _log_normalised(counts: _F) -> _F:
    """``log(c_kj / sum_j c_kj)`` of non-negative counts, without overflow in the sum."""
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        logs = np.log(counts)
        top = np.max(logs, axis=1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        return np.asarray(logs - top - np.log(np.sum(np.exp(logs - top), axis=1, keepdims=True)))


def multinomial_log_theta(sums: _F, alpha: Any) -> _F:
    """``log((S_kj + alpha) / sum_j (S_kj + alpha))`` for every class: smoothed probabilities.

    A class without data gets ``log(alpha_j / sum_j alpha_j)``. The sum is
    taken in log space, so counts near the float64 maximum do not overflow it.
    """
    _check_counts(sums)
    with np.errstate(over="ignore"):
        smoothed = sums + alpha
    _check_counts(smoothed)
    return _log_normalised(smoothed)


def complement_log_theta(sums: _F, alpha: Any) -> _F:
    """``log theta~_kj``: the smoothed category probabilities of every class's complement.

    ``theta~_kj = (sum_{l != k} S_lj + alpha) / sum_j (sum_{l != k} S_lj + alpha)``
    (Rennie et al.), for every class. The counts of the other classes are
    added directly, not as the total minus the class's own (which cancels to
    0 when one class holds a count of 1e300).
    """
    _check_counts(sums)
    K = sums.shape[0]
    with np.errstate(over="ignore"):
        comp = (np.ones((K, K)) - np.eye(K)) @ sums + alpha
    _check_counts(comp)
    return _log_normalised(comp)


def _observed_mass(missing: Any, theta: _F) -> _F:
    """``sum_{j observed} theta_kj`` per row and class, shape (n, K), without cancellation.

    ``missing`` is the 0/1 indicator of :func:`split_missing`. For dense input
    the observed entries are summed directly. A sparse indicator is never
    made dense: ``sum_j theta_kj - sum_{j missing} theta_kj`` is exact enough
    unless the missing features carry most of the mass, and only those rows
    are summed directly, a block at a time.
    """
    if not sp.issparse(missing):
        return rows_dot(1.0 - missing, theta)
    M = sp.csr_matrix(missing)
    total = theta.sum(axis=1)
    mass = total - np.asarray(M @ theta.T)
    rows = np.flatnonzero((mass < 0.5 * total).any(axis=1))
    for s in range(0, rows.size, _ROWS):
        r = rows[s : s + _ROWS]
        sub = M[r]
        observed = np.ones(sub.shape)
        observed[np.repeat(np.arange(r.size), np.diff(sub.indptr)), sub.indices] = 1.0 - sub.data
        mass[r] = rows_dot(observed, theta)
    return np.asarray(mass)


def _all_finite(out: _F) -> bool:
    """Whether every entry of ``out`` is finite, from one reduction without a temporary.

    A NaN or an infinity makes the sum NaN or infinite; so can finite values
    whose sum overflows, which then only take the general path (same result).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(np.sum(out)))


def _rows_missing(missing: Any) -> NDArray[np.intp]:
    """The rows holding a missing entry (``missing``: the 0/1 indicator, dense or sparse)."""
    return np.flatnonzero(np.asarray(missing.sum(axis=1)).ravel() > 0)


def _row_totals(X0: Any) -> _F:
    return np.asarray(X0.sum(axis=1), dtype=np.float64).reshape(-1, 1)


class Multinomial(SmoothedFamily):
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
    features, when ``theta`` was estimated with additive smoothing. A row
    with nothing observed has probability 1 (log 0), so its posterior is the
    prior.
    """

    def __init__(self, log_theta: ArrayLike, mean_total: ArrayLike = 1.0) -> None:
        self._single, (self.log_theta,) = as_2d_params(log_theta)
        self.mean_total = np.broadcast_to(
            np.asarray(mean_total, dtype=float), (self.log_theta.shape[0],)
        ).copy()

    @classmethod
    def _smoothed(cls, stats: Any, s: Smoothing) -> Multinomial:
        """``theta_kj = (S_kj + alpha) / sum_j (S_kj + alpha)`` from ``CountStats``.

        ``mean_total`` is each class's mean row total, ``sum_j S_kj / W_k``.
        """
        log_theta = multinomial_log_theta(stats.sums, s.alpha)[s.present]
        return cls(log_theta, stats.sums[s.present].sum(axis=1) / stats.weights[s.present])

    def relative_log_prob(self, X: Any) -> _F:
        """``log_prob`` minus the multinomial coefficient (the same for every class)."""
        if not sp.issparse(X):
            # Optimistic: without NaN this one product is the answer; a NaN
            # shows up in the product, and only then are missing entries split out.
            out = rows_dot(np.asarray(X), self.log_theta)
            if noted_finite(out) or _all_finite(out):
                note_finite(out)  # the estimator need not look again
                return out
        X0, missing = split_missing(X)
        out = rows_dot(X0, self.log_theta)
        if missing is not None:
            # renormalise theta over the observed features of the rows that miss some
            # (the others keep exactly the answer they have without a NaN elsewhere); a
            # row with nothing observed (total 0) keeps 0 rather than 0 * log 0
            rows = _rows_missing(missing)
            total = _row_totals(X0[rows])
            with np.errstate(divide="ignore", invalid="ignore"):
                log_mass = np.log(_observed_mass(missing[rows], np.exp(self.log_theta)))
                out[rows] -= np.where(total > 0, total * log_mass, 0.0)
        return out

    def log_prob(self, X: Any) -> _F:
        """Log probability of each row given its total, shape (n,) or (n, n_classes)."""
        X0, _ = split_missing(X)
        out = self.relative_log_prob(X) + log_multinomial_coefficient(X0)[:, None]
        return finish(out, self._single)

    def relative_log_prob_terms(self, X: Any) -> Terms:
        """``relative_log_prob`` as one scaled term: ``2^E relative_log_prob(x 2^-E)``."""
        U, E = scale_rows(X)
        return [(np.asarray(self.relative_log_prob(U), dtype=np.float64), E)]

    def log_prob_terms(self, X: Any) -> Terms:
        """``log_prob`` as scaled terms that cannot overflow (see :mod:`bayesrule.models._terms`).

        ``relative_log_prob`` is homogeneous in ``x`` (for a given pattern of
        missing entries): ``2^E relative_log_prob(x 2^-E)``; the multinomial
        coefficient is the same for every class.
        """
        U, E = scale_rows(X)
        relative = np.asarray(self.relative_log_prob(U), dtype=np.float64)
        n = relative.shape[0]
        X0, _ = split_missing(np.ldexp(U, E))
        with np.errstate(over="ignore", invalid="ignore"):
            coef = log_multinomial_coefficient(X0)
        coef_scaled = np.where(np.isfinite(coef), coef, 0.0)
        E_coef = np.zeros_like(E)
        big = ~np.isfinite(coef)
        if big.any():
            # beyond float64: Stirling's leading term, 2^E sum_j u_j log(U_total / u_j)
            U0, _ = split_missing(U)
            with np.errstate(divide="ignore", invalid="ignore"):
                total = U0.sum(axis=1, keepdims=True)
                lead = np.where(U0 > 0, U0 * (np.log(total) - np.log(U0)), 0.0).sum(axis=1)
            coef_scaled = np.where(big, lead, coef_scaled)
            E_coef = np.where(big[:, None], E, 0)
        return [
            (relative, E),
            (np.broadcast_to(coef_scaled[:, None], (n, len(self))), E_coef),
        ]

    def __len__(self) -> int:
        return int(self.log_theta.shape[0])

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


class ComplementWeights(SmoothedFamily):
    r"""The scores of complement naive Bayes (Rennie et al.), with each class's own multinomial.

    Class ``k`` is scored by the counts of the *other* classes:
    ``score_k(x) = -sum_j x_j log theta~_kj``, or with ``norm``
    ``sum_j x_j w_kj`` with ``w_kj = log theta~_kj / sum_j log theta~_kj``.
    The score is not a log density; :meth:`log_prob` returns it so that
    Bayes' rule can add the log priors, and ``model[k]`` is class ``k``'s
    own smoothed :class:`Multinomial`, from which :meth:`sample` draws.

    Parameters
    ----------
    log_theta_complement : array-like of shape (n_classes, n_features)
        ``log theta~``.
    own : Multinomial
        The classes' own models (the same classes, in the same order).
    norm : bool, default=False

    A missing (NaN) feature is dropped exactly as the model fitted without
    it would: ``theta~`` is renormalised over the observed features. A row
    with nothing observed scores 0 for every class (its posterior is the
    prior).
    """

    def __init__(
        self, log_theta_complement: ArrayLike, own: Multinomial, norm: bool = False
    ) -> None:
        self.log_theta = np.atleast_2d(np.asarray(log_theta_complement, dtype=np.float64))
        if len(own) != self.log_theta.shape[0]:
            raise ValueError(
                f"own must model the same {self.log_theta.shape[0]} classes; got {len(own)}."
            )
        self.own = own
        self.norm = bool(norm)
        lt = self.log_theta
        self.weights = lt / lt.sum(axis=1, keepdims=True) if self.norm else -lt

    #: the complement counts need no feature observed in every class
    checks_observed = False

    @classmethod
    def _smoothed(cls, stats: Any, s: Smoothing, *, norm: bool = False) -> ComplementWeights:
        """The complement counts smoothed by ``alpha`` (and the own models by the same).

        ``norm`` (default False) is Rennie et al.'s weight normalisation.
        """
        own = Multinomial.from_stats(stats, alpha=s.alpha, feature_names=s.names)
        return cls(complement_log_theta(stats.sums, s.alpha)[s.present], own, norm)

    def log_prob(self, X: Any) -> _F:
        """The complement score of each row and class, shape (n, n_classes)."""
        if not sp.issparse(X):
            # Optimistic, as Multinomial.relative_log_prob: a NaN shows up in the product
            out = rows_dot(np.asarray(X), self.weights)
            if noted_finite(out) or _all_finite(out):
                note_finite(out)
                return out
        X0, missing = split_missing(X)
        out = rows_dot(X0, self.weights)
        if missing is None:
            return out
        # the rows that miss a feature, scored on the features they have; the others
        # keep exactly the answer they have without a NaN elsewhere
        rows = _rows_missing(missing)
        X0, missing = X0[rows], missing[rows]
        lt = self.log_theta
        total = _row_totals(X0)
        with np.errstate(divide="ignore", invalid="ignore"):
            L = np.log(_observed_mass(missing, np.exp(lt)))  # -inf: nothing observed
            num = rows_dot(X0, lt) - np.where(total > 0, total * L, 0.0)
            if not self.norm:
                out[rows] = -num
                return out
            n_obs = X0.shape[1] - _row_totals(missing)
            if sp.issparse(missing):
                observed_sum = lt.sum(axis=1) - np.asarray(missing @ lt.T)
            else:
                observed_sum = rows_dot(1.0 - missing, lt)
            summed = observed_sum - np.where(n_obs > 0, n_obs * L, 0.0)
            out[rows] = np.where(n_obs > 0, num / summed, 0.0)
        return out

    def log_prob_terms(self, X: Any) -> Terms:
        """The scores as one scaled term: they are homogeneous in ``x``, ``2^E score(x 2^-E)``."""
        U, E = scale_rows(X)
        return [(np.asarray(self.log_prob(U), dtype=np.float64), E)]

    def __len__(self) -> int:
        return int(self.log_theta.shape[0])

    def __getitem__(self, k: int) -> Multinomial:
        return self.own[k]

    def __repr__(self) -> str:
        k, p = self.log_theta.shape
        return f"ComplementWeights(n_classes={k}, n_features={p}, norm={self.norm})"

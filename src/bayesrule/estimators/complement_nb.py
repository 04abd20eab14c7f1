"""Complement naive Bayes."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._products import rows_dot
from ..models.multinomial import Multinomial
from ..stats import CountStats
from ._nb import (
    _ALPHA,
    _F,
    _PRIOR_PARAMS,
    _DiscreteNB,
    check_observed,
    multinomial_log_theta,
)


class ComplementNB(_DiscreteNB):
    r"""Complement naive Bayes (Rennie et al.), suited to imbalanced text classes.

    Each class is scored by the counts of the *other* classes:
    ``log theta~_kj = log((sum_{l != k} S_lj + alpha) / sum_j (...))`` and
    ``jll_k(x) = -sum_j x_j log theta~_kj + log pi_k``. Unlike scikit-learn
    (issue #14444) the class priors are added, so ``class_prior`` and
    ``fit_prior`` take effect; with uniform priors (``fit_prior=False``) the
    probabilities are scikit-learn's. Dense (NaN = missing) or sparse input.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
    force_alpha : bool, default=True
    fit_prior : bool, default=True
    class_prior : array-like of shape (n_classes,), default=None
    norm : bool, default=False
        Normalise the weights ``log theta~_k`` by their sum (Rennie et al.'s
        weight normalisation).

    Attributes
    ----------
    classes_, class_count_, priors_, class_log_prior_ : as for :class:`MultinomialNB`
    feature_count_ : ndarray of shape (n_classes, n_features)
    feature_all_ : ndarray of shape (n_features,)
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        The weights: ``-log theta~`` (or the normalised form).
    stats_ : CountStats

    Notes
    -----
    The complement score is not a density: ``score_samples`` returns
    ``log sum_k exp(jll_k)`` of the scores, and :meth:`sample` draws from each
    class's own smoothed multinomial.

    References
    ----------
    J. D. M. Rennie, L. Shih, J. Teevan and D. R. Karger, "Tackling the poor
    assumptions of naive Bayes text classifiers", ICML 2003.
    """

    _stats_type = CountStats
    _sparse = True
    _positive = True
    _parameter_constraints: dict = {
        "alpha": _ALPHA,
        "force_alpha": ["boolean"],
        "norm": ["boolean"],
        **_PRIOR_PARAMS,
    }

    def __init__(
        self,
        *,
        alpha: Any = 1.0,
        force_alpha: bool = True,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
        norm: bool = False,
    ) -> None:
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.norm = norm

    def _derive(self, stats: CountStats, priors: _F, **extra: Any) -> dict[str, Any]:
        present = np.asarray(stats.weights > 0)
        check_observed(stats.feature_weights, present, stats.classes, self._feature_names())
        alpha = self._alpha(stats.n_features)
        feature_all = stats.sums.sum(axis=0)
        comp = feature_all + alpha - stats.sums
        with np.errstate(divide="ignore", invalid="ignore"):
            logged = np.log(comp / comp.sum(axis=1, keepdims=True))
        flp = logged / logged.sum(axis=1, keepdims=True) if self.norm else -logged
        W = np.where(present, stats.weights, 1.0)
        own = multinomial_log_theta(stats.sums, alpha)
        return {
            "feature_count_": stats.sums.copy(),
            "feature_all_": feature_all,
            "feature_log_prob_": flp,
            "_logged": logged,
            "_model": Multinomial(own, stats.sums.sum(axis=1) / W),
            **self._prior_attrs(priors),
        }

    def _class_log_density(self, X: Any) -> _F:
        from ..models._missing import split_missing

        X0, missing = split_missing(X)
        if missing is None:
            return rows_dot(X0, self.feature_log_prob_)
        # exact marginalisation: the complement distribution renormalised over
        # the observed features, i.e. the model fitted without the missing ones
        logged = self._logged
        total = np.asarray(X0.sum(axis=1)).reshape(-1, 1)
        with np.errstate(divide="ignore"):
            L = np.log(1.0 - np.asarray(missing @ np.exp(logged).T))
        num = rows_dot(X0, logged) - total * L
        if not self.norm:
            return -num
        n_obs = self.n_features_in_ - np.asarray(missing.sum(axis=1)).reshape(-1, 1)
        summed = logged.sum(axis=1) - np.asarray(missing @ logged.T) - n_obs * L
        return num / summed

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> _F:
        return self._model[k].sample(n, rng)

"""Multinomial naive Bayes."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

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


class MultinomialNB(_DiscreteNB):
    r"""Naive Bayes for counts (e.g. word counts): per class, a multinomial over features.

    A drop-in for ``sklearn.naive_bayes.MultinomialNB``; dense (NaN =
    missing) or scipy.sparse CSR input, never densified. Predictions with
    missing features equal those of the model fitted without them (the
    category probabilities are renormalised over the observed features).

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive smoothing: ``theta_kj = (S_kj + alpha) / sum_j (S_kj + alpha)``.
    force_alpha : bool, default=True
    fit_prior : bool, default=True
    class_prior : array-like of shape (n_classes,), default=None

    Attributes
    ----------
    classes_, class_count_, priors_ : as for :class:`GaussianNB`
    class_log_prior_ : ndarray of shape (n_classes,)
    feature_count_ : ndarray of shape (n_classes, n_features)
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log theta_kj``.
    stats_ : CountStats

    Notes
    -----
    ``score_samples`` and ``predict_joint_log_proba`` include the multinomial
    coefficient, so they are log probabilities of each row given its total;
    predictions skip it (it is the same for every class).

    References
    ----------
    A. McCallum and K. Nigam, "A comparison of event models for naive Bayes
    text classification", AAAI-98 Workshop on Learning for Text
    Categorization, 1998.
    """

    _stats_type = CountStats
    _sparse = True
    _positive = True
    _parameter_constraints: dict = {"alpha": _ALPHA, "force_alpha": ["boolean"], **_PRIOR_PARAMS}

    def __init__(
        self,
        *,
        alpha: Any = 1.0,
        force_alpha: bool = True,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
    ) -> None:
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    def _derive(self, stats: CountStats, priors: _F, **extra: Any) -> dict[str, Any]:
        present = np.asarray(stats.weights > 0)
        check_observed(stats.feature_weights, present, stats.classes, self._feature_names())
        log_theta = multinomial_log_theta(stats.sums, self._alpha(stats.n_features))
        W = np.where(present, stats.weights, 1.0)
        model_theta = np.where(present[:, None], log_theta, -np.log(stats.n_features))
        return {
            "feature_count_": stats.sums.copy(),
            "feature_log_prob_": log_theta,
            "_model": Multinomial(model_theta, stats.sums.sum(axis=1) / W),
            **self._prior_attrs(priors),
        }

    def _class_log_density(self, X: Any) -> _F:
        return self._model.log_prob(X)

    def _relative_joint(self, Xv: Any) -> _F:
        return self._mask_absent(self._model.relative_log_prob(Xv) + self._log_priors())

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> _F:
        return self._model[k].sample(n, rng)

"""Complement naive Bayes."""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from ..models.multinomial import ComplementWeights, complement_log_theta
from ..stats import CountStats
from ._nb import _ALPHA, _F, _PRIOR_PARAMS, _DiscreteNB


class ComplementNB(_DiscreteNB):
    r"""Complement naive Bayes (Rennie et al.), suited to imbalanced text classes.

    Each class is scored by the counts of the *other* classes:
    ``log theta~_kj = log((sum_{l != k} S_lj + alpha) / sum_j (...))`` and
    ``jll_k(x) = -sum_j x_j log theta~_kj + log pi_k``. Unlike scikit-learn
    (issue #14444) the class priors are added, so ``class_prior`` and
    ``fit_prior`` take effect; with uniform priors (``fit_prior=False``) the
    probabilities are scikit-learn's. Dense (NaN = missing) or sparse input;
    a row with nothing observed gets the priors. The scores are
    :meth:`bayesrule.models.ComplementWeights.from_stats`.

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
        alpha = self._alpha(stats.n_features)
        model = ComplementWeights.from_stats(
            stats, alpha=alpha, norm=self.norm, feature_names=self._feature_names()
        )
        logged = complement_log_theta(stats.sums, alpha)
        return {
            "feature_count_": stats.sums.copy(),
            "feature_all_": stats.sums.sum(axis=0),
            "feature_log_prob_": logged / logged.sum(axis=1, keepdims=True)
            if self.norm
            else -logged,
            "_model": model,
            **self._prior_attrs(priors),
        }

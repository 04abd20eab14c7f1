"""Complement naive Bayes."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..models.multinomial import ComplementWeights, complement_log_theta
from ..stats import CountStats
from ._nb import _ALPHA, _F, _PRIOR_PARAMS, _DiscreteNB
from .registry import register


@register("cnb")
class ComplementNB(_DiscreteNB):
    r"""Complement naive Bayes (Rennie et al.), suited to imbalanced text classes.

    Each class is scored by the counts of the *other* classes:
    ``log theta~_kj = log((sum_{l != k} S_lj + alpha) / sum_j (...))`` and
    ``jll_k(x) = -sum_j x_j log theta~_kj``: by default, as scikit-learn,
    the class priors are not part of the decision (they only fill
    ``class_log_prior_``), so predictions and probabilities are
    scikit-learn's. ``add_prior=True`` adds ``log pi_k`` (scikit-learn's
    issue #14444), so that ``class_prior`` and ``fit_prior`` take effect.
    Dense (NaN = missing) or sparse input; a row with nothing observed gets
    uniform probabilities (the priors with ``add_prior``). The scores are
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
    add_prior : bool, default=False
        Add the log class priors to the scores. scikit-learn never does (but
        with one class); with ``norm=True`` the normalised weights are small,
        so the priors then dominate the decision.

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

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from bayesrule import ComplementNB
    >>> X, y = load_digits(return_X_y=True)
    >>> cnb = ComplementNB().fit(X[:1200], y[:1200])
    >>> print(f"{cnb.score(X[1200:], y[1200:]):.2f}")
    0.79
    >>> cnb.feature_all_.shape
    (64,)

    Fitting in two blocks gives the model of one fit:

    >>> stream = ComplementNB().partial_fit(X[:600], y[:600], classes=np.arange(10))
    >>> stream = stream.partial_fit(X[600:1200], y[600:1200])
    >>> bool(np.allclose(stream.feature_log_prob_, cnb.feature_log_prob_))
    True
    """

    spec = _DiscreteNB.spec.replace(
        statistic=CountStats, sparse=True, positive=True, sign_from_stats=True
    )
    #: plain float rows to predict skip scikit-learn's validate_data (see _BaseNB)
    _plain_rows_pass = True
    #: the class models' log densities are new arrays: priors and posteriors in place
    _fresh_log_densities = True
    #: predict's argmax reads the narrow product row-major, in tiles (PredictMixin)
    _argmax_of_rows = True
    #: the sign of wide dense rows to predict is checked with their product
    _fused_sign = True
    _parameter_constraints: dict = {
        "alpha": _ALPHA,
        "force_alpha": ["boolean"],
        "norm": ["boolean"],
        "add_prior": ["boolean"],
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
        add_prior: bool = False,
    ) -> None:
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.norm = norm
        self.add_prior = add_prior

    def _log_priors(self) -> _F:
        # scikit-learn's decision has no priors, except with a single class
        if self.add_prior or self.classes_.size == 1:
            return super()._log_priors()
        return np.zeros(self.classes_.size)

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

"""Multinomial naive Bayes."""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from ..models.multinomial import Multinomial, multinomial_log_theta
from ..stats import CountStats
from ._nb import _ALPHA, _F, _PRIOR_PARAMS, _DiscreteNB
from .registry import register


@register("mnb")
class MultinomialNB(_DiscreteNB):
    r"""Naive Bayes for counts (e.g. word counts): per class, a multinomial over features.

    A drop-in for ``sklearn.naive_bayes.MultinomialNB``; dense (NaN =
    missing) or scipy.sparse CSR input, never densified. Predictions with
    missing features equal those of the model fitted without them (the
    category probabilities are renormalised over the observed features); a
    row with nothing observed gets the priors. The class models are
    :meth:`bayesrule.models.Multinomial.from_stats`.

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
    ``predict_joint_log_proba`` is scikit-learn's: ``log pi_k + sum_j x_j log
    theta_kj``, without the multinomial coefficient (the same for every
    class, so the posteriors do not need it). ``score_samples`` and
    ``class_log_density`` include it: they are log probabilities of each row
    given its total.

    References
    ----------
    A. McCallum and K. Nigam, "A comparison of event models for naive Bayes
    text classification", AAAI-98 Workshop on Learning for Text
    Categorization, 1998.

    Examples
    --------
    Digits, each pixel (0 to 16) read as a count:

    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from bayesrule import MultinomialNB
    >>> X, y = load_digits(return_X_y=True)
    >>> mnb = MultinomialNB().fit(X[:1200], y[:1200])
    >>> print(f"{mnb.score(X[1200:], y[1200:]):.2f}")
    0.87

    Models of two halves merge into the model of all the rows:

    >>> half = MultinomialNB().fit(X[:600], y[:600])
    >>> other = MultinomialNB().fit(X[600:1200], y[600:1200])
    >>> merged = half.merge(other)
    >>> bool((merged.predict(X[1200:]) == mnb.predict(X[1200:])).all())
    True
    >>> bool(np.allclose(merged.feature_count_, mnb.feature_count_))
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
    #: predict_joint_log_proba as scikit-learn's (no multinomial coefficient)
    _joint_is_relative = True
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
        alpha = self._alpha(stats.n_features)
        model = Multinomial.from_stats(stats, alpha=alpha, feature_names=self._feature_names())
        return {
            "feature_count_": stats.sums.copy(),
            "feature_log_prob_": multinomial_log_theta(stats.sums, alpha),
            "_model": model,
            **self._prior_attrs(priors),
        }

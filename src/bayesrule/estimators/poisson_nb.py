"""Poisson naive Bayes."""

from __future__ import annotations

from numbers import Real
from typing import Any

from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval

from ..models.poisson import Poisson, poisson_rates
from ..stats import CountStats
from ._nb import _F, _BaseNB
from ._priors import PRIORS_CONSTRAINT
from .registry import register


@register("pnb")
class PoissonNB(_BaseNB):
    r"""Naive Bayes for counts: per class, independent Poisson features.

    Unlike the multinomial model, the total count of a row carries
    information about the class. Dense (NaN = missing) or sparse input.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
    alpha : float, default=1.0
        Added to each class's count total of each feature, so that a
        feature never seen non-zero in a class keeps a positive rate:
        ``rate_kj = (S_kj + alpha) / V_kj``.

    Attributes
    ----------
    classes_, class_count_, priors_ : as for :class:`GaussianNB`
    feature_count_ : ndarray of shape (n_classes, n_features)
    rate_ : ndarray of shape (n_classes, n_features)
    stats_ : CountStats

    References
    ----------
    S. Kim, H. Seo and H. Rim, "Poisson naive Bayes for text classification
    with feature weighting", Proceedings of IRAL 2003.

    Examples
    --------
    Counts of three events drawn at different rates in two classes; the
    fitted rates recover them:

    >>> import numpy as np
    >>> from bayesrule import PoissonNB
    >>> rng = np.random.default_rng(0)
    >>> rates = np.array([[1.0, 5.0, 2.0], [4.0, 1.0, 2.0]])
    >>> y = rng.integers(0, 2, size=400)
    >>> X = rng.poisson(rates[y])
    >>> pnb = PoissonNB().fit(X, y)
    >>> pnb.rate_.round()
    array([[1., 5., 2.],
           [4., 1., 2.]])
    >>> bool(pnb.score(X, y) > 0.9)
    True
    >>> pnb.predict([[0, 6, 2], [5, 0, 2]])
    array([0, 1])
    """

    spec = _BaseNB.spec.replace(
        statistic=CountStats, sparse=True, positive=True, sign_from_stats=True, poor_score=True
    )
    _parameter_constraints: dict = {
        "priors": PRIORS_CONSTRAINT,
        "alpha": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, priors: ArrayLike | None = None, alpha: float = 1.0) -> None:
        self.priors = priors
        self.alpha = alpha

    def _derive(self, stats: CountStats, priors: _F, **extra: Any) -> dict[str, Any]:
        model = Poisson.from_stats(stats, alpha=self.alpha, feature_names=self._feature_names())
        return {
            "feature_count_": stats.sums.copy(),
            "rate_": poisson_rates(stats, self.alpha),
            "_model": model,
        }

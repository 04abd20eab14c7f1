"""Categorical naive Bayes."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval

from ..models.categorical import Categorical, categorical_tables, check_min_categories
from ..stats import CategoryStats, check_categories
from ._nb import _F, _PRIOR_PARAMS, _DiscreteNB


class CategoricalNB(_DiscreteNB):
    r"""Naive Bayes for categorical features coded ``0, 1, 2, ...``.

    A drop-in for ``sklearn.naive_bayes.CategoricalNB``. A category never
    seen in training gets the smoothed probability
    ``alpha / (N_kj + alpha n_categories_j)`` instead of an IndexError.
    NaN entries are missing. Codes must be non-negative integers (a float
    such as 1.5 is an error, not truncated).

    Parameters
    ----------
    alpha : float, default=1.0
    force_alpha : bool, default=True
    fit_prior : bool, default=True
    class_prior : array-like of shape (n_classes,), default=None
    min_categories : int or array-like of shape (n_features,), default=None
        Minimum number of categories per feature.

    Attributes
    ----------
    classes_, class_count_, priors_, class_log_prior_ : as for :class:`MultinomialNB`
    category_count_ : list of ndarray of shape (n_classes, n_categories_[j])
    feature_log_prob_ : list of ndarray of shape (n_classes, n_categories_[j])
    n_categories_ : ndarray of shape (n_features,)
    stats_ : CategoryStats

    References
    ----------
    C. D. Manning, P. Raghavan and H. Schütze, Introduction to Information
    Retrieval, Cambridge University Press, 2008, section 13.2.
    """

    _inf_reaches_results = False
    #: codes are non-negative: scikit-learn's tag, and its "Negative values" error first
    _positive = True
    _values = "category codes"

    _stats_type = CategoryStats
    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "force_alpha": ["boolean"],
        "min_categories": [None, "array-like", Interval(Integral, 1, None, closed="left")],
        **_PRIOR_PARAMS,
    }

    def __init__(
        self,
        *,
        alpha: float = 1.0,
        force_alpha: bool = True,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
        min_categories: Any = None,
    ) -> None:
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.min_categories = min_categories

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        return tags

    def _prepare_X(self, Xv: Any) -> Any:
        # the codes must be non-negative integers (or NaN): 1.5 is an error, not 1
        check_categories(Xv, self._feature_names())
        return Xv

    def _derive(self, stats: CategoryStats, priors: _F, **extra: Any) -> dict[str, Any]:
        names = self._feature_names()
        alpha = self._alpha(stats.n_features)
        model = Categorical.from_stats(
            stats, alpha=alpha, min_categories=self.min_categories, feature_names=names
        )
        mc = check_min_categories(self.min_categories, stats.n_features)
        n_cat, log_probs, _ = categorical_tables(stats, alpha, mc)
        cc = stats.padded(int(n_cat.max(initial=1))).category_counts
        return {
            "n_categories_": n_cat,
            "category_count_": [cc[:, j, : n_cat[j]].copy() for j in range(stats.n_features)],
            "feature_log_prob_": [log_probs[:, j, : n_cat[j]] for j in range(stats.n_features)],
            "_model": model,
            **self._prior_attrs(priors),
        }

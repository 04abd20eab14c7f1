"""Categorical naive Bayes."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval

from ..models.categorical import Categorical, categorical_tables, check_min_categories
from ..stats import MAX_CATEGORIES, CategoryStats, check_categories
from ._nb import _F, _PRIOR_PARAMS, _DiscreteNB
from .registry import register


@register("catnb")
class CategoricalNB(_DiscreteNB):
    r"""Naive Bayes for categorical features coded ``0, 1, 2, ...``.

    A drop-in for ``sklearn.naive_bayes.CategoricalNB``. A category never
    seen in training gets the smoothed probability
    ``alpha / (N_kj + alpha n_categories_j)`` instead of an IndexError.
    NaN entries are missing. Codes must be integers in
    ``[0, max_categories)`` (a float such as 1.5, a negative code or one
    beyond the bound is an error naming the column and row, not truncated).
    The statistics hold one cell per class, feature and code up to the
    largest code seen (``8 * n_classes * n_features * n_categories`` bytes),
    hence the bound: recode sparse codes such as identifiers with
    scikit-learn's ``OrdinalEncoder``.

    Parameters
    ----------
    alpha : float, default=1.0
    force_alpha : bool, default=True
    fit_prior : bool, default=True
    class_prior : array-like of shape (n_classes,), default=None
    min_categories : int or array-like of shape (n_features,), default=None
        Minimum number of categories per feature (at most ``max_categories``).
    max_categories : int, default=65536
        Bound on the category codes: each must be less than it, at fit and
        at predict time. A code beyond the ones seen in training but within
        the bound is an unseen category (smoothed probability).

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

    Examples
    --------
    Digits, each pixel's value (0 to 16) read as a category:

    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from bayesrule import CategoricalNB
    >>> X, y = load_digits(return_X_y=True)
    >>> catnb = CategoricalNB(min_categories=17).fit(X[:1200], y[:1200])
    >>> print(f"{catnb.score(X[1200:], y[1200:]):.2f}")
    0.87
    >>> catnb.n_categories_[:4]
    array([17, 17, 17, 17])

    Removing rows gives the model of the rows that remain:

    >>> first = CategoricalNB(min_categories=17).fit(X[:600], y[:600])
    >>> catnb = catnb.forget(X[600:1200], y[600:1200])
    >>> bool((catnb.predict(X[1200:]) == first.predict(X[1200:])).all())
    True
    """

    spec = _DiscreteNB.spec.replace(
        statistic=CategoryStats,
        positive=True,
        values="category codes",
        inf_reaches_results=False,
    )
    #: codes are non-negative: scikit-learn's tag, and its "Negative values" error first

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "force_alpha": ["boolean"],
        "min_categories": [None, "array-like", Interval(Integral, 1, None, closed="left")],
        "max_categories": [Interval(Integral, 1, None, closed="left")],
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
        max_categories: int = MAX_CATEGORIES,
    ) -> None:
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.min_categories = min_categories
        self.max_categories = max_categories

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        return tags

    def _prepare_X(self, Xv: Any) -> Any:
        # the codes must be integers in [0, max_categories) (or NaN): 1.5 is an
        # error, not 1, and 1e9 is refused before anything is allocated for it
        check_categories(Xv, self._feature_names(), self.max_categories)
        return Xv

    def _stats_from(self, Xv: Any, y: Any, w: Any, classes: Any) -> CategoryStats:
        # a bincount, no BLAS: no thread budget to take
        return CategoryStats.from_data(
            Xv, y, w, classes=classes, max_categories=self.max_categories
        )

    def _derive(self, stats: CategoryStats, priors: _F, **extra: Any) -> dict[str, Any]:
        names = self._feature_names()
        alpha = self._alpha(stats.n_features)
        if isinstance(self.max_categories, bool):
            raise ValueError(f"max_categories must be an int >= 1; got {self.max_categories!r}.")
        seen = int(stats.category_counts.shape[2])
        if seen > self.max_categories:
            # statistics (e.g. from a model file, or merged) with codes beyond the bound
            raise ValueError(
                f"the statistics hold category codes up to {seen - 1}, beyond "
                f"max_categories={self.max_categories}; raise max_categories."
            )
        # the tables have min_categories cells per class and feature: bound them first
        mc = check_min_categories(self.min_categories, stats.n_features)
        if mc is not None and np.any(mc > self.max_categories):
            raise ValueError(
                f"min_categories must be at most max_categories={self.max_categories}; "
                f"got {int(np.max(mc))}."
            )
        model = Categorical.from_stats(
            stats, alpha=alpha, min_categories=self.min_categories, feature_names=names
        )
        n_cat, log_probs, _ = categorical_tables(stats, alpha, mc)
        cc = stats.padded(int(n_cat.max(initial=1))).category_counts
        return {
            "n_categories_": n_cat,
            "category_count_": [cc[:, j, : n_cat[j]].copy() for j in range(stats.n_features)],
            "feature_log_prob_": [log_probs[:, j, : n_cat[j]] for j in range(stats.n_features)],
            "_model": model,
            **self._prior_attrs(priors),
        }

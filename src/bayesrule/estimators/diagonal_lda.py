"""Diagonal linear discriminant analysis."""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval

from ..models.diagonal import DiagonalGaussian, variance_epsilon
from ..stats import DiagonalStats
from ._nb import _F, _BaseNB
from ._priors import PRIORS_CONSTRAINT
from .registry import register


@register("dlda")
class DiagonalLDA(_BaseNB):
    r"""Diagonal linear discriminant analysis ("naive Bayes + LDA").

    Every class is a normal distribution with independent features and one
    diagonal covariance shared by all classes: the pooled within-class
    variance of each feature. Decision functions are linear in ``x``. It
    often beats both LDA and Gaussian naive Bayes when features outnumber
    samples (Dudoit et al.). The class models are
    :meth:`bayesrule.models.DiagonalGaussian.from_stats` with ``pooled=True``.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
    var_smoothing : float, default=1e-9
        Each feature's variance is raised by ``var_smoothing`` times that
        feature's own variance in all the data, so the model does not depend
        on the features' units (unlike :class:`GaussianNB`, which keeps
        scikit-learn's ``var_smoothing`` times the *largest* variance). A
        feature constant in all the data borrows the smallest positive
        variance of the others.
    bias : bool, default=False
        False: the unbiased pooled variance ``sum_k M2_k / (sum_k V_k - K)``;
        True: the maximum-likelihood ``sum_k M2_k / sum_k V_k``.

    Attributes
    ----------
    classes_, class_count_, priors_ : as for :class:`GaussianNB`
    means_ : ndarray of shape (n_classes, n_features)
    var_ : ndarray of shape (n_features,)
        The pooled variance plus ``epsilon_``.
    epsilon_ : ndarray of shape (n_features,)
        The variance added to each feature.
    coef_ : ndarray of shape (n_classes, n_features)
        ``means_ / var_``: the linear discriminant weights.
    intercept_ : ndarray of shape (n_classes,)
        ``-(1/2) sum_j means_^2 / var_ + log priors_``.
    stats_ : DiagonalStats

    References
    ----------
    S. Dudoit, J. Fridlyand and T. P. Speed, "Comparison of discrimination
    methods for the classification of tumors using gene expression data",
    Journal of the American Statistical Association 97(457), 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from bayesrule import DiagonalLDA
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> dlda = DiagonalLDA().fit(X, y)
    >>> print(f"{dlda.score(X, y):.2f}")
    0.94
    >>> dlda.coef_.shape
    (2, 30)

    Removing rows gives the model of the rows that remain:

    >>> first = DiagonalLDA().fit(X[:400], y[:400])
    >>> dlda = dlda.forget(X[400:], y[400:])
    >>> bool(np.allclose(dlda.predict_proba(X), first.predict_proba(X)))
    True
    """

    spec = _BaseNB.spec.replace(statistic=DiagonalStats)
    #: a discriminant analysis: its decision is linear in x, as LDA's (naive Bayes has none)
    has_decision_function = True
    #: a stream's first rows (one row: no variance yet) wait for more
    waits_for_rows = True
    squares_deviations = True
    _parameter_constraints: dict = {
        "priors": PRIORS_CONSTRAINT,
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
        "bias": ["boolean"],
    }

    def __init__(
        self, *, priors: ArrayLike | None = None, var_smoothing: float = 1e-9, bias: bool = False
    ) -> None:
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.bias = bias

    def _derive(self, stats: DiagonalStats, priors: _F, **extra: Any) -> dict[str, Any]:
        model = DiagonalGaussian.from_stats(
            stats,
            var_smoothing=self.var_smoothing,
            pooled=True,
            ddof=0.0 if self.bias else 1.0,
            feature_names=self._feature_names(),
            per_feature_smoothing=True,
        )
        var = model.var[0].copy()
        means = stats.means
        with np.errstate(divide="ignore"):
            log_priors = np.log(priors)
        return {
            "means_": means.copy(),
            "var_": var,
            "epsilon_": variance_epsilon(stats, self.var_smoothing, per_feature=True),
            "coef_": means / var,
            "intercept_": -0.5 * (means * means / var).sum(axis=1) + log_priors,
            "_model": model,
        }

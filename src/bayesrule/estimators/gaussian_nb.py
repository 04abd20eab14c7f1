"""Gaussian naive Bayes."""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval

from ..models.diagonal import DiagonalGaussian, variance_epsilon
from ..stats import DiagonalStats
from ._nb import _F, _BaseNB, per_class
from ._priors import PRIORS_CONSTRAINT
from .registry import register


@register("gnb")
class GaussianNB(_BaseNB):
    r"""Gaussian naive Bayes: per class, independent normal features.

    A drop-in for ``sklearn.naive_bayes.GaussianNB`` (same parameters,
    fitted attributes, predictions and probabilities), fitted from
    :class:`bayesrule.stats.DiagonalStats`. ``var_smoothing`` is applied only
    when the parameters are derived, from the merged statistics, so
    ``partial_fit`` and ``merge`` give exactly the model ``fit`` gives
    (scikit-learn's ``partial_fit`` fixes ``epsilon_`` on the first batch).
    NaN entries are missing. The class models are
    :meth:`bayesrule.models.DiagonalGaussian.from_stats`.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
        Class priors; by default the weighted class proportions.
    var_smoothing : float, default=1e-9
        Added to every variance: ``var_smoothing`` times the largest
        per-feature (biased, weighted) variance of all the data.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        Sum of sample weights per class.
    class_prior_ : ndarray of shape (n_classes,)
    priors_ : ndarray of shape (n_classes,)
        The same as ``class_prior_``.
    theta_ : ndarray of shape (n_classes, n_features)
        Per-class means (over the observed entries); 0 for a class without data.
    var_ : ndarray of shape (n_classes, n_features)
        Per-class (biased) variances plus ``epsilon_`` (``epsilon_`` alone
        for a class without data, as scikit-learn).
    epsilon_ : float
    stats_ : DiagonalStats
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    References
    ----------
    T. Hastie, R. Tibshirani and J. Friedman, The Elements of Statistical
    Learning, 2nd ed., section 6.6.3. T. F. Chan, G. H. Golub and R. J.
    LeVeque, "Updating formulae and a pairwise algorithm for computing sample
    variances", COMPSTAT 1982.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.naive_bayes import GaussianNB as SklearnGaussianNB
    >>> from bayesrule import GaussianNB
    >>> X, y = load_iris(return_X_y=True)
    >>> gnb = GaussianNB().fit(X, y)
    >>> gnb.predict(X[[0, 50, 100]])
    array([0, 1, 2])
    >>> print(f"{gnb.score(X, y):.2f}")
    0.96
    >>> bool((gnb.predict(X) == SklearnGaussianNB().fit(X, y).predict(X)).all())
    True

    Fitting in blocks gives the model of one fit:

    >>> stream = GaussianNB()
    >>> for start in range(0, 150, 50):
    ...     stream = stream.partial_fit(X[start:start + 50], y[start:start + 50], classes=[0, 1, 2])
    >>> bool(np.allclose(stream.theta_, gnb.theta_) and np.allclose(stream.var_, gnb.var_))
    True
    """

    #: a stream's first rows (one row: no variance yet) wait for more
    waits_for_rows = True
    spec = _BaseNB.spec.replace(
        statistic=DiagonalStats,
        strict_priors=True,
        input_dtype_attrs=("theta_", "var_", "epsilon_", "class_prior_", "priors_", "class_count_"),
        input_dtype_outputs=True,
    )
    squares_deviations = True
    _parameter_constraints: dict = {
        "priors": PRIORS_CONSTRAINT,
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, priors: ArrayLike | None = None, var_smoothing: float = 1e-9) -> None:
        self.priors = priors
        self.var_smoothing = var_smoothing

    def _derive(self, stats: DiagonalStats, priors: _F, **extra: Any) -> dict[str, Any]:
        model = DiagonalGaussian.from_stats(
            stats, var_smoothing=self.var_smoothing, feature_names=self._feature_names()
        )
        eps = variance_epsilon(stats, self.var_smoothing)
        return {
            "theta_": stats.means.copy(),
            "var_": per_class(model.var, np.asarray(stats.weights > 0), fill=eps),
            "epsilon_": eps,
            "class_prior_": priors,
            "_model": model,
        }

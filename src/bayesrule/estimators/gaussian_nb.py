"""Gaussian naive Bayes."""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils._param_validation import Interval

from ..models.diagonal import DiagonalGaussian
from ..stats import DiagonalStats
from ._nb import (
    _F,
    _BaseNB,
    _name,
    check_observed,
    gaussian_variances,
)


# ---------------------------------------------------------------------------------
# Gaussian
# ---------------------------------------------------------------------------------
class GaussianNB(_BaseNB):
    r"""Gaussian naive Bayes: per class, independent normal features.

    A drop-in for ``sklearn.naive_bayes.GaussianNB`` (same parameters,
    fitted attributes, predictions and probabilities), fitted from
    :class:`bayesrule.stats.DiagonalStats`. ``var_smoothing`` is applied only
    when the parameters are derived, from the merged statistics, so
    ``partial_fit`` and ``merge`` give exactly the model ``fit`` gives
    (scikit-learn's ``partial_fit`` fixes ``epsilon_`` on the first batch).
    NaN entries are missing.

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
        Per-class means (over the observed entries).
    var_ : ndarray of shape (n_classes, n_features)
        Per-class (biased) variances plus ``epsilon_``.
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
    """

    _stats_type = DiagonalStats
    _parameter_constraints: dict = {
        "priors": ["array-like", None],
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, priors: ArrayLike | None = None, var_smoothing: float = 1e-9) -> None:
        self.priors = priors
        self.var_smoothing = var_smoothing

    def _derive(self, stats: DiagonalStats, priors: _F, **extra: Any) -> dict[str, Any]:
        present = np.asarray(stats.weights > 0)
        check_observed(stats.feature_weights, present, stats.classes, self._feature_names())
        var, eps = gaussian_variances(stats, self.var_smoothing)
        if np.any(~(var[present] > 0)):
            k, j = (int(v[0]) for v in np.nonzero(~(var[present] > 0)))
            raise ValueError(
                f"feature {_name(self._feature_names(), j)!r} has zero variance in class "
                f"{stats.classes[present][k]!r} and var_smoothing={self.var_smoothing} adds "
                "nothing; set var_smoothing > 0."
            )
        return {
            "theta_": stats.means.copy(),
            "var_": var,
            "epsilon_": eps,
            "class_prior_": priors,
            "_model": DiagonalGaussian(stats.means, var),
        }

    def _class_log_density(self, X: NDArray[Any]) -> _F:
        return self._model.log_prob(X)

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> _F:
        return self._model[k].sample(n, rng)

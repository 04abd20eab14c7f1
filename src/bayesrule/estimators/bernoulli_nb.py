"""Bernoulli naive Bayes."""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval

from ..models.bernoulli import Bernoulli
from ..stats import CountStats
from ._nb import (
    _ALPHA,
    _F,
    _PRIOR_PARAMS,
    _DiscreteNB,
    bernoulli_log_p,
    check_observed,
)


# ---------------------------------------------------------------------------------
# counts: Bernoulli, multinomial, complement, Poisson
# ---------------------------------------------------------------------------------
def _binarize(X: Any, threshold: float | None) -> Any:
    if threshold is None:
        return X
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        X.data = np.where(np.isnan(X.data), np.nan, (X.data > threshold).astype(float))
        X.eliminate_zeros()
        return X
    # float32 holds 0, 1 and NaN exactly at half the memory; the statistics
    # and the products convert blocks to float64 as they go
    out = np.greater(X, threshold).astype(np.float32)  # NaN > t is False
    if np.isnan(np.min(X, initial=0.0)):
        out[np.isnan(X)] = np.nan
    return out


class BernoulliNB(_DiscreteNB):
    r"""Naive Bayes for binary features: per class, independent Bernoulli features.

    A drop-in for ``sklearn.naive_bayes.BernoulliNB``; dense (NaN = missing)
    or scipy.sparse CSR input.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive (Laplace/Lidstone) smoothing: ``p_kj = (S_kj + alpha) /
        (V_kj + 2 alpha)``.
    force_alpha : bool, default=True
        If False, an alpha below 1e-10 is raised to 1e-10 (with a warning).
    binarize : float or None, default=0.0
        Threshold: values above it are 1, others 0. None: X is already binary.
    fit_prior : bool, default=True
        Learn the class priors; otherwise they are uniform.
    class_prior : array-like of shape (n_classes,), default=None
        Given priors (override ``fit_prior``).

    Attributes
    ----------
    classes_, class_count_, priors_ : as for :class:`GaussianNB`
    class_log_prior_ : ndarray of shape (n_classes,)
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted number of ones per class and feature.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log p_kj``.
    stats_ : CountStats

    References
    ----------
    C. D. Manning, P. Raghavan and H. Schütze, Introduction to Information
    Retrieval, Cambridge University Press, 2008, section 13.3.
    """

    _inf_reaches_results = False

    _stats_type = CountStats
    _sparse = True
    _parameter_constraints: dict = {
        "alpha": _ALPHA,
        "force_alpha": ["boolean"],
        "binarize": [None, Interval(Real, None, None, closed="neither")],
        **_PRIOR_PARAMS,
    }

    def __init__(
        self,
        *,
        alpha: Any = 1.0,
        force_alpha: bool = True,
        binarize: float | None = 0.0,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
    ) -> None:
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.binarize = binarize
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    def _validate_X(self, X: Any, *, reset: bool) -> Any:
        return _binarize(super()._validate_X(X, reset=reset), self.binarize)

    def _derive(self, stats: CountStats, priors: _F, **extra: Any) -> dict[str, Any]:
        present = np.asarray(stats.weights > 0)
        check_observed(stats.feature_weights, present, stats.classes, self._feature_names())
        log_p = bernoulli_log_p(stats, self._alpha(stats.n_features))
        model_p = np.where(present[:, None], log_p, np.log(0.5))
        if np.any(~(model_p < 0)):
            raise ValueError(
                f"alpha={self.alpha} leaves a feature with probability 1 (or undefined) in a "
                "class; use alpha > 0."
            )
        return {
            "feature_count_": stats.sums.copy(),
            "feature_log_prob_": log_p,
            "_model": Bernoulli(model_p),
            **self._prior_attrs(priors),
        }

    def _class_log_density(self, X: Any) -> _F:
        return self._model.log_prob(X)

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> _F:
        return self._model[k].sample(n, rng)

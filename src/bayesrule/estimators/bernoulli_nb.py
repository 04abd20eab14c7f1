"""Bernoulli naive Bayes."""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval

from ..models.bernoulli import Bernoulli, bernoulli_log_p
from ..stats import CountStats
from ._nb import _ALPHA, _F, _PRIOR_PARAMS, _DiscreteNB
from .registry import register


def _binarize(X: Any, threshold: float | None, *, has_nan: bool | None = None) -> Any:
    """1 where ``X > threshold``, else 0; NaN stays NaN. A new array: ``X`` is not changed.

    ``has_nan``: whether dense ``X`` holds a NaN, when already known (None: a
    pass finds out).
    """
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
    if has_nan is None:
        has_nan = bool(np.isnan(np.min(X, initial=0.0)))
    if has_nan:
        out[np.isnan(X)] = np.nan
    return out


@register("bnb")
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

    Examples
    --------
    Digits (pixels 0 to 16) as black and white images:

    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from bayesrule import BernoulliNB
    >>> X, y = load_digits(return_X_y=True)
    >>> bnb = BernoulliNB(binarize=8.0).fit(X[:1200], y[:1200])
    >>> print(f"{bnb.score(X[1200:], y[1200:]):.2f}")
    0.84
    >>> bnb.feature_log_prob_.shape
    (10, 64)

    Models of two halves merge into the model of all the rows:

    >>> half = BernoulliNB(binarize=8.0).fit(X[:600], y[:600])
    >>> other = BernoulliNB(binarize=8.0).fit(X[600:1200], y[600:1200])
    >>> bool(np.allclose(half.merge(other).feature_log_prob_, bnb.feature_log_prob_))
    True
    """

    spec = _DiscreteNB.spec.replace(statistic=CountStats, sparse=True, inf_reaches_results=False)
    #: plain float rows to predict skip scikit-learn's validate_data (see _BaseNB)
    _plain_rows_pass = True
    #: the class models' log densities are new arrays: priors and posteriors in place
    _fresh_log_densities = True
    #: predict's argmax reads the narrow product row-major, in tiles (PredictMixin)
    _argmax_of_rows = True

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

    def _prepare_X(self, Xv: Any) -> Any:
        return _binarize(Xv, self.binarize)

    def _input(self, X: Any, *, reset: bool) -> Any:
        """As the base's; dense rows to predict are checked by one sum instead of a minimum
        and a maximum (and the binarization's NaN search): a finite sum means no NaN and
        no infinity. Otherwise (or on overflow) the separate checks decide, as before."""
        if reset or self.binarize is None:
            return super()._input(X, reset=reset)
        Xv = self._numeric_X(X, reset=False)
        if sp.issparse(Xv):
            Xb = self._prepare_X(self._check_values(Xv))
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                finite = bool(np.isfinite(np.sum(Xv)))
            if finite:
                Xb = _binarize(Xv, self.binarize, has_nan=False)
            else:
                Xb = self._prepare_X(self._check_values(Xv))
        self._warn_out_of_range(Xb)
        return Xb

    def _derive(self, stats: CountStats, priors: _F, **extra: Any) -> dict[str, Any]:
        alpha = self._alpha(stats.n_features)
        model = Bernoulli.from_stats(stats, alpha=alpha, feature_names=self._feature_names())
        return {
            "feature_count_": stats.sums.copy(),
            "feature_log_prob_": bernoulli_log_p(stats, alpha),
            "_model": model,
            **self._prior_attrs(priors),
        }

"""Friedman's regularized discriminant analysis."""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval

from ..covariance import shrink
from ..stats import ScatterStats
from ._da import (
    _F,
    _label,
    _weight_text,
)
from .qda import QuadraticDiscriminantAnalysis


class RegularizedDiscriminantAnalysis(QuadraticDiscriminantAnalysis):
    r"""Friedman's regularized discriminant analysis, between QDA and LDA.

    Each class covariance is blended with the pooled one and then shrunk
    towards a scaled identity:

    ``Sigma_k(alpha) = alpha Sigma_k + (1 - alpha) Sigma_pooled``,
    ``Sigma_k(alpha, gamma) = (1 - gamma) Sigma_k(alpha) + gamma tr(Sigma_k(alpha))/p I``.

    ``alpha=1, gamma=0`` is :class:`QuadraticDiscriminantAnalysis` and
    ``alpha=0, gamma=0`` is :class:`LinearDiscriminantAnalysis` (when the
    pooled covariance has full rank).

    Parameters
    ----------
    alpha : float in [0, 1], default=0.5
        Weight of the class's own covariance.
    gamma : float in [0, 1], default=0.0
        Shrinkage towards ``(tr/p) I``.
    priors : array-like of shape (n_classes,), default=None
    store_covariance : bool, default=False
    tol : float, default=1e-4
        Eigenvalues at or below ``tol`` make a class covariance singular (an error).
    bias : bool, default=False
        Maximum-likelihood (True) or unbiased (False) class and pooled covariances.

    References
    ----------
    J. H. Friedman, "Regularized discriminant analysis", Journal of the
    American Statistical Association 84(405), 1989.
    """

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, 1, closed="both")],
        "gamma": [Interval(Real, 0, 1, closed="both")],
        "priors": ["array-like", None],
        "store_covariance": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "bias": ["boolean"],
    }

    def __init__(  # noqa: D107
        self,
        *,
        alpha: float = 0.5,
        gamma: float = 0.0,
        priors: ArrayLike | None = None,
        store_covariance: bool = False,
        tol: float = 1.0e-4,
        bias: bool = False,
    ) -> None:
        self.alpha = alpha
        self.gamma = gamma
        self.priors = priors
        self.store_covariance = store_covariance
        self.tol = tol
        self.bias = bias

    # QDA's machinery reads these; RDA has no such parameters.
    shrinkage = None
    reg_param = 0.0
    covariance_estimator = None

    def _singular_hint(self) -> str:
        return "set gamma > 0 (e.g. gamma=0.05) or lower alpha"

    def _derive(self, stats: Any, priors: _F, **extra: Any) -> dict[str, Any]:
        return _rda_attrs(self, stats, float(self.alpha), float(self.gamma))


def _rda_attrs(est: Any, stats: ScatterStats, alpha: float, gamma: float) -> dict[str, Any]:
    covs = blended_covariances(stats, alpha, gamma, est._ddof())
    # after shrinking by gamma every eigenvalue is at least gamma tr/p, and
    # tr/p is unchanged by the shrinkage
    floors = gamma * np.einsum("kpp->k", covs) / stats.n_features
    return est._gaussian_attrs(stats, covs, np.full(stats.n_classes, gamma), floors)


def blended_covariances(stats: ScatterStats, alpha: float, gamma: float, ddof: float) -> _F:
    """Friedman's ``Sigma_k(alpha, gamma)`` for every class with data, shape (K, p, p)."""
    present = stats.weights > 0
    pooled = stats.pooled_covariance(ddof)
    covs = np.zeros_like(stats.scatter)
    for k in np.flatnonzero(present):
        if alpha > 0:
            if stats.weights[k] - ddof <= 0:
                raise ValueError(
                    f"class {_label(stats, k)} has {_weight_text(stats, k)}; at least 2 samples "
                    "are needed to estimate its covariance (or set alpha=0)."
                )
            own = stats.scatter[k] / (stats.weights[k] - ddof)
            covs[k] = alpha * own + (1.0 - alpha) * pooled
        else:
            covs[k] = pooled
        if gamma:
            covs[k] = shrink(covs[k], gamma)
    return covs

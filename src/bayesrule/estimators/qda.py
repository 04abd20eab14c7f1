"""Quadratic discriminant analysis."""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import LinAlgError, cholesky, eigh, eigvalsh
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..covariance import shrink, shrinkage_intensity
from ..models.gaussian import Gaussian, stacked_log_prob
from ..stats import ScatterStats
from ._da import (
    _F,
    _SHRINKAGE,
    _check_finite_covariance,
    _GaussianDA,
    _label,
    _weight_text,
)


class QuadraticDiscriminantAnalysis(_GaussianDA):
    r"""Quadratic discriminant analysis: one Gaussian with its own covariance per class.

    A drop-in for ``sklearn.discriminant_analysis.QuadraticDiscriminantAnalysis``.

    Parameters
    ----------
    solver : {'svd', 'eigen'}, default='svd'
        Accepted for compatibility; the class covariances are always
        eigendecomposed, and ``reg_param`` and ``shrinkage`` apply with both.
    shrinkage : None, 'auto', 'ledoit-wolf', 'oas' or float in [0, 1], default=None
        Shrinks each class covariance towards ``(tr(Sigma_k)/p) I`` (intensity
        estimated per class for 'auto'/'ledoit-wolf'/'oas'), before ``reg_param``.
    priors : array-like of shape (n_classes,), default=None
    reg_param : float in [0, 1], default=0.0
        ``Sigma_k <- (1 - reg_param) Sigma_k + reg_param I``, as scikit-learn.
    store_covariance : bool, default=False
        Store ``covariance_`` (the regularised class covariances).
    tol : float, default=1e-4
        A class covariance with an eigenvalue at or below ``tol`` after
        regularisation is singular: ``fit`` raises a ValueError naming the class.
    covariance_estimator : estimator with ``fit`` and ``covariance_``, default=None
        Fitted on each class's centred rows instead of the empirical estimate
        (``fit`` only).
    bias : bool, default=False
        False: the unbiased ``S_k / (n_k - 1)`` estimate. True: the
        maximum-likelihood ``S_k / n_k`` that scikit-learn 1.9 uses; it gives
        the same predictions and probabilities as scikit-learn.

    Attributes
    ----------
    classes_, priors_, class_count_, means_, stats_, n_features_in_
    covariance_ : ndarray of shape (n_classes, n_features, n_features)
        Only with ``store_covariance=True``.
    rotations_ : list of ndarray of shape (n_features, n_features)
        Eigenvectors of each class covariance, by decreasing eigenvalue.
    scalings_ : list of ndarray of shape (n_features,)
        The matching eigenvalues (variances along the principal axes).
    shrinkage_ : ndarray of shape (n_classes,)

    References
    ----------
    T. Hastie, R. Tibshirani and J. Friedman, The Elements of Statistical
    Learning, 2nd ed., section 4.3.
    """

    _parameter_constraints: dict = {
        "solver": [StrOptions({"svd", "eigen"})],
        "shrinkage": _SHRINKAGE,
        "priors": ["array-like", None],
        "reg_param": [Interval(Real, 0, 1, closed="both")],
        "store_covariance": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "covariance_estimator": [HasMethods("fit"), None],
        "bias": ["boolean"],
    }

    def __init__(
        self,
        *,
        solver: str = "svd",
        shrinkage: Any = None,
        priors: ArrayLike | None = None,
        reg_param: float = 0.0,
        store_covariance: bool = False,
        tol: float = 1.0e-4,
        covariance_estimator: Any = None,
        bias: bool = False,
    ) -> None:
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.reg_param = reg_param
        self.store_covariance = store_covariance
        self.tol = tol
        self.covariance_estimator = covariance_estimator
        self.bias = bias

    def _class_covariances(self, stats: ScatterStats, external: _F | None) -> tuple[_F, _F]:
        """Per-class covariances after shrinkage, and the intensities used."""
        present = np.flatnonzero(stats.weights > 0)
        covs = np.zeros_like(stats.scatter)
        intensity = np.zeros(stats.n_classes)
        ddof = self._ddof()
        for k in present:
            if external is not None:
                covs[k] = external[k]
                continue
            denom = stats.weights[k] - ddof
            if denom <= 0:
                raise ValueError(
                    f"class {_label(stats, k)} has {_weight_text(stats, k)}; at least 2 samples "
                    "are needed to estimate its covariance."
                )
            covs[k] = stats.scatter[k] / denom
            W = float(stats.weights[k])
            intensity[k] = shrinkage_intensity(
                self.shrinkage, stats.scatter[k] / W, float(stats.m4[k]), W
            )
            if intensity[k]:
                covs[k] = shrink(covs[k], intensity[k])
        return covs, intensity

    def _regularise(self, stats: ScatterStats, covs: _F) -> _F:
        r = float(self.reg_param)
        if r:
            covs = (1.0 - r) * covs
            covs[:, np.arange(stats.n_features), np.arange(stats.n_features)] += r
        return covs

    def _singular_hint(self) -> str:
        return "set reg_param > 0 (e.g. reg_param=0.05) or shrinkage"

    def _derive(self, stats: Any, priors: _F, **extra: Any) -> dict[str, Any]:
        external = extra.get("external")
        covs, intensity = self._class_covariances(stats, external)
        # eigenvalues of (1 - r)((1 - a) S + a tr(S)/p I) + r I are at least
        # (1 - r) a tr(S)/p + r
        r = float(self.reg_param)
        tr = np.einsum("kpp->k", covs) / stats.n_features
        floors = r + (1.0 - r) * (intensity * tr if external is None else np.zeros_like(tr))
        covs = self._regularise(stats, covs)
        return self._gaussian_attrs(stats, covs, intensity, floors)

    def _gaussian_attrs(
        self, stats: ScatterStats, covs: _F, intensity: _F, floors: _F
    ) -> dict[str, Any]:
        """Gaussians from regularised class covariances.

        ``floors[k]`` is a lower bound on the eigenvalues of ``covs[k]`` known
        from the regularisation; where it exceeds ``tol`` the covariance is
        certainly regular and a Cholesky factorisation is all that is needed.
        Otherwise the eigenvalues are computed to test for singularity.
        """
        p = stats.n_features
        gaussians: list[Any] = [None] * stats.n_classes
        for k in np.flatnonzero(stats.weights > 0):
            _check_finite_covariance(covs[k], f"the covariance matrix of class {_label(stats, k)}")
            smallest = floors[k]
            if smallest <= self.tol:
                smallest = float(eigvalsh(covs[k], driver="evd")[0])
            chol = None
            if smallest > self.tol:
                try:
                    chol = cholesky(covs[k], lower=True)
                except LinAlgError:
                    chol = None
            if chol is None:
                raise ValueError(
                    f"the covariance matrix of class {_label(stats, k)} is singular "
                    f"(smallest eigenvalue {smallest:.3g} <= tol={self.tol:g}; "
                    f"{stats.counts[k]} samples, {p} features): {self._singular_hint()}."
                )
            gaussians[k] = Gaussian.from_cholesky(stats.means[k], chol)
        attrs: dict[str, Any] = {
            "means_": stats.means.copy(),
            "shrinkage_": intensity,
            "_covs_": covs,
            "_gaussians_": gaussians,
        }
        if self.store_covariance:
            attrs["covariance_"] = covs
        return attrs

    def _eigen(self) -> tuple[list[Any], list[Any]]:
        cached = self.__dict__.get("_eigen_cache")
        if cached is None or cached[0] is not self._covs_:
            rotations: list[Any] = []
            scalings: list[Any] = []
            for k, cov in enumerate(self._covs_):
                if self.stats_.weights[k] <= 0:
                    rotations.append(np.zeros((cov.shape[0], 0)))
                    scalings.append(np.zeros(0))
                    continue
                lam, V = eigh(cov, driver="evr")
                rotations.append(V[:, ::-1])
                scalings.append(lam[::-1])
            cached = (self._covs_, rotations, scalings)
            self.__dict__["_eigen_cache"] = cached
        return cached[1], cached[2]

    @property
    def rotations_(self) -> list[Any]:
        """Eigenvectors of each class covariance, by decreasing eigenvalue (computed on use)."""
        check_is_fitted(self, "_covs_")
        return self._eigen()[0]

    @property
    def scalings_(self) -> list[Any]:
        """Eigenvalues of each class covariance, decreasing (computed on use)."""
        check_is_fitted(self, "_covs_")
        return self._eigen()[1]

    def _class_log_density(self, X: NDArray[Any]) -> _F:
        present = self.stats_.weights > 0
        out = np.full((X.shape[0], present.size), -np.inf)
        out[:, present] = stacked_log_prob([g for g in self._gaussians_ if g is not None], X)
        return out

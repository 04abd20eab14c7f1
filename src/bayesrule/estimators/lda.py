"""Linear discriminant analysis."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import TransformerMixin
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._products import rows_dot
from ..covariance import shrink, shrinkage_intensity
from ..models.gaussian import Gaussian
from ..stats import PooledScatterStats, ScatterStats
from ._da import (
    _F,
    _SHRINKAGE,
    _GaussianDA,
    _range_whitening,
)


class LinearDiscriminantAnalysis(TransformerMixin, _GaussianDA):
    r"""Linear discriminant analysis: Gaussian classes sharing one covariance.

    Each class ``k`` is modelled as ``N(mu_k, Sigma)`` with the pooled
    within-class covariance ``Sigma``; Bayes' rule then gives linear decision
    functions ``x' Sigma^+ mu_k - mu_k' Sigma^+ mu_k / 2 + log pi_k``. The
    same fit gives the Fisher (canonical) discriminant projection
    (:meth:`transform`), densities (:meth:`score_samples`) and new samples
    (:meth:`sample`).

    A drop-in for ``sklearn.discriminant_analysis.LinearDiscriminantAnalysis``:
    every parameter and fitted attribute is accepted or provided with the same
    meaning.

    Parameters
    ----------
    solver : {'svd', 'lsqr', 'eigen'}, default='svd'
        Accepted for compatibility; it does not change the result. bayesrule
        always derives the model from the eigendecomposition of the pooled
        covariance, which supports shrinkage, :meth:`transform` and
        rank-deficient data with every value.
    shrinkage : None, 'auto', 'ledoit-wolf', 'oas' or float in [0, 1], default=None
        Shrinks the pooled covariance towards ``(tr(Sigma)/p) I``:
        ``(1 - a) Sigma + a tr(Sigma)/p I``. 'auto' and 'ledoit-wolf' estimate
        ``a`` by the Ledoit-Wolf formula and 'oas' by oracle-approximating
        shrinkage, both on the pooled within-class residuals and computed from
        the statistics (so streaming and merging give the same ``a``). A float
        gives the same model as scikit-learn's. scikit-learn's 'auto' instead
        standardises each class before shrinking, so its 'auto' models differ.
    priors : array-like of shape (n_classes,), default=None
        Class priors; by default the weighted class proportions. They must be
        non-negative; if they do not sum to 1 (within 1e-5) they are
        renormalised with a warning.
    n_components : int, default=None
        Number of Fisher directions kept by :meth:`transform`; at most
        ``min(n_classes - 1, n_features)``.
    store_covariance : bool, default=False
        Accepted for compatibility: ``covariance_`` is always stored.
    tol : float, default=1e-4
        Rank tolerance, free of the features' units: the pooled covariance is
        scaled to a correlation matrix (features without variance are set
        aside) and its eigen-directions with eigenvalue at most ``tol`` times
        the largest are treated as having no within-class variation and
        dropped: the model works in the range of the covariance. This is what makes constant features (MNIST's
        never-lit pixels) and ``n < p`` work without preprocessing.
    covariance_estimator : estimator with ``fit`` and ``covariance_``, default=None
        A scikit-learn covariance estimator fitted on each class's centred rows;
        the pooled covariance is their prior-weighted average (as in
        scikit-learn). It needs the rows, so ``partial_fit`` and ``merge``
        refuse it.
    bias : bool, default=False
        False: the unbiased pooled estimate ``S_w / (n - K)``. True: the
        maximum-likelihood ``S_w / n``, which is scikit-learn's estimate with
        the default priors and gives the same predictions and probabilities.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    priors_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        Sum of sample weights per class.
    means_ : ndarray of shape (n_classes, n_features)
    covariance_ : ndarray of shape (n_features, n_features)
        The pooled covariance after shrinkage.
    shrinkage_ : float
        The shrinkage intensity used.
    rank_ : int
        Number of directions kept (see ``tol``).
    coef_ : ndarray of shape (n_classes, n_features) or (1, n_features)
        Weights of the linear discriminants; for two classes the single
        logistic form ``P(y = classes_[1] | x) = sigmoid(coef_ x + intercept_)``.
    intercept_ : ndarray of shape (n_classes,) or (1,)
    scalings_ : ndarray of shape (n_features, n_directions)
        Fisher directions: ``transform(X) = (X - xbar_) @ scalings_``; the
        projected classes have identity within-class covariance.
    xbar_ : ndarray of shape (n_features,)
        Prior-weighted overall mean.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Share of the between-class variance along each Fisher direction.
    stats_ : ScatterStats
        The sufficient statistics the model was derived from.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
    n_samples_seen_ : int

    References
    ----------
    R. A. Fisher, "The use of multiple measurements in taxonomic problems",
    Annals of Eugenics 7(2), 1936. T. Hastie, R. Tibshirani and J. Friedman,
    The Elements of Statistical Learning, 2nd ed., section 4.3.
    """

    _parameter_constraints: dict = {
        "solver": [StrOptions({"svd", "lsqr", "eigen"})],
        "shrinkage": _SHRINKAGE,
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "priors": ["array-like", None],
        "store_covariance": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "covariance_estimator": [HasMethods("fit"), None],
        "bias": ["boolean"],
    }

    def __init__(
        self,
        solver: str = "svd",
        shrinkage: Any = None,
        priors: ArrayLike | None = None,
        n_components: int | None = None,
        store_covariance: bool = False,
        tol: float = 1e-4,
        covariance_estimator: Any = None,
        bias: bool = False,
    ) -> None:
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.n_components = n_components
        self.store_covariance = store_covariance
        self.tol = tol
        self.covariance_estimator = covariance_estimator
        self.bias = bias

    @property
    def _stats_type(self) -> Any:  # type: ignore[override]
        # Ledoit-Wolf needs per-class fourth moments; every other setting only
        # the pooled scatter, which is K times smaller and faster to compute.
        if self.shrinkage in ("auto", "ledoit-wolf"):
            return ScatterStats
        return PooledScatterStats

    def _derive(self, stats: Any, priors: _F, **extra: Any) -> dict[str, Any]:
        external = extra.get("external")
        K, p = stats.n_classes, stats.n_features
        max_components = min(K - 1, p)
        if self.n_components is not None and self.n_components > max_components:
            raise ValueError(
                f"n_components cannot be larger than min(n_features, n_classes - 1) = "
                f"{max_components}; got {self.n_components}."
            )
        present = stats.weights > 0
        if external is not None:
            cov = np.einsum("k,kpq->pq", priors, external)
            intensity = 0.0
        else:
            cov = stats.pooled_covariance(self._ddof())
            W = float(stats.weights.sum())
            m4 = float(stats.m4.sum()) if isinstance(stats, ScatterStats) else np.nan
            intensity = shrinkage_intensity(self.shrinkage, stats.pooled_scatter() / W, m4, W)
            if intensity:
                cov = shrink(cov, intensity)
        whiten = _range_whitening(cov, self.tol)
        means = stats.means
        Mw = means @ whiten  # class means in whitened coordinates, (K, r)
        with np.errstate(divide="ignore"):
            log_priors = np.log(priors)
        coef = Mw @ whiten.T
        quad = -0.5 * np.einsum("kr,kr->k", Mw, Mw)
        intercept = quad + log_priors
        # Fisher directions: principal axes of the prior-weighted class means in
        # whitened space (the between-class scatter relative to the within).
        xbar = priors @ means
        C = np.sqrt(priors[present])[:, None] * (Mw[present] - priors @ Mw)
        _, s, Vt = np.linalg.svd(C, full_matrices=False)
        s2 = s * s
        q = int(np.sum(s > self.tol * s[0])) if s.size and s[0] > 0 else 0
        q = min(q, max_components)
        Vt = Vt[:q]
        # A deterministic sign for each direction: later classes (in the order of
        # classes_) project to larger values, sum_k k * <m_k - mbar, v> > 0.
        proj = (Mw[present] - priors @ Mw) @ Vt.T
        flip = np.sign(np.flatnonzero(present) @ proj)
        Vt = Vt * np.where(flip == 0, 1.0, flip)[:, None]
        n_out = max_components if self.n_components is None else self.n_components
        evr = s2 / s2.sum() if s2.sum() > 0 else s2
        if K == 2:
            coef_out = (coef[1] - coef[0])[None, :]
            intercept_out = np.array([intercept[1] - intercept[0]])
        else:
            coef_out, intercept_out = coef, intercept
        return {
            "means_": means.copy(),
            "covariance_": cov,
            "shrinkage_": intensity,
            "rank_": int(whiten.shape[1]),
            "coef_": coef_out,
            "intercept_": intercept_out,
            "scalings_": whiten @ Vt.T,
            "xbar_": xbar,
            "explained_variance_ratio_": evr[:n_out],
            "_max_components": n_out,
            "_coef_all": coef,
            "_quad_all": quad,
            "_whiten_": whiten,
            "_n_features_out": min(n_out, q),
        }

    def _relative_joint(self, Xv: NDArray[Any]) -> _F:
        # log pi_k + log p_k(x) minus the class-independent -|x|^2_Sigma / 2
        # (and the normalising constant): one (n, p) x (p, K) matrix product.
        return self._mask_absent(rows_dot(Xv, self._coef_all) + self._quad_all + self._log_priors())

    @property
    def _gaussians_(self) -> list[Gaussian]:
        # Built on first use (densities, sampling): classification does not
        # need the pseudo-determinant.
        cached = self.__dict__.get("_gaussians_cache")
        if cached is None or cached[0] is not self._whiten_:
            var = np.diag(self.covariance_)
            live = var > 0
            # the factor A = cov W (A A' = cov on its range, W' A = I);
            # pdet(A A') = det(A'A)
            factor = self.covariance_ @ self._whiten_
            A = factor[live]
            _, log_pdet = np.linalg.slogdet(A.T @ A)
            gs = [Gaussian(m, factor, self._whiten_, log_pdet) for m in self.means_]
            cached = (self._whiten_, gs)
            self.__dict__["_gaussians_cache"] = cached
        return cached[1]

    def _class_log_density(self, X: NDArray[Any]) -> _F:
        g = self._gaussians_[0]
        Z = np.asarray(X, dtype=float) @ g.whitening
        row = g.log_norm - 0.5 * np.einsum("ij,ij->i", Z, Z)
        return rows_dot(X, self._coef_all) + self._quad_all + row[:, None]

    def transform(self, X: ArrayLike) -> _F:
        """Project onto the Fisher discriminant directions.

        Returns
        -------
        X_new : ndarray of shape (n_samples, min(n_components, n_directions))
        """
        check_is_fitted(self)
        Xv = self._validate_X(X, reset=False)
        out = ((Xv - self.xbar_) @ self.scalings_)[:, : self._max_components]
        self._after(Xv, out)
        return out

    def get_feature_names_out(self, input_features: Any = None) -> NDArray[Any]:
        """Names ``lineardiscriminantanalysis0``, ... for the transformed columns."""
        check_is_fitted(self)
        prefix = type(self).__name__.lower()
        return np.asarray([f"{prefix}{i}" for i in range(self._n_features_out)], dtype=object)

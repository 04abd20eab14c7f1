"""Gaussian discriminant analysis: linear (LDA), quadratic (QDA) and regularized (RDA).

All three fit from :class:`bayesrule.stats.ScatterStats` — per-class weights,
means and centred scatter — so each supports ``fit``, ``partial_fit`` and
``merge`` with identical results, and differs only in how the class
covariances are derived from those statistics.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import LinAlgError, cholesky, eigh, eigvalsh
from sklearn.base import TransformerMixin
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import GenerativeClassifier
from ._products import rows_dot
from .covariance import shrink, shrinkage_intensity
from .models.gaussian import Gaussian, stacked_log_prob
from .stats import PooledScatterStats, ScatterStats, encode

__all__ = [
    "LinearDiscriminantAnalysis",
    "QuadraticDiscriminantAnalysis",
    "RegularizedDiscriminantAnalysis",
]

_F = NDArray[np.float64]
_LOG_2PI = float(np.log(2.0 * np.pi))

_SHRINKAGE = [StrOptions({"auto", "ledoit-wolf", "oas"}), Interval(Real, 0, 1, closed="both"), None]


def _external_covariances(
    estimator: Any, X: NDArray[Any], y: NDArray[Any], stats: ScatterStats
) -> _F:
    """Per-class covariances from a scikit-learn covariance estimator.

    It is fitted on each class's rows centred at the class mean, as
    scikit-learn does; it needs the rows, so it only works with ``fit``.
    """
    from sklearn.base import clone

    yi = encode(y, stats.classes)
    out = np.empty((stats.n_classes, stats.n_features, stats.n_features))
    for k in range(stats.n_classes):
        est = clone(estimator).fit(np.asarray(X[yi == k], dtype=float) - stats.means[k])
        if not hasattr(est, "covariance_"):
            raise ValueError(
                f"covariance_estimator {type(estimator).__name__} has no covariance_ "
                "attribute after fit."
            )
        out[k] = est.covariance_
    return out


def _label(stats: Any, k: Any) -> str:
    """A class label as the user wrote it (``3`` or ``'cat'``, not ``np.int64(3)``)."""
    return repr(stats.classes[k : k + 1].tolist()[0])


def _weight_text(stats: Any, k: Any) -> str:
    n, w = int(stats.counts[k]), float(stats.weights[k])
    return f"{n} sample" + ("s" if n != 1 else "") + (f" of total weight {w:g}" if w != n else "")


def _check_finite_covariance(cov: _F, what: str) -> None:
    if not np.all(np.isfinite(cov)):
        raise ValueError(
            f"{what} is not finite: X holds values so large that their squares "
            "overflow float64; rescale X."
        )


def _range_whitening(cov: _F, tol: float) -> _F:
    """Whitening ``W`` (``p x r``) on the range of ``cov``: ``W W' = cov^+``.

    The rank is decided on the correlation matrix ``C = D^-1/2 cov D^-1/2``
    (``D`` the variances), so that it does not depend on the units of the
    features: eigenvalues of ``C`` at most ``tol`` times the largest are
    dropped, and so are features without variance. With ``C = U L U'``
    restricted to the kept directions, ``W = D^-1/2 U L^-1/2``; the matching
    factor ``A = cov W = D^1/2 U L^1/2`` (``W' A = I``, ``A A' = cov`` on the
    range) is only needed for densities and sampling and is formed there.
    """
    _check_finite_covariance(cov, "the pooled within-class covariance")
    var = np.diag(cov).copy()
    live = var > 0
    if not live.any():
        raise ValueError(
            "the pooled within-class covariance is zero: every class is constant, "
            "so no discriminant can be estimated."
        )
    s = np.sqrt(var[live])
    C = cov[np.ix_(live, live)] / np.outer(s, s)
    # NumPy's LAPACK: the same thread pool as the products before it.
    lam, U = np.linalg.eigh(C)
    keep = np.flatnonzero(lam > tol * lam[-1])[::-1]  # largest first
    whiten = np.zeros((cov.shape[0], keep.size))
    whiten[live] = U[:, keep] / (s[:, None] * np.sqrt(lam[keep]))
    return whiten


class _GaussianDA(GenerativeClassifier):
    """Shared parts of the three Gaussian discriminant analyses."""

    _stats_type = ScatterStats
    _deferred_finite_check = True

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Any:
        """Fit the model from ``(X, y)`` in one pass over the data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative frequency weights.

        Returns
        -------
        self
        """
        if getattr(self, "covariance_estimator", None) is None:
            return super().fit(X, y, sample_weight)
        self._validate_params()
        if getattr(self, "shrinkage", None) not in (None, 0):
            raise ValueError(
                "covariance_estimator and shrinkage are both set; only one of the two can be used."
            )
        if sample_weight is not None:
            raise ValueError("covariance_estimator does not support sample_weight.")
        Xv, y_arr, w = self._validate_fit_input(X, y, None, reset=True)
        stats = ScatterStats.from_data(Xv, y_arr, w)
        self._after(Xv, stats.means)
        if stats.n_classes < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 classes; y has 1.")
        covs = _external_covariances(self.covariance_estimator, Xv, y_arr, stats)
        self._install(stats, external=covs)
        return self

    def _partial_fit(self, X: Any, y: Any, classes: Any, sample_weight: Any) -> Any:
        if getattr(self, "covariance_estimator", None) is not None:
            raise ValueError(
                "covariance_estimator needs all rows at once; it cannot be used with "
                "partial_fit or merge. Use shrinkage instead."
            )
        return super()._partial_fit(X, y, classes, sample_weight)

    def _ddof(self) -> float:
        return 0.0 if self.bias else 1.0

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> _F:
        return self._gaussians_[k].sample(n, rng)


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

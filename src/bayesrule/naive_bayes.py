"""The naive Bayes family: features independent given the class.

Every estimator here fits from mergeable statistics (:mod:`bayesrule.stats`),
so ``fit``, ``partial_fit`` and ``merge`` give the same model, and derives
its class models (:mod:`bayesrule.models`) only when parameters are needed:
smoothing (``alpha``, ``var_smoothing``) and priors never enter the
statistics. NaN is a missing value everywhere: fitting uses the observed
entries of each feature and prediction drops the missing features' terms,
which independence makes an exact marginalisation.

The estimators that share a name with scikit-learn's take the same
parameters, provide the same fitted attributes and give the same
predictions and probabilities.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import GenerativeClassifier
from ._products import rows_dot
from ._validation import check_finite, check_priors
from .models.bernoulli import Bernoulli
from .models.categorical import Categorical
from .models.diagonal import DiagonalGaussian
from .models.kernel import KernelDensity
from .models.multinomial import Multinomial
from .models.poisson import Poisson
from .stats import CategoryStats, CountStats, DiagonalStats, MixedStats, ValueCountStats
from .stats._counts import check_categories

__all__ = [
    "BernoulliNB",
    "CategoricalNB",
    "ComplementNB",
    "DiagonalLDA",
    "GaussianNB",
    "KernelNB",
    "MixedNB",
    "MultinomialNB",
    "PoissonNB",
]

_F = NDArray[np.float64]

KINDS = ("gaussian", "kernel", "bernoulli", "categorical", "poisson")


# ---------------------------------------------------------------------------------
# small pure functions: parameters from statistics
# ---------------------------------------------------------------------------------
def _name(names: Any, j: int) -> Any:
    return j if names is None else names[j]


def check_observed(
    V: _F, present: NDArray[np.bool_], classes: NDArray[Any], names: Any = None
) -> None:
    """Raise a ValueError naming the feature and class when a class never observes a feature."""
    bad = (V <= 0) & present[:, None]
    if bad.any():
        k, j = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(
            f"feature {_name(names, j)!r} is missing (NaN) in every row of class "
            f"{classes[k].tolist()!r}; its class model cannot be estimated. Drop the feature or "
            "give the class some observed values."
        )


def total_variance(V: _F, means: _F, m2: _F) -> _F:
    """Per-feature (biased) variance of all the data, from per-class moments, shape (p,).

    ``M2 = sum_k M2_k + sum_k V_k (m_k - m)^2`` with ``m`` the pooled mean: the
    Chan-Golub-LeVeque merge of the classes.
    """
    Vt = V.sum(axis=0)
    safe = np.where(Vt > 0, Vt, 1.0)
    m = (V * means).sum(axis=0) / safe
    M2 = m2.sum(axis=0) + (V * (means - m) ** 2).sum(axis=0)
    return np.where(Vt > 0, M2 / safe, 0.0)


def gaussian_variances(stats: DiagonalStats, var_smoothing: float) -> tuple[_F, float]:
    """Per-class variances plus ``epsilon = var_smoothing * max_j Var(x_j)`` (as scikit-learn)."""
    eps = float(var_smoothing) * float(
        np.max(total_variance(stats.feature_weights, stats.means, stats.m2), initial=0.0)
    )
    var = stats.variances(ddof=0.0)
    return np.where(np.isnan(var), 1.0, var) + eps, eps


def check_alpha(alpha: Any, force_alpha: bool, n_features: int) -> Any:
    """``alpha`` as a float or a (n_features,) array; raised to 1e-10 unless ``force_alpha``."""
    a: Any = np.asarray(alpha, dtype=float) if not isinstance(alpha, Real) else float(alpha)
    if isinstance(a, np.ndarray):
        if a.shape != (n_features,):
            raise ValueError(
                f"alpha must be a float or an array of one value per feature ({n_features}); "
                f"got shape {a.shape}."
            )
        if np.any(~(a >= 0)):
            raise ValueError(f"alpha must be non-negative; got {a[~(a >= 0)][0]}.")
    if np.min(a) < 1e-10 and not force_alpha:
        warnings.warn(
            "alpha too small will result in numeric errors, setting alpha = 1.0e-10. "
            "Use `force_alpha=True` to keep alpha unchanged.",
            UserWarning,
            stacklevel=4,
        )
        return np.maximum(a, 1e-10)
    return a


def bernoulli_log_p(stats: CountStats, alpha: Any) -> _F:
    """``log((S_kj + alpha) / (V_kj + 2 alpha))``: smoothed per-class feature probabilities."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(stats.sums + alpha) - np.log(stats.feature_weights + 2.0 * alpha)


def multinomial_log_theta(sums: _F, alpha: Any) -> _F:
    """``log((S_kj + alpha) / sum_j (S_kj + alpha))``: smoothed category probabilities."""
    smoothed = sums + alpha
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(smoothed) - np.log(smoothed.sum(axis=1, keepdims=True))


def poisson_rates(stats: CountStats, alpha: float) -> _F:
    """``(S_kj + alpha) / V_kj``: the smoothed mean count of each feature in each class."""
    V = stats.feature_weights
    return (stats.sums + alpha) / np.where(V > 0, V, 1.0)


def categorical_tables(
    stats: CategoryStats, alpha: Any, min_categories: Any = None
) -> tuple[NDArray[np.int64], _F, _F]:
    """``(n_categories, log_probs, log_unseen)`` of smoothed per-class category frequencies.

    ``n_categories[j]`` is one more than the largest code seen (or
    ``min_categories``); ``log_probs`` has shape (K, p, C) with every code at
    or beyond ``n_categories[j]`` given ``log_unseen[k, j] =
    log(alpha / (N_kj + alpha n_j))``, the smoothed probability of a category
    never seen.
    """
    cc = stats.category_counts
    K, p, C = cc.shape
    seen = cc.sum(axis=0) > 0  # (p, C)
    last = np.where(seen.any(axis=1), C - 1 - np.argmax(seen[:, ::-1], axis=1), -1)
    n_cat = (last + 1).astype(np.int64)
    if min_categories is not None:
        n_cat = np.maximum(n_cat, np.broadcast_to(np.asarray(min_categories, dtype=np.int64), (p,)))
    Cmax = int(n_cat.max(initial=1))
    cc = np.pad(cc, ((0, 0), (0, 0), (0, max(Cmax - C, 0))))[:, :, :Cmax]
    a = np.broadcast_to(np.asarray(alpha, dtype=float), (p,))
    N = cc.sum(axis=2)
    denom = np.log(N + a * n_cat)
    with np.errstate(divide="ignore"):
        log_probs = np.log(cc + a[None, :, None]) - denom[:, :, None]
        log_unseen = np.log(np.broadcast_to(a, (K, p))) - denom
    beyond = np.arange(Cmax)[None, :] >= n_cat[:, None]
    log_probs = np.where(beyond[None], log_unseen[:, :, None], log_probs)
    return n_cat, log_probs, log_unseen


def kernel_bandwidths(
    stats: ValueCountStats, bandwidth: Any, floor: float, names: Any = None
) -> tuple[_F, _F, _F]:
    """Per-class, per-feature bandwidths for 'scott' / 'silverman' / a float / one per feature.

    Returns ``(h, V, h_scott)``. The rule-of-thumb bandwidths are
    ``sd_kj * V_kj^(-1/5)`` (Scott) and ``sd_kj * (3 V_kj / 4)^(-1/5)``
    (Silverman), with ``sd`` the unbiased weighted standard deviation, as
    ``scipy.stats.gaussian_kde`` in one dimension. They are raised to at least
    ``floor`` times the feature's Scott bandwidth over all classes, so that a
    feature constant within a class (MNIST's border pixels) keeps a density.
    """
    V, mean, m2 = stats.moments()
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = np.sqrt(np.where(V > 1, m2 / np.where(V > 1, V - 1, 1.0), 0.0))
        safe = np.where(V > 0, V, 1.0)
        h_scott = sd * safe ** (-0.2)
        Vt = V.sum(axis=0)
        var_t = total_variance(V, mean, m2) * Vt / np.where(Vt > 1, Vt - 1, 1.0)
        h_total = np.sqrt(var_t) * np.where(Vt > 0, Vt, 1.0) ** (-0.2)
    h_total = np.where(h_total > 0, h_total, 1.0)
    lower = floor * h_total
    if isinstance(bandwidth, str):
        h = h_scott if bandwidth in ("scott", "cv") else sd * (0.75 * safe) ** (-0.2)
        return np.maximum(h, lower), V, np.maximum(h_scott, lower)
    b = np.asarray(bandwidth, dtype=float)
    if b.ndim > 1 or (b.ndim == 1 and b.shape[0] != stats.n_features):
        raise ValueError(
            f"bandwidth must be 'scott', 'silverman', 'cv', a float or one float per feature "
            f"({stats.n_features}); got shape {b.shape}."
        )
    if np.any(~(b > 0)):
        j = int(np.flatnonzero(~(np.atleast_1d(b) > 0))[0])
        where = f" for feature {_name(names, j)!r}" if b.ndim == 1 else ""
        raise ValueError(f"bandwidth must be positive{where}; got {np.atleast_1d(b)[j]}.")
    return np.broadcast_to(b, V.shape).copy(), V, np.maximum(h_scott, lower)


#: bandwidth multipliers of Scott's rule tried by likelihood cross-validation
CV_FACTORS = np.geomspace(0.25, 4.0, 9)


def cv_bandwidths(
    stats: ValueCountStats, present: NDArray[np.bool_], h_scott: _F, floor: _F, **kde: Any
) -> _F:
    """Per class and feature, the multiple of ``h_scott`` of largest leave-one-out likelihood.

    The leave-one-out density at a stored value ``v`` of weight ``w`` in a
    class of weight ``V`` removes one unit of weight there:
    ``f_-(v) = (V f(v) - phi_h(0)) / (V - 1)``; the score is
    ``sum_u w_u log f_-(v_u)``.
    """
    p = stats.n_features
    counts = np.diff(stats.indptr)
    U = int(counts.max(initial=0))
    rows = np.arange(stats.values.size) - np.repeat(stats.indptr[:-1], counts)
    Xv = np.full((U, p), np.nan)
    Xv[rows, stats.value_features] = stats.values
    W = stats.value_weights[present]
    Wv = np.zeros((W.shape[0], U, p))
    Wv[:, rows, stats.value_features] = W
    V = Wv.sum(axis=1)  # (K, p)
    best = np.full(V.shape, -np.inf)
    choice = h_scott[present].copy()
    for c in CV_FACTORS:
        h = np.maximum(c * h_scott[present], floor[present])
        model = KernelDensity(stats.indptr, stats.values, W, h, **kde)
        logf = np.nan_to_num(model.feature_log_prob(Xv), nan=-np.inf)  # (K, U, p)
        self_term = 1.0 / (h * np.sqrt(2.0 * np.pi))
        with np.errstate(divide="ignore", invalid="ignore"):
            loo = (V[:, None, :] * np.exp(logf) - self_term[:, None, :]) / (V[:, None, :] - 1.0)
            score = np.where(Wv > 0, Wv * np.log(np.maximum(loo, 0.0)), 0.0).sum(axis=1)
        score = np.where(V > 1, score, -np.inf)
        better = score > best
        best = np.where(better, score, best)
        choice = np.where(better, h, choice)
    out = h_scott.copy()
    out[present] = choice
    return out


def _scatter_classes(values: _F, present: NDArray[np.bool_]) -> _F:
    """(n, K_present) log densities placed into (n, K) with -inf for absent classes."""
    if present.all():
        return values
    out = np.full((values.shape[0], present.size), -np.inf)
    out[:, present] = values
    return out


def _check_nonnegative(X: Any, who: str, names: Any = None) -> None:
    """ValueError naming the first column holding a negative value."""
    data = X.data if sp.issparse(X) else X
    with np.errstate(invalid="ignore"):
        neg = data < 0
    if not neg.any():
        return
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        i = int(np.flatnonzero(X.data < 0)[0])
        j, v = int(X.indices[i]), X.data[i]
    else:
        r, j = (int(t[0]) for t in np.nonzero(neg))
        v = X[r, j]
    raise ValueError(
        f"Negative values in data passed to {who}: column {_name(names, j)!r} holds {v!r}; "
        "counts must be non-negative."
    )


# ---------------------------------------------------------------------------------
# shared estimator parts
# ---------------------------------------------------------------------------------
class _BaseNB(GenerativeClassifier):
    """Naive Bayes: NaN means missing, and the class models are independent per feature."""

    _allow_nan = True
    _sparse = False
    _positive = False
    _deferred_finite_check = True
    #: whether +inf in X always makes the log likelihood non-finite (so the
    #: deferred check catches it); not so after binarizing, or far in a
    #: kernel density's tail, where X is checked eagerly instead
    _inf_reaches_results = True

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = self._sparse
        tags.input_tags.positive_only = self._positive
        # scikit-learn says the same of its discrete naive Bayes: on the checks'
        # Gaussian blobs a count or binary model is not expected to reach 83%
        tags.classifier_tags.poor_score = isinstance(self, (_DiscreteNB, PoissonNB))
        return tags

    def _feature_names(self) -> Any:
        return getattr(self, "feature_names_in_", None)

    def _validate_X(self, X: Any, *, reset: bool) -> Any:
        Xv = self._numeric_X(X, reset=reset)
        values = Xv.data if sp.issparse(Xv) else Xv
        # One fast reduction decides the common case: NaN propagates through
        # min, and min gives the sign. +inf is left to the deferred check on
        # the results (it always reaches them), which saves a pass.
        lo = float(np.min(values, initial=0.0))
        hi = 0.0 if self._inf_reaches_results else float(np.max(values, initial=0.0))
        if not (np.isfinite(lo) and np.isfinite(hi)):
            check_finite(np.atleast_2d(values), "X", allow_nan=True)
        if self._positive and not lo >= 0:
            _check_nonnegative(Xv, type(self).__name__, self._feature_names())
        return Xv

    def _after(self, Xv: Any, result: Any) -> None:
        values = Xv.data if sp.issparse(Xv) else Xv
        super()._after(np.atleast_2d(values), result)

    def _present(self) -> NDArray[np.bool_]:
        return np.asarray(self.stats_.weights > 0)


class _DiscreteNB(_BaseNB):
    """Priors spelled as scikit-learn's discrete naive Bayes: ``fit_prior`` and ``class_prior``."""

    def _resolve_priors(self, stats: Any) -> _F:
        K = stats.n_classes
        if self.class_prior is not None:
            return check_priors(self.class_prior, K)
        if self.fit_prior:
            return np.asarray(stats.weights / stats.weights.sum(), dtype=float)
        return np.full(K, 1.0 / K)

    def _alpha(self, n_features: int) -> Any:
        return check_alpha(self.alpha, self.force_alpha, n_features)

    def _prior_attrs(self, priors: _F) -> dict[str, Any]:
        with np.errstate(divide="ignore"):
            return {"class_log_prior_": np.log(priors)}


_ALPHA = [Interval(Real, 0, None, closed="left"), "array-like"]
_PRIOR_PARAMS: dict = {"fit_prior": ["boolean"], "class_prior": ["array-like", None]}


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


class DiagonalLDA(_BaseNB):
    r"""Diagonal linear discriminant analysis ("naive Bayes + LDA").

    Every class is a normal distribution with independent features and one
    diagonal covariance shared by all classes: the pooled within-class
    variance of each feature. Decision functions are linear in ``x``. It
    often beats both LDA and Gaussian naive Bayes when features outnumber
    samples (Dudoit et al.).

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
    var_smoothing : float, default=1e-9
        Added to every variance, times the largest total variance (as in
        :class:`GaussianNB`).
    bias : bool, default=False
        False: the unbiased pooled variance ``sum_k M2_k / (sum_k V_k - K)``;
        True: the maximum-likelihood ``sum_k M2_k / sum_k V_k``.

    Attributes
    ----------
    classes_, class_count_, priors_ : as for :class:`GaussianNB`
    means_ : ndarray of shape (n_classes, n_features)
    var_ : ndarray of shape (n_features,)
        The pooled variance plus ``epsilon_``.
    epsilon_ : float
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
    """

    _stats_type = DiagonalStats
    _parameter_constraints: dict = {
        "priors": ["array-like", None],
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
        present = np.asarray(stats.weights > 0)
        names = self._feature_names()
        check_observed(stats.feature_weights, present, stats.classes, names)
        pooled = stats.pooled_variances(ddof=0.0 if self.bias else 1.0)
        _, eps = gaussian_variances(stats, self.var_smoothing)
        var = pooled + eps
        if np.any(~(var > 0)):
            j = int(np.flatnonzero(~(var > 0))[0])
            raise ValueError(
                f"feature {_name(names, j)!r} has no within-class variance (or too few rows "
                "to estimate it); set var_smoothing > 0 or bias=True."
            )
        means = stats.means
        with np.errstate(divide="ignore"):
            log_priors = np.log(priors)
        return {
            "means_": means.copy(),
            "var_": var,
            "epsilon_": eps,
            "coef_": means / var,
            "intercept_": -0.5 * (means * means / var).sum(axis=1) + log_priors,
            "_model": DiagonalGaussian(means, np.broadcast_to(var, means.shape)),
        }

    def _class_log_density(self, X: NDArray[Any]) -> _F:
        return self._model.log_prob(X)

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> _F:
        return self._model[k].sample(n, rng)


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


class MultinomialNB(_DiscreteNB):
    r"""Naive Bayes for counts (e.g. word counts): per class, a multinomial over features.

    A drop-in for ``sklearn.naive_bayes.MultinomialNB``; dense (NaN =
    missing) or scipy.sparse CSR input, never densified. Predictions with
    missing features equal those of the model fitted without them (the
    category probabilities are renormalised over the observed features).

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive smoothing: ``theta_kj = (S_kj + alpha) / sum_j (S_kj + alpha)``.
    force_alpha : bool, default=True
    fit_prior : bool, default=True
    class_prior : array-like of shape (n_classes,), default=None

    Attributes
    ----------
    classes_, class_count_, priors_ : as for :class:`GaussianNB`
    class_log_prior_ : ndarray of shape (n_classes,)
    feature_count_ : ndarray of shape (n_classes, n_features)
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log theta_kj``.
    stats_ : CountStats

    Notes
    -----
    ``score_samples`` and ``predict_joint_log_proba`` include the multinomial
    coefficient, so they are log probabilities of each row given its total;
    predictions skip it (it is the same for every class).

    References
    ----------
    A. McCallum and K. Nigam, "A comparison of event models for naive Bayes
    text classification", AAAI-98 Workshop on Learning for Text
    Categorization, 1998.
    """

    _stats_type = CountStats
    _sparse = True
    _positive = True
    _parameter_constraints: dict = {"alpha": _ALPHA, "force_alpha": ["boolean"], **_PRIOR_PARAMS}

    def __init__(
        self,
        *,
        alpha: Any = 1.0,
        force_alpha: bool = True,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
    ) -> None:
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    def _derive(self, stats: CountStats, priors: _F, **extra: Any) -> dict[str, Any]:
        present = np.asarray(stats.weights > 0)
        check_observed(stats.feature_weights, present, stats.classes, self._feature_names())
        log_theta = multinomial_log_theta(stats.sums, self._alpha(stats.n_features))
        W = np.where(present, stats.weights, 1.0)
        model_theta = np.where(present[:, None], log_theta, -np.log(stats.n_features))
        return {
            "feature_count_": stats.sums.copy(),
            "feature_log_prob_": log_theta,
            "_model": Multinomial(model_theta, stats.sums.sum(axis=1) / W),
            **self._prior_attrs(priors),
        }

    def _class_log_density(self, X: Any) -> _F:
        return self._model.log_prob(X)

    def _relative_joint(self, Xv: Any) -> _F:
        return self._mask_absent(self._model.relative_log_prob(Xv) + self._log_priors())

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> _F:
        return self._model[k].sample(n, rng)


class ComplementNB(_DiscreteNB):
    r"""Complement naive Bayes (Rennie et al.), suited to imbalanced text classes.

    Each class is scored by the counts of the *other* classes:
    ``log theta~_kj = log((sum_{l != k} S_lj + alpha) / sum_j (...))`` and
    ``jll_k(x) = -sum_j x_j log theta~_kj + log pi_k``. Unlike scikit-learn
    (issue #14444) the class priors are added, so ``class_prior`` and
    ``fit_prior`` take effect; with uniform priors (``fit_prior=False``) the
    probabilities are scikit-learn's. Dense (NaN = missing) or sparse input.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
    force_alpha : bool, default=True
    fit_prior : bool, default=True
    class_prior : array-like of shape (n_classes,), default=None
    norm : bool, default=False
        Normalise the weights ``log theta~_k`` by their sum (Rennie et al.'s
        weight normalisation).

    Attributes
    ----------
    classes_, class_count_, priors_, class_log_prior_ : as for :class:`MultinomialNB`
    feature_count_ : ndarray of shape (n_classes, n_features)
    feature_all_ : ndarray of shape (n_features,)
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        The weights: ``-log theta~`` (or the normalised form).
    stats_ : CountStats

    Notes
    -----
    The complement score is not a density: ``score_samples`` returns
    ``log sum_k exp(jll_k)`` of the scores, and :meth:`sample` draws from each
    class's own smoothed multinomial.

    References
    ----------
    J. D. M. Rennie, L. Shih, J. Teevan and D. R. Karger, "Tackling the poor
    assumptions of naive Bayes text classifiers", ICML 2003.
    """

    _stats_type = CountStats
    _sparse = True
    _positive = True
    _parameter_constraints: dict = {
        "alpha": _ALPHA,
        "force_alpha": ["boolean"],
        "norm": ["boolean"],
        **_PRIOR_PARAMS,
    }

    def __init__(
        self,
        *,
        alpha: Any = 1.0,
        force_alpha: bool = True,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
        norm: bool = False,
    ) -> None:
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.norm = norm

    def _derive(self, stats: CountStats, priors: _F, **extra: Any) -> dict[str, Any]:
        present = np.asarray(stats.weights > 0)
        check_observed(stats.feature_weights, present, stats.classes, self._feature_names())
        alpha = self._alpha(stats.n_features)
        feature_all = stats.sums.sum(axis=0)
        comp = feature_all + alpha - stats.sums
        with np.errstate(divide="ignore", invalid="ignore"):
            logged = np.log(comp / comp.sum(axis=1, keepdims=True))
        flp = logged / logged.sum(axis=1, keepdims=True) if self.norm else -logged
        W = np.where(present, stats.weights, 1.0)
        own = multinomial_log_theta(stats.sums, alpha)
        return {
            "feature_count_": stats.sums.copy(),
            "feature_all_": feature_all,
            "feature_log_prob_": flp,
            "_logged": logged,
            "_model": Multinomial(own, stats.sums.sum(axis=1) / W),
            **self._prior_attrs(priors),
        }

    def _class_log_density(self, X: Any) -> _F:
        from .models._missing import split_missing

        X0, missing = split_missing(X)
        if missing is None:
            return rows_dot(X0, self.feature_log_prob_)
        # exact marginalisation: the complement distribution renormalised over
        # the observed features, i.e. the model fitted without the missing ones
        logged = self._logged
        total = np.asarray(X0.sum(axis=1)).reshape(-1, 1)
        with np.errstate(divide="ignore"):
            L = np.log(1.0 - np.asarray(missing @ np.exp(logged).T))
        num = rows_dot(X0, logged) - total * L
        if not self.norm:
            return -num
        n_obs = self.n_features_in_ - np.asarray(missing.sum(axis=1)).reshape(-1, 1)
        summed = logged.sum(axis=1) - np.asarray(missing @ logged.T) - n_obs * L
        return num / summed

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> _F:
        return self._model[k].sample(n, rng)


class PoissonNB(_BaseNB):
    r"""Naive Bayes for counts: per class, independent Poisson features.

    Unlike the multinomial model, the total count of a row carries
    information about the class. Dense (NaN = missing) or sparse input.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
    alpha : float, default=1.0
        Added to each class's count total of each feature, so that a
        feature never seen non-zero in a class keeps a positive rate:
        ``rate_kj = (S_kj + alpha) / V_kj``.

    Attributes
    ----------
    classes_, class_count_, priors_ : as for :class:`GaussianNB`
    feature_count_ : ndarray of shape (n_classes, n_features)
    rate_ : ndarray of shape (n_classes, n_features)
    stats_ : CountStats

    References
    ----------
    S. Kim, H. Seo and H. Rim, "Poisson naive Bayes for text classification
    with feature weighting", Proceedings of IRAL 2003.
    """

    _stats_type = CountStats
    _sparse = True
    _positive = True
    _parameter_constraints: dict = {
        "priors": ["array-like", None],
        "alpha": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, priors: ArrayLike | None = None, alpha: float = 1.0) -> None:
        self.priors = priors
        self.alpha = alpha

    def _derive(self, stats: CountStats, priors: _F, **extra: Any) -> dict[str, Any]:
        present = np.asarray(stats.weights > 0)
        check_observed(stats.feature_weights, present, stats.classes, self._feature_names())
        rate = poisson_rates(stats, self.alpha)
        if np.any(~(rate[present] > 0)):
            raise ValueError(
                f"alpha={self.alpha} leaves a feature with rate 0 in a class; use alpha > 0."
            )
        return {
            "feature_count_": stats.sums.copy(),
            "rate_": rate,
            "_model": Poisson(np.where(present[:, None], rate, 1.0)),
        }

    def _class_log_density(self, X: Any) -> _F:
        return self._model.log_prob(X)

    def _relative_joint(self, Xv: Any) -> _F:
        return self._mask_absent(self._model.relative_log_prob(Xv) + self._log_priors())

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> _F:
        return self._model[k].sample(n, rng)


# ---------------------------------------------------------------------------------
# categorical
# ---------------------------------------------------------------------------------
class CategoricalNB(_DiscreteNB):
    r"""Naive Bayes for categorical features coded ``0, 1, 2, ...``.

    A drop-in for ``sklearn.naive_bayes.CategoricalNB``. A category never
    seen in training gets the smoothed probability
    ``alpha / (N_kj + alpha n_categories_j)`` instead of an IndexError.
    NaN entries are missing. Codes must be non-negative integers (a float
    such as 1.5 is an error, not truncated).

    Parameters
    ----------
    alpha : float, default=1.0
    force_alpha : bool, default=True
    fit_prior : bool, default=True
    class_prior : array-like of shape (n_classes,), default=None
    min_categories : int or array-like of shape (n_features,), default=None
        Minimum number of categories per feature.

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
    """

    _inf_reaches_results = False

    _stats_type = CategoryStats
    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "force_alpha": ["boolean"],
        "min_categories": [None, "array-like", Interval(Integral, 1, None, closed="left")],
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
    ) -> None:
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.min_categories = min_categories

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        return tags

    def _validate_X(self, X: Any, *, reset: bool) -> Any:
        Xv = super()._validate_X(X, reset=reset)
        check_categories(Xv, self._feature_names())
        return Xv

    def _derive(self, stats: CategoryStats, priors: _F, **extra: Any) -> dict[str, Any]:
        present = np.asarray(stats.weights > 0)
        names = self._feature_names()
        check_observed(stats.feature_weights, present, stats.classes, names)
        if self.min_categories is not None:
            mc = np.asarray(self.min_categories)
            if mc.ndim > 1 or (mc.ndim == 1 and mc.shape[0] != stats.n_features):
                raise ValueError(
                    f"min_categories must be an int or one int per feature ({stats.n_features}); "
                    f"got shape {mc.shape}."
                )
            if not np.issubdtype(mc.dtype, np.integer) or np.any(mc < 1):
                raise ValueError(f"min_categories must be positive integers; got {mc.tolist()}.")
        n_cat, log_probs, log_unseen = categorical_tables(
            stats, self._alpha(stats.n_features), self.min_categories
        )
        cc = stats.padded(int(n_cat.max(initial=1))).category_counts
        return {
            "n_categories_": n_cat,
            "category_count_": [cc[:, j, : n_cat[j]].copy() for j in range(stats.n_features)],
            "feature_log_prob_": [log_probs[:, j, : n_cat[j]] for j in range(stats.n_features)],
            "_model": Categorical(log_probs, log_unseen),
            **self._prior_attrs(priors),
        }

    def _class_log_density(self, X: Any) -> _F:
        return self._model.log_prob(X)

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> _F:
        return self._model[k].sample(n, rng)


# ---------------------------------------------------------------------------------
# kernel densities
# ---------------------------------------------------------------------------------
_BANDWIDTH = [
    StrOptions({"scott", "silverman", "cv"}),
    Interval(Real, None, None, closed="neither"),
    "array-like",
]


class KernelNB(_BaseNB):
    r"""Kernel naive Bayes: per class and feature, a Gaussian kernel density (Parzen).

    Fitted from :class:`bayesrule.stats.ValueCountStats` (the weighted
    distinct values of each feature in each class), so ``partial_fit`` and
    ``merge`` are exact. Densities are exact sums over the stored values when
    every feature has few distinct values; otherwise each feature is binned
    onto a grid, convolved with the kernel by FFT and the log density is
    interpolated (see :class:`bayesrule.models.KernelDensity`), which makes
    MNIST (60000 x 784) take seconds.

    Parameters
    ----------
    bandwidth : {'scott', 'silverman', 'cv'}, float or array-like of shape (n_features,), default='scott'
        The kernel standard deviation. 'scott' and 'silverman' are the rules
        of thumb per class and feature (as ``scipy.stats.gaussian_kde``); 'cv'
        picks, per class and feature, the multiple of Scott's bandwidth
        (from 0.25 to 4) of largest leave-one-out likelihood. A float (or one
        per feature) is used as is, for every class.
    priors : array-like of shape (n_classes,), default=None
    bandwidth_floor : float, default=0.1
        The rule-of-thumb and 'cv' bandwidths are at least this multiple of
        the feature's Scott bandwidth over all classes, so that a feature
        constant within a class still has a usable density.
    method : {'auto', 'exact', 'grid'}, default='auto'
        'auto' is 'exact' when the classes hold at most ``64 * grid_size``
        distinct values.
    grid_size : int, default=1024

    Attributes
    ----------
    classes_, class_count_, priors_ : as for :class:`GaussianNB`
    bandwidth_ : ndarray of shape (n_classes, n_features)
    stats_ : ValueCountStats

    References
    ----------
    G. H. John and P. Langley, "Estimating continuous distributions in
    Bayesian classifiers", UAI 1995. E. Parzen, "On estimation of a
    probability density function and mode", Annals of Mathematical
    Statistics 33(3), 1962.
    """

    _inf_reaches_results = False

    _stats_type = ValueCountStats
    _parameter_constraints: dict = {
        "bandwidth": _BANDWIDTH,
        "priors": ["array-like", None],
        "bandwidth_floor": [Interval(Real, 0, None, closed="left")],
        "method": [StrOptions({"auto", "exact", "grid"})],
        "grid_size": [Interval(Integral, 16, None, closed="left")],
    }

    def __init__(
        self,
        *,
        bandwidth: Any = "scott",
        priors: ArrayLike | None = None,
        bandwidth_floor: float = 0.1,
        method: str = "auto",
        grid_size: int = 1024,
    ) -> None:
        self.bandwidth = bandwidth
        self.priors = priors
        self.bandwidth_floor = bandwidth_floor
        self.method = method
        self.grid_size = grid_size

    def _derive(self, stats: ValueCountStats, priors: _F, **extra: Any) -> dict[str, Any]:
        present = np.asarray(stats.weights > 0)
        names = self._feature_names()
        h, V, h_scott = kernel_bandwidths(stats, self.bandwidth, self.bandwidth_floor, names)
        check_observed(V, present, stats.classes, names)
        kde: dict[str, Any] = {"method": self.method, "grid_size": self.grid_size}
        if isinstance(self.bandwidth, str) and self.bandwidth == "cv":
            lower = np.minimum(h, h_scott)
            h = cv_bandwidths(stats, present, h_scott, lower, **kde)
        model = KernelDensity(
            stats.indptr, stats.values, stats.value_weights[present], h[present], **kde
        )
        return {"bandwidth_": h, "_model": model}

    def _class_log_density(self, X: NDArray[Any]) -> _F:
        return _scatter_classes(self._model.log_prob(X), self._present())

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> _F:
        index = int(np.cumsum(self._present())[k]) - 1
        return self._model[index].sample(n, rng)


# ---------------------------------------------------------------------------------
# mixed columns
# ---------------------------------------------------------------------------------
class _MixedStatsFactory:
    """``from_data`` / ``empty`` of :class:`MixedStats` for fixed column kinds."""

    def __init__(self, kinds: tuple[str, ...]) -> None:
        self.kinds = kinds

    def empty(self, classes: ArrayLike, n_features: int) -> MixedStats:
        return MixedStats.empty(classes, self.kinds)

    def from_data(
        self, X: Any, y: Any, sample_weight: Any = None, *, classes: Any = None
    ) -> MixedStats:
        return MixedStats.from_data(X, y, sample_weight, kinds=self.kinds, classes=classes)


def _infer_kind(series: Any) -> str:
    import pandas as pd

    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bernoulli"
    if pd.api.types.is_integer_dtype(dtype):
        return "poisson"
    if pd.api.types.is_float_dtype(dtype):
        return "gaussian"
    return "categorical"


def _is_dataframe(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


class MixedNB(_BaseNB):
    r"""Naive Bayes with a class model chosen per column.

    Each column is modelled by one of 'gaussian', 'kernel', 'bernoulli',
    'categorical' or 'poisson', given in ``columns`` or inferred: for a
    pandas DataFrame from the dtype (float: gaussian, integer: poisson,
    boolean: bernoulli, string / object / category: categorical), for an
    array as 'gaussian'. Strings are coded by a vocabulary that grows with
    ``partial_fit`` and is united by ``merge``; a string not seen in training
    gets the smoothed probability of an unseen category. Missing values
    (NaN, None, ``pd.NA``) are marginalised out.

    Parameters
    ----------
    columns : dict or list of str, default=None
        ``{column name or index: kind}`` for some columns (the rest are
        inferred) or a list with one kind per column.
    priors : array-like of shape (n_classes,), default=None
    var_smoothing : float, default=1e-9
        For the gaussian columns (see :class:`GaussianNB`).
    alpha : float, default=1.0
        Smoothing of the bernoulli, categorical and poisson columns.
    bandwidth : {'scott', 'silverman', 'cv'} or float, default='scott'
        For the kernel columns (see :class:`KernelNB`).

    Attributes
    ----------
    kinds_ : list of str
        The model of each column.
    categories_ : dict of int to ndarray
        The vocabulary of each string column (index: code).
    classes_, class_count_, priors_ : as for :class:`GaussianNB`
    stats_ : MixedStats

    References
    ----------
    T. Hastie, R. Tibshirani and J. Friedman, The Elements of Statistical
    Learning, 2nd ed., section 6.6.3.
    """

    _inf_reaches_results = False

    _parameter_constraints: dict = {
        "columns": [dict, list, None],
        "priors": ["array-like", None],
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "bandwidth": _BANDWIDTH,
    }

    def __init__(
        self,
        *,
        columns: Any = None,
        priors: ArrayLike | None = None,
        var_smoothing: float = 1e-9,
        alpha: float = 1.0,
        bandwidth: Any = "scott",
    ) -> None:
        self.columns = columns
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.alpha = alpha
        self.bandwidth = bandwidth

    @property
    def _stats_type(self) -> Any:  # the statistics depend on the fitted column kinds
        return _MixedStatsFactory(tuple(self.kinds_))

    # ------------------------------------------------------------------ input
    def _resolve_kinds(self, inferred: list[str], names: list[Any]) -> list[str]:
        kinds = list(inferred)
        spec = self.columns
        if spec is None:
            return kinds
        if isinstance(spec, list):
            if len(spec) != len(kinds):
                raise ValueError(
                    f"columns must give one kind per column ({len(kinds)}); got {len(spec)}."
                )
            items = list(enumerate(spec))
        else:
            items = []
            for key, kind in spec.items():
                if key in names:
                    items.append((names.index(key), kind))
                elif isinstance(key, (int, np.integer)) and 0 <= key < len(kinds):
                    items.append((int(key), kind))
                else:
                    raise ValueError(
                        f"columns names an unknown column {key!r}; the columns are {names[:20]}."
                    )
        for j, kind in items:
            if kind not in KINDS:
                raise ValueError(
                    f"columns gives column {names[j]!r} the kind {kind!r}; expected one of "
                    f"{list(KINDS)}."
                )
            kinds[j] = kind
        return kinds

    def _validate_X(self, X: Any, *, reset: bool) -> Any:
        first = reset or not hasattr(self, "kinds_")
        if not _is_dataframe(X):
            Xv = super()._validate_X(X, reset=reset)
            if first:
                self.kinds_ = self._resolve_kinds(
                    ["gaussian"] * Xv.shape[1], list(range(Xv.shape[1]))
                )
                self.categories_: dict[int, Any] = {}
            elif getattr(self, "categories_", {}):
                raise ValueError(
                    "this MixedNB was fitted on a DataFrame with string columns; pass a "
                    "DataFrame with the same columns."
                )
            return self._check_kinds(Xv)
        from sklearn.utils.validation import _check_feature_names, _check_n_features

        _check_feature_names(self, X, reset=reset)
        _check_n_features(self, X, reset=reset)
        names = list(X.columns)
        if first:
            inferred = [_infer_kind(X.iloc[:, j]) for j in range(X.shape[1])]
            self.kinds_ = self._resolve_kinds(inferred, names)
            self.categories_ = {}
        out = np.empty(X.shape, dtype=np.float64)
        vocab = dict(self.categories_)
        for j in range(X.shape[1]):
            col = X.iloc[:, j]
            is_text = not (
                col.dtype.kind in "biuf"
                or str(col.dtype) in ("boolean",)
                or str(col.dtype).startswith(("Int", "UInt", "Float"))
            )
            if is_text:
                if self.kinds_[j] != "categorical":
                    raise ValueError(
                        f"column {names[j]!r} holds {col.dtype} values, which only the "
                        f"'categorical' kind accepts; got {self.kinds_[j]!r}."
                    )
                out[:, j] = self._encode(col, j, vocab, grow=reset or first)
            else:
                out[:, j] = col.astype("float64").to_numpy(na_value=np.nan)
        if np.isinf(out).any():
            raise ValueError("Input X contains infinity; only finite values or NaN are accepted.")
        self.categories_ = vocab
        return self._check_kinds(out)

    def _encode(self, col: Any, j: int, vocab: dict[int, Any], *, grow: bool) -> _F:
        import pandas as pd

        values = col.astype(object).to_numpy()
        missing = pd.isna(values)
        known = list(vocab.get(j, []))
        if grow:
            new = sorted({str(v) for v in values[~missing]} - set(known))
            known = known + new
            vocab[j] = np.asarray(known, dtype=object)
        index = {v: i for i, v in enumerate(known)}
        unseen = len(known)
        codes = np.array(
            [
                np.nan if m else index.get(str(v), unseen)
                for v, m in zip(values, missing, strict=True)
            ],
            dtype=np.float64,
        )
        return codes

    def _check_kinds(self, X: _F) -> _F:
        kinds = np.asarray(self.kinds_, dtype=object)
        names = self._feature_names()
        cat = np.flatnonzero(kinds == "categorical")
        if cat.size:
            check_categories(X[:, cat], cat if names is None else np.asarray(names)[cat])
        counts = np.flatnonzero(kinds == "poisson")
        if counts.size:
            sub = X[:, counts]
            with np.errstate(invalid="ignore"):
                if np.any(sub < 0):
                    r, c = (int(t[0]) for t in np.nonzero(sub < 0))
                    raise ValueError(
                        f"column {_name(names, int(counts[c]))!r} is modelled as 'poisson' counts "
                        f"and must be non-negative; got {sub[r, c]!r} at row {r}."
                    )
        binary = np.flatnonzero(kinds == "bernoulli")
        if binary.size:
            sub = X[:, binary]
            X = X.copy()
            X[:, binary] = np.where(np.isnan(sub), np.nan, (sub > 0).astype(float))
        return X

    # ----------------------------------------------------------------- merge
    def merge(self, other: GenerativeClassifier) -> Any:
        """A new model equal to one fitted on the training data of both (vocabularies united)."""
        check_is_fitted(self)
        if isinstance(other, MixedNB) and (self.categories_ or other.categories_):
            other = other._recoded(self.categories_)
            new = super().merge(other)
            new.kinds_, new.categories_ = list(self.kinds_), dict(other.categories_)
            return new
        new = super().merge(other)
        new.kinds_, new.categories_ = list(self.kinds_), dict(self.categories_)
        return new

    def _recoded(self, vocab: dict[int, Any]) -> MixedNB:
        """A copy whose string codes follow ``vocab`` (extended by this model's new strings)."""
        from copy import copy

        out = copy(self)
        united = dict(vocab)
        part = self.stats_.parts.get("categorical")
        if part is None:
            return out
        cat_cols = list(self.stats_.columns("categorical"))
        cc = part.category_counts
        new_cc_list = []
        for i, j in enumerate(cat_cols):
            mine = list(self.categories_.get(j, []))
            theirs = list(united.get(j, []))
            theirs = theirs + [v for v in mine if v not in set(theirs)]
            united[j] = np.asarray(theirs, dtype=object)
            pos = {v: t for t, v in enumerate(theirs)}
            perm = np.array([pos[v] for v in mine], dtype=np.intp)
            row = np.zeros((cc.shape[0], max(len(theirs), cc.shape[2])))
            if mine:
                row[:, perm] = cc[:, i, : len(mine)]
            else:
                row[:, : cc.shape[2]] = cc[:, i, :]
            new_cc_list.append(row)
        C = max(r.shape[1] for r in new_cc_list)
        new_cc = np.stack([np.pad(r, ((0, 0), (0, C - r.shape[1]))) for r in new_cc_list], axis=1)
        parts = dict(self.stats_.parts)
        parts["categorical"] = CategoryStats(part.classes, part.counts, part.weights, new_cc)
        out.stats_ = MixedStats(
            self.stats_.kinds, self.stats_.classes, self.stats_.counts, self.stats_.weights, parts
        )
        out.categories_ = united
        return out

    # ---------------------------------------------------------------- derive
    def _derive(self, stats: MixedStats, priors: _F, **extra: Any) -> dict[str, Any]:
        present = np.asarray(stats.weights > 0)
        names = self._feature_names()
        models: dict[str, Any] = {}
        for kind, part in stats.parts.items():
            cols = stats.columns(kind)
            sub_names = cols if names is None else np.asarray(names)[cols]
            if kind == "kernel":
                h, V, h_scott = kernel_bandwidths(part, self.bandwidth, 0.1, sub_names)
                check_observed(V, present, stats.classes, sub_names)
                if isinstance(self.bandwidth, str) and self.bandwidth == "cv":
                    h = cv_bandwidths(part, present, h_scott, np.minimum(h, h_scott))
                models[kind] = KernelDensity(
                    part.indptr, part.values, part.value_weights[present], h[present]
                )
                continue
            check_observed(part.feature_weights, present, stats.classes, sub_names)
            if kind == "gaussian":
                var = part.variances(ddof=0.0)
                _, eps = gaussian_variances(part, self.var_smoothing)
                var = np.where(np.isnan(var), 1.0, var) + eps
                if np.any(~(var[present] > 0)):
                    raise ValueError(
                        "a gaussian column has zero variance in a class; set var_smoothing > 0."
                    )
                models[kind] = DiagonalGaussian(part.means[present], var[present])
            elif kind == "bernoulli":
                models[kind] = Bernoulli(bernoulli_log_p(part, self.alpha)[present])
            elif kind == "poisson":
                models[kind] = Poisson(poisson_rates(part, self.alpha)[present])
            else:
                _, log_probs, log_unseen = categorical_tables(part, self.alpha)
                models[kind] = Categorical(log_probs[present], log_unseen[present])
        return {"_models": models}

    def _class_log_density(self, X: NDArray[Any]) -> _F:
        present = self._present()
        out = np.zeros((X.shape[0], int(present.sum())))
        for kind, model in self._models.items():
            out += model.log_prob(X[:, self.stats_.columns(kind)])
        return _scatter_classes(out, present)

    def _sample_class(self, k: int, n: int, rng: np.random.Generator) -> _F:
        index = int(np.cumsum(self._present())[k]) - 1
        out = np.empty((n, self.n_features_in_))
        for kind, model in self._models.items():
            out[:, self.stats_.columns(kind)] = model[index].sample(n, rng)
        return out

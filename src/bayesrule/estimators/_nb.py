"""Shared parts of the naive Bayes estimators: derivation helpers and base classes."""

from __future__ import annotations

import warnings
from numbers import Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.utils._param_validation import Interval

from .._validation import check_finite, check_priors
from ..models.kernel import KernelDensity
from ..stats import CategoryStats, CountStats, DiagonalStats, ValueCountStats
from ._base import GenerativeClassifier

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
    #: scikit-learn says the same of its discrete naive Bayes: on the checks'
    #: Gaussian blobs a count or binary model is not expected to reach 83%
    _poor_score = False

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = self._sparse
        tags.input_tags.positive_only = self._positive
        tags.classifier_tags.poor_score = self._poor_score
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

    _poor_score = True

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

"""Shared parts of the Gaussian discriminant analyses."""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils._param_validation import Interval, StrOptions

from ..stats import ScatterStats, encode
from ._base import GenerativeClassifier

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

"""Choosing RDA's ``alpha`` and ``gamma`` by cross-validation, fast.

The folds' statistics are computed in one pass and merged to give each
training split, so the data are read once. For each split, ``alpha`` and
class, one eigendecomposition of ``Sigma_k(alpha)`` serves every ``gamma``:
shrinking towards ``(tr/p) I`` keeps the eigenvectors and maps each
eigenvalue ``l`` to ``(1 - gamma) l + gamma tr/p``. The held-out rows are
rotated once, and the Mahalanobis distances for all ``gamma`` come from one
matrix product of the squared rotated rows with the inverse eigenvalues.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import eigh
from scipy.special import logsumexp
from sklearn.model_selection import StratifiedKFold
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if

from ..stats import ScatterStats, encode
from .rda import (
    RegularizedDiscriminantAnalysis,
    _rda_attrs,
    blended_covariances,
)

__all__ = ["RegularizedDiscriminantAnalysisCV"]

_F = NDArray[np.float64]
_LOG_2PI = float(np.log(2.0 * np.pi))


def _never(_: Any) -> bool:
    return False


class RegularizedDiscriminantAnalysisCV(RegularizedDiscriminantAnalysis):
    r"""Regularized discriminant analysis with ``alpha`` and ``gamma`` chosen by cross-validation.

    Every pair of the grid ``alphas x gammas`` is scored on ``cv`` stratified
    folds; the best pair (ties go to the more regularised one: smaller alpha,
    larger gamma) is stored in ``alpha_`` and ``gamma_`` and the final model
    is derived from the statistics of all the data — no second pass.

    Parameters
    ----------
    alphas : sequence of float in [0, 1], default=(0, 0.25, 0.5, 0.75, 1)
    gammas : sequence of float in [0, 1], default=(0, 0.01, 0.05, 0.1, 0.2, 0.5)
    cv : int, default=5
        Number of stratified folds.
    scoring : {'accuracy', 'log_likelihood'}, default='accuracy'
        Held-out accuracy, or mean held-out log posterior of the true class.
    random_state : int or None, default=0
        Shuffling of the folds.
    priors, store_covariance, tol, bias
        As in :class:`RegularizedDiscriminantAnalysis`.

    Attributes
    ----------
    alpha_, gamma_ : float
        The chosen values.
    cv_scores_ : ndarray of shape (len(alphas), len(gammas))
        Mean held-out score of each pair (``-inf`` where a covariance was singular).

    References
    ----------
    J. H. Friedman, "Regularized discriminant analysis", JASA 84(405), 1989.
    """

    _parameter_constraints: dict = {
        "alphas": ["array-like"],
        "gammas": ["array-like"],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "scoring": [StrOptions({"accuracy", "log_likelihood"})],
        "random_state": ["random_state"],
        "priors": ["array-like", None],
        "store_covariance": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "bias": ["boolean"],
    }

    def __init__(
        self,
        *,
        alphas: ArrayLike = (0.0, 0.25, 0.5, 0.75, 1.0),
        gammas: ArrayLike = (0.0, 0.01, 0.05, 0.1, 0.2, 0.5),
        cv: int = 5,
        scoring: str = "accuracy",
        random_state: Any = 0,
        priors: ArrayLike | None = None,
        store_covariance: bool = False,
        tol: float = 1.0e-4,
        bias: bool = False,
    ) -> None:
        self.alphas = alphas
        self.gammas = gammas
        self.cv = cv
        self.scoring = scoring
        self.random_state = random_state
        self.priors = priors
        self.store_covariance = store_covariance
        self.tol = tol
        self.bias = bias

    def _grid(self) -> tuple[_F, _F]:
        out = []
        for name in ("alphas", "gammas"):
            g = np.asarray(getattr(self, name), dtype=float).ravel()
            if g.size == 0 or np.any((g < 0) | (g > 1)) or not np.all(np.isfinite(g)):
                raise ValueError(
                    f"{name} must be a non-empty list of numbers in [0, 1]; got {g.tolist()}."
                )
            out.append(g)
        return out[0], out[1]

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Any:
        """Score the grid by cross-validation, then fit with the best pair."""
        self._validate_params()
        alphas, gammas = self._grid()
        Xv, y_arr, w = self._validate_fit_input(X, y, sample_weight, reset=True)
        if not np.any(w > 0):
            raise ValueError("every sample weight is zero: nothing can be fitted.")
        classes = np.unique(y_arr)
        if classes.size < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 classes; y has {classes.size} class."
            )
        n_splits = min(self.cv, int(np.bincount(encode(y_arr, classes)).min()))
        if n_splits < 2:
            raise ValueError("every class needs at least 2 samples for cross-validation.")
        folds = [
            test
            for _, test in StratifiedKFold(
                n_splits, shuffle=True, random_state=self.random_state
            ).split(Xv, y_arr)
        ]
        parts = [ScatterStats.from_data(Xv[f], y_arr[f], w[f], classes=classes) for f in folds]
        scores = np.zeros((alphas.size, gammas.size))
        for i, test in enumerate(folds):
            train = ScatterStats.empty(classes, Xv.shape[1])
            for j, part in enumerate(parts):
                if j != i:
                    train = train.merge(part)
            scores += self._fold_scores(
                train, Xv[test], encode(y_arr[test], classes), w[test], alphas, gammas
            )
        scores /= len(folds)
        # ties: prefer the more regularised pair (smaller alpha, then larger gamma)
        flat = np.flatnonzero(scores == scores.max())
        pairs = [np.unravel_index(f, scores.shape) for f in flat]
        ia, ig = min(pairs, key=lambda ij: (alphas[ij[0]], -gammas[ij[1]]))
        if not np.isfinite(scores[ia, ig]):
            raise ValueError(
                "every (alpha, gamma) pair gave a singular class covariance on some fold; "
                "add gammas > 0."
            )
        total = parts[0]
        for part in parts[1:]:
            total = total.merge(part)
        self.alpha_, self.gamma_ = float(alphas[ia]), float(gammas[ig])
        self.cv_scores_ = scores
        self._install(total)
        return self

    def _derive(self, stats: Any, priors: _F, **extra: Any) -> dict[str, Any]:
        return _rda_attrs(self, stats, self.alpha_, self.gamma_)

    def _fold_scores(
        self, train: ScatterStats, X: _F, yi: NDArray[np.intp], w: _F, alphas: _F, gammas: _F
    ) -> _F:
        if self.priors is None:
            priors = train.weights / train.weights.sum()
        else:
            priors = np.asarray(self.priors, dtype=float)
            priors = priors / priors.sum()
        with np.errstate(divide="ignore"):
            log_priors = np.log(priors)
        K, p = train.n_classes, train.n_features
        out = np.full((alphas.size, gammas.size), -np.inf)
        for a_i, alpha in enumerate(alphas):
            try:
                covs = blended_covariances(train, float(alpha), 0.0, self._ddof())
            except ValueError:
                continue
            jll = np.full((X.shape[0], K, gammas.size), -np.inf)
            ok = np.ones(gammas.size, dtype=bool)
            for k in np.flatnonzero(train.weights > 0):
                lam, V = eigh(covs[k], driver="evr")
                t = lam.sum() / p
                eig = (1.0 - gammas)[None, :] * lam[:, None] + gammas[None, :] * t  # (p, G)
                ok &= eig.min(axis=0) > self.tol
                safe = np.where(eig > 0, eig, np.inf)
                Z = (X - train.means[k]) @ V
                maha = (Z * Z) @ (1.0 / safe)  # (n, G): all gammas at once
                logdet = np.sum(np.log(np.where(eig > 0, eig, 1.0)), axis=0)
                jll[:, k, :] = log_priors[k] - 0.5 * (maha + logdet + p * _LOG_2PI)
            if self.scoring == "accuracy":
                correct = np.argmax(jll, axis=1) == yi[:, None]
                score = (w @ correct) / w.sum()
            else:
                post = jll[np.arange(len(yi)), yi, :] - logsumexp(jll, axis=1)
                score = (w @ post) / w.sum()
            out[a_i] = np.where(ok, score, -np.inf)
        return out

    @available_if(_never)
    def partial_fit(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - hidden
        """Not available: cross-validation needs the whole data set."""
        raise AttributeError("partial_fit")

    @available_if(_never)
    def merge(self, other: Any) -> Any:  # pragma: no cover - hidden
        """Not available: cross-validation needs the whole data set."""
        raise AttributeError("merge")

"""Choosing RDA's ``alpha`` and ``gamma`` by cross-validation, fast.

The folds' statistics are computed in one pass, merged into the total,
and each training split is the total less its fold (``subtract``), so the
data are read once. For each split, ``alpha`` and
class, one eigendecomposition of ``Sigma_k(alpha)`` serves every ``gamma``:
shrinking towards ``(tr/p) I`` keeps the eigenvectors and maps each
eigenvalue ``l`` to ``(1 - gamma) l + gamma tr/p``, and the fixed ridge
``reg_param = r`` (``(1 - r) Sigma + r I``) maps that to ``(1 - r) (...) + r``,
with the same eigenvectors again. The held-out rows are
rotated once, and the Mahalanobis distances for all ``gamma`` come from one
matrix product of the squared rotated rows with the inverse eigenvalues
(:func:`held_out_terms`). With ``alpha = 0`` every class has the pooled
covariance: one eigendecomposition and one rotation serve all classes.
Features with no variance form a diagonal block of their own. The
(alpha, class) jobs share the cores, each with a single-threaded BLAS.

The model is its hyperparameters and its statistic,
:class:`CrossValidatedStats`: the statistics of all the data and the grid's
held-out scores. The choice of ``(alpha, gamma)`` is redone from the scores
whenever the model is derived (``fit``, ``from_stats``, ``load``). Held-out
scores are not sums over rows, so the statistic cannot be merged or
subtracted: ``partial_fit``, ``merge`` and ``forget`` are not available.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import eigh
from scipy.special import logsumexp
from sklearn.model_selection import StratifiedKFold
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._parallel import in_parallel
from .._validation import check_priors
from ..covariance import shrink
from ..models.gaussian import blended_covariance, check_own_weight, correlation_singular
from ..stats import ScatterStats, StatisticsError, encode
from ..stats._common import as_classes
from ._da import _CLASS_GAUSSIAN_PARAMS, _ClassGaussianDA

__all__ = ["CrossValidatedStats", "RegularizedDiscriminantAnalysisCV"]

_F = NDArray[np.float64]
_LOG_2PI = float(np.log(2.0 * np.pi))


@dataclass(frozen=True)
class CrossValidatedStats:
    """The statistic of :class:`RegularizedDiscriminantAnalysisCV`.

    Parameters
    ----------
    total : ScatterStats
        The statistics of all the data (the final model is derived from them).
    cv_scores : ndarray of shape (len(alphas), len(gammas))
        Mean held-out score of each pair of the grid (``-inf`` where a class
        covariance was singular on some split).

    Notes
    -----
    Held-out scores depend on every row of every split, not on sums over
    rows, so two such statistics cannot be merged or subtracted (a
    ``StatisticsError``); ``from_data`` needs the cross-validation settings,
    so use ``RegularizedDiscriminantAnalysisCV().statistics(X, y)``.
    """

    total: ScatterStats
    cv_scores: NDArray[np.float64]

    @property
    def classes(self) -> NDArray[Any]:
        return self.total.classes

    @property
    def counts(self) -> NDArray[np.int64]:
        return self.total.counts

    @property
    def weights(self) -> _F:
        return self.total.weights

    @property
    def n_features(self) -> int:
        return self.total.n_features

    @property
    def n_classes(self) -> int:
        return self.total.n_classes

    @classmethod
    def empty(cls, classes: ArrayLike, n_features: int) -> CrossValidatedStats:
        raise StatisticsError(_NOT_STREAMABLE)

    @classmethod
    def from_data(
        cls, X: Any, y: Any, sample_weight: Any = None, *, classes: Any = None
    ) -> CrossValidatedStats:
        raise StatisticsError(
            "CrossValidatedStats need the cross-validation settings; use "
            "RegularizedDiscriminantAnalysisCV(...).statistics(X, y)."
        )

    def merge(self, other: Any) -> CrossValidatedStats:
        raise StatisticsError(_NOT_STREAMABLE)

    def subtract(self, other: Any) -> CrossValidatedStats:
        raise StatisticsError(_NOT_STREAMABLE)

    def allclose(self, other: Any, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        return (
            isinstance(other, CrossValidatedStats)
            and self.cv_scores.shape == other.cv_scores.shape
            and self.total.allclose(other.total, rtol, atol)
            and bool(np.allclose(self.cv_scores, other.cv_scores, rtol=rtol, atol=atol))
        )


_NOT_STREAMABLE = (
    "cross-validation scores cannot be merged or subtracted (each held-out score "
    "depends on every row of its training split); fit RegularizedDiscriminantAnalysisCV "
    "on all the data, or use RegularizedDiscriminantAnalysis with the chosen alpha_ and "
    "gamma_ to stream"
)


class _Refused:
    """A method of the base that this estimator does not have.

    ``hasattr`` is False (so scikit-learn and duck typing see no such
    method), and using it raises an AttributeError that says why.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        who = owner.__name__ if owner is not None else type(obj).__name__
        raise AttributeError(f"{who} has no {self.name}: {self.reason}.")


class RegularizedDiscriminantAnalysisCV(_ClassGaussianDA):
    r"""Regularized discriminant analysis with ``alpha`` and ``gamma`` chosen by cross-validation.

    Every pair of the grid ``alphas x gammas`` is scored on the splits of
    ``cv``; the best pair (ties go to the more regularised one: smaller alpha,
    larger gamma) is stored in ``alpha_`` and ``gamma_`` and the final model
    is derived from the statistics of all the data — no second pass.

    Parameters
    ----------
    alphas : sequence of float in [0, 1], default=(0, 0.25, 0.5, 0.75, 1)
    gammas : sequence of float in [0, 1], default=(0, 0.01, 0.05, 0.1, 0.2, 0.5)
    reg_param : float in [0, 1], default=0.0
        Fixed, not searched: every pair's covariances get the ridge
        ``(1 - reg_param) Sigma + reg_param I`` after the shrinkage, as in
        :class:`RegularizedDiscriminantAnalysis` (scikit-learn QDA's meaning).
    cv : int, splitter or iterable of (train, test) index arrays, default=5
        As scikit-learn's ``cv``: an int is that many stratified, shuffled
        folds (at most the size of the smallest class); an object with a
        ``split(X, y)`` method (``KFold``, ``ShuffleSplit``, ...) or an
        iterable of ``(train, test)`` pairs of row indices is used as given.
        Disjoint test sets whose training sets are the other rows (k-fold)
        reuse the folds' statistics; other splits compute each training
        split's statistics.
    scoring : {'accuracy', 'log_likelihood'}, default='accuracy'
        Held-out accuracy, or mean held-out log posterior of the true class
        (both weighted by ``sample_weight``).
    random_state : int or None, default=0
        Shuffling of the folds when ``cv`` is an int.
    priors, store_covariance, tol, bias
        As in :class:`RegularizedDiscriminantAnalysis`.

    Attributes
    ----------
    alpha_, gamma_ : float
        The chosen values.
    cv_scores_ : ndarray of shape (len(alphas), len(gammas))
        Mean held-out score of each pair (``-inf`` where a covariance was singular).
    stats_ : CrossValidatedStats
        The statistics of all the data and ``cv_scores_``: the model file
        stores them, and ``from_stats`` redoes the choice from the scores.

    Notes
    -----
    ``partial_fit``, ``merge`` and ``forget`` are not available: held-out
    scores cannot be updated from statistics.

    References
    ----------
    J. H. Friedman, "Regularized discriminant analysis", JASA 84(405), 1989.
    """

    _stats_type = CrossValidatedStats  # type: ignore[assignment]  # not a ScatterStats: it holds one
    _parameter_constraints: dict = {
        **_CLASS_GAUSSIAN_PARAMS,
        "alphas": ["array-like"],
        "gammas": ["array-like"],
        "reg_param": [Interval(Real, 0, 1, closed="both")],
        "cv": [Interval(Integral, 2, None, closed="left"), HasMethods(["split"]), Iterable],
        "scoring": [StrOptions({"accuracy", "log_likelihood"})],
        "random_state": ["random_state"],
    }
    _remedy = "add gammas > 0 or set reg_param > 0"

    partial_fit = _Refused("cross-validation needs all the data at once")
    merge = _Refused("cross-validation scores cannot be merged")
    forget = _Refused("cross-validation scores cannot be updated")

    def __init__(
        self,
        *,
        alphas: ArrayLike = (0.0, 0.25, 0.5, 0.75, 1.0),
        gammas: ArrayLike = (0.0, 0.01, 0.05, 0.1, 0.2, 0.5),
        reg_param: float = 0.0,
        cv: Any = 5,
        scoring: str = "accuracy",
        random_state: Any = 0,
        priors: ArrayLike | None = None,
        store_covariance: bool = False,
        tol: float = 1.0e-4,
        bias: bool = False,
    ) -> None:
        self.alphas = alphas
        self.gammas = gammas
        self.reg_param = reg_param
        self.cv = cv
        self.scoring = scoring
        self.random_state = random_state
        self.priors = priors
        self.store_covariance = store_covariance
        self.tol = tol
        self.bias = bias

    # ------------------------------------------------------------ parameters
    def _grid(self) -> tuple[_F, _F]:
        out = []
        for name in ("alphas", "gammas"):
            try:
                g = np.asarray(getattr(self, name), dtype=float).ravel()
            except (TypeError, ValueError):
                g = np.array([np.nan])
            if g.size == 0 or not np.all(np.isfinite(g)) or np.any((g < 0) | (g > 1)):
                raise ValueError(
                    f"{name} must be a non-empty list of numbers in [0, 1]; "
                    f"got {getattr(self, name)!r}."
                )
            out.append(g)
        return out[0], out[1]

    def _splits(
        self, Xv: NDArray[Any], y: NDArray[Any], classes: NDArray[Any]
    ) -> list[tuple[NDArray[np.intp], NDArray[np.intp]]]:
        """The (train, test) row indices of every split, checked."""
        n = Xv.shape[0]
        cv = self.cv
        if isinstance(cv, Integral):
            smallest = int(np.bincount(encode(y, classes), minlength=classes.size).min())
            n_splits = min(int(cv), smallest)
            if n_splits < 2:
                raise ValueError(
                    f"cv={cv} needs at least 2 samples of every class; the smallest class "
                    f"has {smallest}."
                )
            cv = StratifiedKFold(n_splits, shuffle=True, random_state=self.random_state)
        raw = cv.split(Xv, y) if hasattr(cv, "split") else cv
        splits = []
        for i, pair in enumerate(raw):
            try:
                train, test = pair
                train = np.asarray(train).ravel()
                test = np.asarray(test).ravel()
            except (TypeError, ValueError):
                raise ValueError(
                    f"cv must give (train, test) pairs of row indices; split {i} is {pair!r}."
                ) from None
            for name, idx in (("train", train), ("test", test)):
                if idx.dtype == bool:
                    if idx.size != n:
                        raise ValueError(
                            f"split {i}: the {name} mask has {idx.size} entries for {n} rows."
                        )
                    idx = np.flatnonzero(idx)
                if idx.size and (idx.dtype.kind not in "iu" or idx.min() < -n or idx.max() >= n):
                    raise ValueError(
                        f"split {i}: {name} indices must be integers in [0, {n}); "
                        f"got {idx[:5].tolist()}..."
                    )
                if name == "train":
                    train = np.asarray(idx, dtype=np.intp) % max(n, 1)
                else:
                    test = np.asarray(idx, dtype=np.intp) % max(n, 1)
            if train.size == 0 or test.size == 0:
                raise ValueError(f"split {i} has an empty training or test set.")
            splits.append((train, test))
        if not splits:
            raise ValueError(f"cv={self.cv!r} gave no (train, test) split.")
        return splits

    # ------------------------------------------------------------ statistics
    def _block(
        self, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
    ) -> tuple[Any, Any]:
        """Validate like every estimator, then cross-validate: ``CrossValidatedStats``."""
        alphas, gammas = self._grid()
        Xv, y_arr, w = self._validate_fit_input(X, y, sample_weight, reset=reset)
        c = as_classes(y_arr if classes is None else classes)
        if c.size < self._min_classes:
            raise ValueError(
                f"{type(self).__name__} needs at least {self._min_classes} classes to "
                f"classify; y has {c.size} class ({c.tolist()})."
            )
        with warnings.catch_warnings():
            # the priors are checked here, before any work; fit warns about them once
            warnings.simplefilter("ignore", UserWarning)
            priors = None if self.priors is None else check_priors(self.priors, c.size)
        splits = self._splits(Xv, y_arr, c)
        parts, rest = _fold_structure(splits, Xv.shape[0])
        with self._deferred():
            if parts is not None:
                stats = [
                    ScatterStats.from_data(Xv[idx], y_arr[idx], w[idx], classes=c)
                    for idx in parts + ([rest] if rest.size else [])
                ]
                total = _merge_all(stats)
            else:
                total = ScatterStats.from_data(Xv, y_arr, w, classes=c)
        self._after(Xv, total.means)
        if not np.any(w > 0):
            raise ValueError(
                "every sample weight is zero: no sample has positive weight, nothing can be fitted."
            )
        yi = encode(y_arr, c)
        scores = np.zeros((alphas.size, gammas.size))
        for i, (train_idx, test) in enumerate(splits):
            if parts is not None:
                # the other folds and the rows never held out: all the data less fold i
                train = total.subtract(stats[i])
            else:
                train = ScatterStats.from_data(
                    Xv[train_idx], y_arr[train_idx], w[train_idx], classes=c
                )
            if not np.any(w[test] > 0):
                raise ValueError(f"split {i}: every held-out sample has weight zero.")
            scores += self._split_scores(train, Xv[test], yi[test], w[test], priors, alphas, gammas)
        scores /= len(splits)
        return CrossValidatedStats(total=total, cv_scores=scores), self._schema(X, Xv.shape[1])

    def _split_scores(
        self,
        train: ScatterStats,
        X: _F,
        yi: NDArray[np.intp],
        w: _F,
        priors: _F | None,
        alphas: _F,
        gammas: _F,
    ) -> _F:
        """Held-out score of every (alpha, gamma), shape (len(alphas), len(gammas)).

        One job per (alpha, class) — one per alpha when ``alpha == 0``, where
        every class has the pooled covariance — each an eigendecomposition
        serving every gamma (:func:`held_out_terms`); the jobs share the
        cores, each with a single-threaded BLAS.
        """
        if priors is None:
            priors = train.weights / train.weights.sum()
        with np.errstate(divide="ignore"):
            log_priors = np.log(priors)
        K, p = train.n_classes, train.n_features
        present = np.flatnonzero(train.weights > 0)
        tol, ddof, reg = float(self.tol), self._ddof(), float(self.reg_param)
        usable = []
        for a_i, alpha in enumerate(alphas):
            try:  # the errors of class_covariances: this alpha is scored -inf
                for k in present:
                    check_own_weight(train, int(k), ddof, float(alpha))
                if alpha < 1.0:
                    train.pooled_covariance(ddof)
            except ValueError:
                continue
            usable.append(a_i)
        pooled = train.pooled_covariance(ddof) if any(alphas[usable] < 1.0) else None
        # centred once at the training mean: the shared (alpha = 0) rotation
        # then subtracts rotated class means of moderate size
        centre = train.weights[present] @ train.means[present] / train.weights[present].sum()
        Xc = X - centre
        jobs = [
            (a_i, ks)
            for a_i in usable
            for ks in ([present] if alphas[a_i] == 0 else [[k] for k in present])
        ]

        def job(item: tuple[int, Any]) -> tuple[_F, _F, NDArray[np.bool_]]:
            a_i, ks = item
            cov = blended_covariance(
                train, int(ks[0]), ddof=ddof, alpha=float(alphas[a_i]), pooled=pooled
            )
            if not np.all(np.isfinite(cov)):
                raise ValueError(
                    "a class covariance matrix of a training split is not finite: X holds "
                    "values so large that their squares overflow float64; rescale X."
                )
            return held_out_terms(cov, train.means[ks] - centre, Xc, gammas, tol, reg)

        work = float(X.shape[0]) * p * p * len(jobs)
        results = in_parallel(job, jobs, work)
        out = np.full((alphas.size, gammas.size), -np.inf)
        for a_i in usable:
            jll = np.full((X.shape[0], K, gammas.size), -np.inf)
            ok = np.ones(gammas.size, dtype=bool)
            for (b_i, ks), (maha, logdet, good) in zip(jobs, results, strict=True):
                if b_i == a_i:
                    ok &= good
                    jll[:, ks, :] = log_priors[ks, None] - 0.5 * (maha + logdet + p * _LOG_2PI)
            if self.scoring == "accuracy":
                correct = np.argmax(jll, axis=1) == yi[:, None]
                score = (w @ correct) / w.sum()
            else:
                with np.errstate(invalid="ignore"):
                    post = jll[np.arange(len(yi)), yi, :] - logsumexp(jll, axis=1)
                score = (w @ post) / w.sum()
            out[a_i] = np.where(ok, score, -np.inf)
        return out

    # ------------------------------------------------------------ derivation
    def _derive(self, stats: Any, priors: _F, **extra: Any) -> dict[str, Any]:
        if not isinstance(stats, CrossValidatedStats):
            raise ValueError(
                f"{type(self).__name__} is derived from CrossValidatedStats (the statistics "
                f"and the held-out scores of its fit), not from {type(stats).__name__}; use "
                "RegularizedDiscriminantAnalysis.from_stats with a chosen alpha and gamma."
            )
        alphas, gammas = self._grid()
        scores = np.asarray(stats.cv_scores, dtype=float)
        if scores.shape != (alphas.size, gammas.size):
            raise ValueError(
                f"cv_scores has shape {scores.shape}, but the grid alphas x gammas has shape "
                f"{(alphas.size, gammas.size)}."
            )
        alpha, gamma = _choose(scores, alphas, gammas)
        attrs = self._family_attrs(
            stats.total, alpha=alpha, shrinkage=gamma, reg_param=float(self.reg_param)
        )
        attrs.update(alpha_=alpha, gamma_=gamma, cv_scores_=scores.copy())
        return attrs


def _choose(scores: _F, alphas: _F, gammas: _F) -> tuple[float, float]:
    """The best pair; ties go to the more regularised one (smaller alpha, then larger gamma)."""
    if not np.any(np.isfinite(scores)):
        raise ValueError(
            "every (alpha, gamma) pair gave a singular class covariance on some split; "
            "add gammas > 0 or set reg_param > 0."
        )
    best = np.nanmax(np.where(np.isfinite(scores), scores, -np.inf))
    pairs = [np.unravel_index(f, scores.shape) for f in np.flatnonzero(scores == best)]
    ia, ig = min(pairs, key=lambda ij: (alphas[ij[0]], -gammas[ij[1]]))
    return float(alphas[ia]), float(gammas[ig])


def _fold_structure(
    splits: list[tuple[NDArray[np.intp], NDArray[np.intp]]], n: int
) -> tuple[list[NDArray[np.intp]] | None, NDArray[np.intp]]:
    """For k-fold-like splits, the test folds and the rows in no test fold.

    When the test sets are disjoint and each training set is exactly the
    other rows, each training split is the merge of the other folds (and of
    the rows that are never held out). Otherwise ``(None, [])``.
    """
    owner = np.full(n, -1)
    for i, (_, test) in enumerate(splits):
        if np.any(owner[test] >= 0) or np.unique(test).size != test.size:
            return None, np.empty(0, dtype=np.intp)
        owner[test] = i
    for i, (train, _) in enumerate(splits):
        expected = np.flatnonzero(owner != i)
        if train.size != expected.size or not np.array_equal(np.sort(train), expected):
            return None, np.empty(0, dtype=np.intp)
    return [test for _, test in splits], np.flatnonzero(owner < 0)


def _merge_all(parts: list[ScatterStats]) -> ScatterStats:
    total = parts[0]
    for part in parts[1:]:
        total = total.merge(part)
    return total


def held_out_terms(
    cov: _F, means: _F, X: _F, gammas: _F, tol: float, reg_param: float = 0.0
) -> tuple[_F, _F, NDArray[np.bool_]]:
    r"""Mahalanobis distances and log determinants of ``cov`` shrunk by every gamma.

    ``Sigma(gamma) = (1 - r) ((1 - gamma) Sigma + gamma (tr(Sigma)/p) I) + r I``
    (``r = reg_param``) has the eigenvectors of ``Sigma`` and the eigenvalues
    ``(1 - r) ((1 - gamma) l + gamma tr/p) + r``: one eigendecomposition and
    one rotation of the rows serve every gamma, exactly (Friedman's formula
    and the ridge, no approximation). Features with no variance in ``Sigma``
    (a zero row and column, such as pixels that are 0 in every training row)
    form their own block, ``(1 - r) gamma tr/p + r`` on the diagonal, so the
    eigendecomposition and the rotation see only the others.

    Parameters
    ----------
    cov : ndarray of shape (p, p)
        ``Sigma``, before the shrinkage.
    means : ndarray of shape (m, p)
        The means the distances are measured to (all sharing ``cov``).
    X : ndarray of shape (n, p)
    gammas : ndarray of shape (G,)
    tol : float
        As in :func:`bayesrule.models.gaussian.correlation_singular`.
    reg_param : float in [0, 1], default=0.0
        The ridge applied after the shrinkage.

    Returns
    -------
    maha : ndarray of shape (n, m, G)
        Squared distance of each row to each mean under each ``Sigma(gamma)``.
    logdet : ndarray of shape (G,)
    ok : ndarray of shape (G,), bool
        False where ``Sigma(gamma)`` is singular by the test of
        ``GaussianFamily.from_stats`` (its distances are then meaningless).
    """
    p = cov.shape[0]
    t = float(np.trace(cov)) / p
    dead = np.diag(cov) == 0.0
    if dead.any() and np.any(cov[dead]):  # rounding left a row that is not zero: no block
        dead[:] = False
    live = np.flatnonzero(~dead)
    lam, V = eigh(cov[np.ix_(live, live)], driver="evd")
    r = float(reg_param)
    eig = (1.0 - gammas)[None, :] * lam[:, None] + gammas[None, :] * t  # (p_live, G)
    eig_dead = gammas * t  # (G,): the dead block's eigenvalue, |dead| times
    if r:
        eig = (1.0 - r) * eig + r
        eig_dead = (1.0 - r) * eig_dead + r
    n_dead = int(dead.sum())
    low = eig.min(axis=0) if live.size else np.full(gammas.size, np.inf)
    if n_dead:
        low = np.minimum(low, eig_dead)
    ok = (low > 0) & _regular(cov, t, gammas, tol, np.maximum(low, 0.0), r)
    safe = np.where(eig > 0, eig, np.inf)
    inv_dead = np.where(eig_dead > 0, 1.0 / np.where(eig_dead > 0, eig_dead, 1.0), 0.0)
    logdet = np.sum(np.log(np.where(eig > 0, eig, 1.0)), axis=0)
    logdet += n_dead * np.log(np.where(eig_dead > 0, eig_dead, 1.0))
    Z0 = X[:, live] @ V
    out = np.empty((X.shape[0], means.shape[0], gammas.size))
    for j, m in enumerate(means):
        Z = Z0 - m[live] @ V
        out[:, j, :] = (Z * Z) @ (1.0 / safe)
        if n_dead:
            R = X[:, dead] - m[dead]
            out[:, j, :] += np.einsum("ij,ij->i", R, R)[:, None] * inv_dead[None, :]
    return out, logdet, ok


def _regular(
    cov: _F, t: float, gammas: _F, tol: float, lower: _F, reg_param: float = 0.0
) -> NDArray[np.bool_]:
    """``not correlation_singular(ridge(shrink(cov, gamma)), tol, lower=...)`` for every gamma.

    ``ridge(S) = (1 - r) S + r I`` with ``r = reg_param``, as in
    ``GaussianFamily.from_stats``. Gershgorin's bound on the correlation
    matrix of each such covariance, ``1 + (1 - r)(1 - gamma) sum_j!=i
    |cov_ij| / (s_i s_j)``, is computed for all gammas at once from
    ``|cov|``; only a gamma whose regularity it does not prove pays for
    :func:`correlation_singular`'s eigenvalues. ``lower`` bounds the
    eigenvalues of the ridged covariances.
    """
    r = float(reg_param)
    p = cov.shape[0]
    d = np.diag(cov)
    R = np.abs(cov)
    R[np.diag_indices_from(R)] = 0.0
    ok = np.zeros(gammas.size, dtype=bool)
    for g_i, gamma in enumerate(gammas.tolist()):
        var = (1.0 - r) * ((1.0 - gamma) * d + gamma * t) + r
        if var.min() <= 0:
            continue
        inv_s = 1.0 / np.sqrt(var)
        rows = 1.0 + (1.0 - r) * (1.0 - gamma) * (R @ inv_s) * inv_s
        if lower[g_i] > 0 and lower[g_i] / float(var.max()) > tol * float(rows.max()):
            ok[g_i] = True
        else:
            S = shrink(cov, gamma)
            if r:  # as GaussianFamily.from_stats
                S *= 1.0 - r
                S[np.arange(p), np.arange(p)] += r
            ok[g_i] = not correlation_singular(S, tol, lower=0.0)[0]
    return ok

"""Choosing RDA's ``alpha``, ``gamma`` and ``ridge`` by cross-validation, fast.

The folds' statistics are computed in one pass, merged into the total,
and each training split is the total less its fold (``subtract``), so the
data are read once. Every candidate is scored from the training splits'
statistics and one rotation of the held-out rows per class
(:mod:`bayesrule.estimators._rda_search`): per split, alpha and class one
eigendecomposition of ``Sigma_k(alpha)`` serves every ``(gamma, ridge)``,
and per split, ``(gamma, ridge)`` and class one generalised
eigendecomposition serves every alpha. Up to 100 features the default
alphas are coarse ones refined on a lattice around the choice
(:mod:`bayesrule.estimators._rda_lattice`); above, the grid, a sweep of
alpha at its best ``(gamma, ridge)`` and the grid again at the alpha found.

The statistic, :class:`CrossValidatedStats`, holds the statistics of all
the data and the candidates' held-out scores; the choice is redone from
them whenever the model is derived (``fit``, ``from_stats``, ``load``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._util.parallel import in_parallel
from ..models import shrinkage_scale
from ..models.gaussian import (
    SingularCovarianceError,
    blended_covariance,
    check_own_weight,
    mean_pooled_variance,
)
from ..stats import ScatterStats, as_classes, encode
from ._cv_stats import (
    CrossValidatedStats,
    HeldOut,
    Rows,
    SplitStatistics,
    _check_finite,
    _Table,
    accuracy_band,
    auto_alphas,
    cv_splits,
)
from ._da import _CLASS_GAUSSIAN_PARAMS, _ClassGaussianDA
from ._priors import resolve_priors
from ._rda_lattice import auto_folds, choice_order, searches_lattice, staged_search
from ._rda_search import (
    alpha_sweep_terms,
    device_scores,
    held_out_score,
    held_out_terms,
    on_rows,
    regularised,
    standardised_min_eigenvalue,
)
from .registry import register

__all__ = ["CrossValidatedStats", "RegularizedDiscriminantAnalysisCV"]

_F = NDArray[np.float64]
_LOG_2PI = float(np.log(2.0 * np.pi))


@register("rdacv")
class RegularizedDiscriminantAnalysisCV(_ClassGaussianDA):
    r"""Regularized discriminant analysis with its regularisation chosen by cross-validation.

    The candidates are the covariances of
    :class:`RegularizedDiscriminantAnalysis`: Friedman's blend ``alpha`` of
    the class's own and the pooled covariance, his shrinkage ``gamma``
    towards each class's own scale ``(tr/p) I``, and a ``ridge`` common to
    every class towards ``t I``, ``t`` the average within-class variance
    (scikit-learn QDA's ``reg_param`` in the data's scale). By default (``target='range'``) ``gamma`` and
    ``ridge`` shrink in range units (``x_j / r_j``, ``r_j`` feature ``j``'s
    range in the training split, or in all the data for the final model;
    see :class:`RegularizedDiscriminantAnalysis`), so neither the scores nor
    the model depend on any feature's unit: rescaling features one by one
    changes no choice and no prediction (except through a feature constant
    in a training split, which has no unit to read). ``'pooled'`` (RDA's
    default, whose ``forget`` it keeps exact; RDA-CV has no ``forget``)
    shrinks in the pooled-variance-standardised coordinates instead, also
    unit-free, but a feature that is rarely non-zero, such as an edge pixel,
    then gets a tiny unit: 0.9165 on MNIST against 0.9616 with the range.
    ``'identity'``: Friedman's, in the features' own units. Every candidate is scored on the splits of ``cv``;
    the one chosen (see ``tie_break``) is stored in ``alpha_``, ``gamma_`` and ``ridge_``, and
    the final model is derived from the statistics of all the data — no
    second pass.

    The search, ``alphas='auto'`` up to 100 features: alphas 0, 0.1, ..., 1 at
    every ``(gamma, ridge)``, then those of steps of 0.02 within 0.06 of the
    rule's choice (``tie_break``) until its window is scored (about 18 of 51 alphas). Otherwise the grid ``alphas x gammas
    x ridges``; then, with ``refine=True``, alpha in steps of 0.02 at the
    best ``(gamma, ridge)`` (one generalised eigendecomposition per split and
    class serves them all) and the grid of ``(gamma, ridge)`` at the alpha
    found. Contained: LDA, QDA, scikit-learn QDA's ``reg_param`` (up to the
    unit), Friedman's RDA.

    Parameters
    ----------
    alphas : 'auto' or sequence of float in [0, 1], default='auto'
        The grid's alphas. ``'auto'``: up to 100 features the lattice of
        steps of 0.02, refined from its coarse alphas (above; ``refine=False``
        scores all 51), else (0, 1) and the sweep of ``refine``. Each alpha
        other than 0 costs one eigendecomposition per split and class.
    gammas : sequence of float in [0, 1], default=(0, 0.05, 0.2, 0.5)
    ridges : sequence of float in [0, 1], default=(0, 0.01, 0.03, 0.1, 0.2, 0.35, 0.5, 0.7, 0.85)
        ``(1 - ridge) Sigma_k + ridge t I`` after Friedman's shrinkage, with
        ``t = tr(Sigma_pooled)/p`` of the training split (of all the data for
        the final model), in the units of ``target``. Like ``gamma`` it is
        relative to the data's scale.
    refine : bool, default=True
        Refine alpha around the choice, as described above. False scores the
        grid only (``alphas='auto'``: the whole lattice).
    target : {'range', 'pooled', 'identity'}, default='range'
        The coordinates of ``gamma`` and ``ridge`` (see above and
        :class:`RegularizedDiscriminantAnalysis`): ``'range'`` and
        ``'pooled'`` are free of every feature's unit, ``'identity'`` (the
        features' own units) is the earlier default. To stream the model
        chosen, use ``RegularizedDiscriminantAnalysis`` with ``alpha_``,
        ``gamma_``, ``ridge_`` and ``target='range'`` (RDA's default target
        is ``'pooled'``).
    reg_param : float in [0, 1], default=0.0
        Fixed, not searched: every candidate's covariances get the ridge
        ``(1 - reg_param) Sigma + reg_param I`` in the features' units, last,
        as in :class:`RegularizedDiscriminantAnalysis` (scikit-learn QDA's
        meaning). With ``reg_param > 0`` the candidates with ``gamma`` or
        ``ridge`` no longer share one eigendecomposition (the range units
        and the features' units differ) and each is factorised on its own:
        the same scores, slower.
    cv : 'auto', int, splitter, iterable of (train, test) index arrays, or None, default='auto'
        ``'auto'``: 10 stratified, shuffled folds up to 1,000 rows and 100 features
        (splits of 90 % of the rows want nearly the final model's regularisation), else 5.
        As scikit-learn's ``cv``: an int ``>= 2`` is that many stratified,
        shuffled folds (at most the size of the smallest class), None is 5;
        an object with a ``split(X, y)`` method (``KFold``, ``ShuffleSplit``,
        ...) or an iterable of ``(train, test)`` pairs of row indices is used
        as given. Disjoint test sets whose training sets are the other rows
        (k-fold) reuse the folds' statistics; other splits compute each
        training split's statistics. A model file keeps ``'auto'`` or an int; a
        splitter or a list of splits is kept only as a description
        (``stats_.cv``, its ``repr``) and loads as ``cv=None``: the fitted
        model does not need it.
    scoring : {'accuracy', 'log_likelihood'}, default='accuracy'
        Held-out accuracy, or mean held-out log posterior of the true class
        (both weighted by ``sample_weight``).
    tie_break : {'neighbourhood', 'log_likelihood', 'regularisation'}, default='neighbourhood'
        How near ties of held-out accuracy are decided (``scoring='accuracy'``).
        ``'neighbourhood'``: the rule of ``'log_likelihood'``, with half its
        band, applied to each candidate's accuracy and log-likelihood
        averaged with its scored neighbours' (adjacent alphas at most 0.1
        apart, adjacent gammas and ridges; see
        :func:`~._cv_stats.neighbourhood_means`): a point that scores well
        alone among poor neighbours is most likely lucky on a few rows, a
        plateau is not. ``'log_likelihood'``: among the candidates whose held-out accuracy is
        within one standard error of the best (``sqrt(a (1 - a) / n)``, ``a``
        the best accuracy, ``n`` the rows), the one with the best held-out
        log-likelihood; accuracy moves by whole rows, so on a small table
        many candidates tie or differ by noise, and the log-likelihood (a
        proper score that sees how sure every posterior is) separates them
        with less noise. ``'regularisation'``: the best accuracy, exact ties
        going to the more regularised candidate (the earlier rule).
    random_state : int or None, default=0
        Shuffling of the folds when ``cv`` is an int.
    priors, store_covariance, tol, bias
        As in :class:`RegularizedDiscriminantAnalysis`.

    Attributes
    ----------
    alpha_, gamma_, ridge_ : float
        The chosen values.
    cv_points_ : ndarray of shape (n_candidates, 3)
        The ``(alpha, gamma, ridge)`` of every candidate scored.
    cv_scores_ : ndarray of shape (n_candidates,)
        Mean held-out score of each (``-inf`` where a covariance was singular);
        their mean held-out log-likelihoods are ``stats_.cv_log_likelihoods``.
    stats_ : CrossValidatedStats
        All the data's statistics and the candidates' scores (the file's; ``from_stats`` rechooses).

    Notes
    -----
    No ``partial_fit``, ``merge`` or ``forget``: held-out scores are not sums.

    References
    ----------
    J. H. Friedman, "Regularized discriminant analysis", JASA 84(405), 1989.

    Examples
    --------
    On 500 handwritten digits, whose constant border pixels make every
    class covariance singular, the search rejects ``gamma=0`` and chooses
    the pooled covariance (``alpha=1``) shrunk towards the identity:

    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from bayesrule import RegularizedDiscriminantAnalysisCV
    >>> X, y = load_digits(return_X_y=True)
    >>> cv = RegularizedDiscriminantAnalysisCV(
    ...     alphas=[0.0, 1.0], gammas=[0.0, 0.2], ridges=[0.0], refine=False
    ... ).fit(X[:500], y[:500])
    >>> print(cv.alpha_, cv.gamma_, cv.ridge_)
    1.0 0.2 0.0
    >>> cv.cv_points_.shape
    (4, 3)
    >>> np.isinf(cv.cv_scores_).tolist()
    [True, False, True, False]
    >>> print(f"{cv.score(X[500:], y[500:]):.2f}")
    0.93
    """

    spec = _ClassGaussianDA.spec.replace(statistic=CrossValidatedStats)  # holds a ScatterStats
    #: a model file from before ``target`` existed was fitted with the identity
    params_before_added: ClassVar[Mapping[str, Any]] = {"target": "identity"}

    _parameter_constraints: dict = {
        **_CLASS_GAUSSIAN_PARAMS,
        "alphas": ["array-like", StrOptions({"auto"})],
        "gammas": ["array-like"],
        "ridges": ["array-like"],
        "refine": ["boolean"],
        "target": [StrOptions({"pooled", "identity", "range"})],
        "reg_param": [Interval(Real, 0, 1, closed="both")],
        "cv": [
            StrOptions({"auto"}),
            Interval(Integral, 2, None, closed="left"),
            HasMethods(["split"]),
            Iterable,
            None,
        ],
        "scoring": [StrOptions({"accuracy", "log_likelihood"})],
        "tie_break": [StrOptions({"neighbourhood", "log_likelihood", "regularisation"})],
        "random_state": ["random_state"],
    }
    _remedy = "add gammas > 0 or ridges > 0, or set reg_param > 0"
    refusals = {
        "partial_fit": "cross-validation needs all the data at once",
        "merge": "cross-validation scores cannot be merged",
        "forget": "cross-validation scores cannot be updated",
    }

    def __init__(
        self,
        *,
        alphas: ArrayLike | str = "auto",
        gammas: ArrayLike = (0.0, 0.05, 0.2, 0.5),
        ridges: ArrayLike = (0.0, 0.01, 0.03, 0.1, 0.2, 0.35, 0.5, 0.7, 0.85),
        refine: bool = True,
        target: str = "range",
        reg_param: float = 0.0,
        cv: Any = "auto",
        scoring: str = "accuracy",
        tie_break: str = "neighbourhood",
        random_state: Any = 0,
        priors: ArrayLike | None = None,
        store_covariance: bool = False,
        tol: float = 1.0e-4,
        bias: bool = False,
    ) -> None:
        self.alphas = alphas
        self.gammas = gammas
        self.ridges = ridges
        self.refine = refine
        self.target = target
        self.reg_param = reg_param
        self.cv = cv
        self.scoring = scoring
        self.tie_break = tie_break
        self.random_state = random_state
        self.priors = priors
        self.store_covariance = store_covariance
        self.tol = tol
        self.bias = bias

    # ------------------------------------------------------------ parameters
    def _grid(self, n_features: int | None = None) -> tuple[_F, _F, _F]:
        """The grid's alphas, gammas and ridges (``alphas='auto'``: :func:`auto_alphas`)."""
        out = []
        for name in ("alphas", "gammas", "ridges"):
            if name == "alphas" and isinstance(self.alphas, str) and self.alphas == "auto":
                out.append(auto_alphas(1 if n_features is None else n_features))
                continue
            try:
                g = np.asarray(getattr(self, name), dtype=float).ravel()
            except (TypeError, ValueError):
                g = np.array([np.nan])
            if g.size == 0 or not np.all(np.isfinite(g)) or np.any((g < 0) | (g > 1)):
                raise ValueError(
                    f"{name} must be a non-empty list of numbers in [0, 1]; "
                    f"got {getattr(self, name)!r}."
                )
            out.append(np.unique(g))
        return out[0], out[1], out[2]

    def file_params(self) -> dict[str, Any]:
        """The parameters a model file keeps: ``cv`` as an int or None (see ``cv``)."""
        params = self.get_params(deep=False)
        cv = params["cv"]
        if not (
            cv is None or cv == "auto" or (isinstance(cv, Integral) and not isinstance(cv, bool))
        ):
            params["cv"] = None
        return params

    # ------------------------------------------------------------ statistics
    def _block(
        self, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
    ) -> tuple[Any, Any]:
        """Validate like every estimator, then cross-validate: ``CrossValidatedStats``."""
        self._grid()
        Xv, y_arr, w = self._validate_fit_input(X, y, sample_weight, reset=reset)
        self._check_squares(X, Xv, w)  # before the search meets an overflow
        c = as_classes(y_arr if classes is None else classes)
        rows = Rows(Xv, y_arr, w, c)
        return self.cross_validated(rows, y_arr, w, c), self._schema(X, Xv.shape[1])

    def cross_validated(
        self, rows: Rows, y_arr: NDArray[Any], w: _F, c: NDArray[Any]
    ) -> CrossValidatedStats:
        """The search over validated rows: the statistic a fit installs.

        The seam of an engine whose rows live elsewhere (the array API
        backend's rows on a device): ``rows`` (:class:`~._cv_stats.Rows`)
        computes the folds' statistics and hands over the held-out rows,
        whose products run in their namespace; the ``p x p`` work runs on
        the host. ``y_arr`` and ``w`` are the checked labels and weights
        (host arrays), ``c`` the classes.
        """
        self._validate_params()
        alphas, gammas, ridges = self._grid(int(rows.X.shape[1]))
        if c.size < self._min_classes:
            raise ValueError(
                f"{type(self).__name__} needs at least {self._min_classes} classes to "
                f"classify; y has {c.size} class ({c.tolist()})."
            )
        with warnings.catch_warnings():
            # the priors are checked here, before any work; fit warns about them once
            warnings.simplefilter("ignore", UserWarning)
            priors = None if self.priors is None else resolve_priors(self.priors, c)
        cv = auto_folds(self.cv, int(rows.X.shape[0]), int(rows.X.shape[1]))
        splits = cv_splits(cv, self.random_state, rows.split_X, y_arr, c)
        with self._deferred():
            training = SplitStatistics(splits, rows)
        total = training.total
        if isinstance(rows.X, np.ndarray):  # an engine's rows were checked where they live
            self._after(rows.X, total.means)
        if not np.any(w > 0):
            raise ValueError(
                "every sample weight is zero: no sample has positive weight, nothing can be fitted."
            )
        yi = encode(y_arr, c)
        for i, (_, test) in enumerate(splits):
            if not np.any(w[test] > 0):
                raise ValueError(f"split {i}: every held-out sample has weight zero.")

        def folds() -> Any:
            for i, (_, test) in enumerate(splits):
                yield HeldOut(training.of_split(i), rows.held_out(test), yi[test], w[test])

        def grid_scores(a: _F) -> _F:
            out = np.zeros((2, a.size, gammas.size * ridges.size))
            for fold in folds():
                out += self._grid_scores(fold, priors, a, gammas, ridges)
            return out / len(splits)

        def sweep_scores(a: _F, gamma: float, ridge: float) -> _F:
            out = sum(self._sweep_scores(f, priors, a, gamma, ridge) for f in folds())
            return np.asarray(out) / len(splits)

        table = _Table()
        staged_search(
            table,
            (alphas, gammas, ridges),
            grid_scores,
            sweep_scores,
            lambda: self._choice_order(*table.arrays(), total)[0][0],
            lattice=self.refine and searches_lattice(self.alphas, int(rows.X.shape[1])),
            refine=self.refine,
        )
        points, scores, log_liks = table.arrays()
        cv_text = repr(self.cv)
        if len(cv_text) > 500:
            cv_text = cv_text[:497] + "..."
        return CrossValidatedStats(
            total=total,
            cv_points=points,
            cv_scores=scores,
            cv=cv_text,
            cv_log_likelihoods=log_liks,
        )

    def _held_out_setup(
        self, train: ScatterStats, X: Any, priors: _F | None
    ) -> tuple[_F, NDArray[np.intp], Any, _F]:
        """Log priors, the classes with data, ``X`` centred at the training mean, and that mean."""
        if priors is None:
            priors = train.weights / train.weights.sum()
        with np.errstate(divide="ignore"):
            log_priors = np.log(priors)
        present = np.flatnonzero(train.weights > 0)
        centre = train.weights[present] @ train.means[present] / train.weights[present].sum()
        return log_priors, present, X - on_rows(X, centre), centre

    def _held_out_constants(self, train: ScatterStats) -> tuple[int, int, float, float, float]:
        """Classes, features, ``tol``, ddof and ``reg_param`` of a held-out scoring."""
        K, p = train.n_classes, train.n_features
        return K, p, float(self.tol), self._ddof(), float(self.reg_param)

    def _band(self, total: ScatterStats) -> Any:
        """The band of near ties of :func:`ranked` (None: exact ties only)."""
        if self.scoring != "accuracy" or self.tie_break == "regularisation":
            return None
        half = self.tie_break == "neighbourhood"  # means vary less: half the band
        return accuracy_band(float(np.sum(total.counts)), 0.5 if half else 1.0)

    def _choice_order(
        self, points: _F, scores: _F, log_liks: _F | None, total: ScatterStats
    ) -> list[tuple[float, float, float]]:
        """The candidates, best first, by ``tie_break`` (:func:`~._rda_lattice.choice_order`)."""
        neighbourhood = self.tie_break == "neighbourhood" and self.scoring == "accuracy"
        return choice_order(points, scores, log_liks, self._band(total), neighbourhood)

    def _grid_scores(
        self, fold: HeldOut, priors: _F | None, alphas: _F, gammas: _F, ridges: _F
    ) -> _F:
        """Held-out score and log-likelihood of every (alpha, gamma, ridge), shape (2, len(alphas), G * R).

        One job per (alpha, class) — one per alpha when ``alpha == 0``, where
        every class has the pooled covariance — each an eigendecomposition
        serving every ``(gamma, ridge)`` (:func:`held_out_terms`); the jobs
        share the cores, each with a single-threaded BLAS.
        """
        train, X, yi, w = fold
        log_priors, present, Xc, centre = self._held_out_setup(train, X, priors)
        K, p, tol, ddof, reg = self._held_out_constants(train)
        C = gammas.size * ridges.size
        # x / range (gamma's and ridge's units; alpha alone loses digits in raw units)
        scale = shrinkage_scale(train, str(self.target))
        if reg and not (np.any(gammas > 0) or np.any(ridges > 0)):
            scale = None
        means_c = train.means - centre
        if scale is not None and not reg:
            # the whole problem in the coordinates x / scale: each job sees them
            Xc, means_c = Xc / on_rows(Xc, scale), means_c / scale
        usable = []
        for a_i, alpha in enumerate(alphas):
            try:  # the errors of class_covariances: this alpha is scored -inf
                for k in present:
                    check_own_weight(train, int(k), ddof, float(alpha))
                t = mean_pooled_variance(train, ddof, scale)
            except ValueError:
                continue
            usable.append(a_i)
        out = np.full((2, alphas.size, C), -np.inf)
        if not usable:
            return out
        pooled = train.pooled_covariance(ddof) if any(alphas[usable] < 1.0) else None
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
            _check_finite(cov)
            if scale is not None and not reg:
                cov = cov / np.outer(scale, scale)
                return held_out_terms(cov, means_c[ks], Xc, gammas, tol, 0.0, ridges, t)
            return held_out_terms(cov, means_c[ks], Xc, gammas, tol, reg, ridges, t, scale)

        # rows on a device too: the jobs' eigendecompositions share the host's
        # cores, their products queue on the device
        results = in_parallel(job, jobs, float(X.shape[0]) * p * p * len(jobs))
        for a_i in usable:
            if not isinstance(X, np.ndarray):  # rows on a device: scored there
                pieces = [
                    (list(ks), terms)
                    for (b_i, ks), terms in zip(jobs, results, strict=True)
                    if b_i == a_i
                ]
                out[:, a_i] = device_scores(X, K, C, pieces, log_priors, p, yi, w, self.scoring)
                continue
            jll = np.full((X.shape[0], K, C), -np.inf)
            ok = np.ones(C, dtype=bool)
            for (b_i, ks), (maha, logdet, good) in zip(jobs, results, strict=True):
                if b_i == a_i:
                    ok &= good
                    jll[:, ks, :] = log_priors[ks, None] - 0.5 * (maha + logdet + p * _LOG_2PI)
            out[:, a_i] = held_out_score(jll, ok, yi, w, self.scoring)
        return out

    def _sweep_scores(
        self, fold: HeldOut, priors: _F | None, alphas: _F, gamma: float, ridge: float
    ) -> _F:
        """Held-out score and log-likelihood of every alpha at one ``(gamma, ridge)``, shape (2, len(alphas)).

        One generalised eigendecomposition per class (:func:`alpha_sweep_terms`).
        """
        train, X, yi, w = fold
        log_priors, present, Xc, centre = self._held_out_setup(train, X, priors)
        K, p, tol, ddof, reg = self._held_out_constants(train)
        out = np.full((2, alphas.size), -np.inf)
        try:
            for k in present:
                check_own_weight(train, int(k), ddof, 1.0)
            scale = shrinkage_scale(train, str(self.target))
            t = mean_pooled_variance(train, ddof, scale)
            pooled = train.pooled_covariance(ddof)
        except ValueError:
            return out
        _check_finite(pooled)
        B = regularised(pooled, gamma, ridge, t, reg, scale)
        # one eigenvalue problem of size p, under the BLAS cap of the jobs below
        b_min = in_parallel(standardised_min_eigenvalue, [B], float(p) ** 3)[0]
        if not b_min > 0:
            return out

        def job(k: int) -> tuple[_F, _F, NDArray[np.bool_]]:
            own = blended_covariance(train, k, ddof=ddof, alpha=1.0, pooled=None)
            _check_finite(own)
            A = regularised(own, gamma, ridge, t, reg, scale)
            means = train.means[[k]] - centre
            return alpha_sweep_terms(A, B, b_min, means, Xc, alphas, tol)

        ks = [int(k) for k in present]
        results = in_parallel(job, ks, float(X.shape[0]) * p * p * len(ks))
        if not isinstance(X, np.ndarray):  # rows on a device: scored there
            pieces = [
                ([k], (maha[:, 0, :], logdet, good))
                for k, (maha, logdet, good) in zip(ks, results, strict=True)
            ]
            return device_scores(X, K, alphas.size, pieces, log_priors, p, yi, w, self.scoring)
        jll = np.full((X.shape[0], K, alphas.size), -np.inf)
        ok = np.ones(alphas.size, dtype=bool)
        for k, (maha, logdet, good) in zip(ks, results, strict=True):
            ok &= good
            jll[:, k, :] = log_priors[k] - 0.5 * (maha[:, 0, :] + logdet + p * _LOG_2PI)
        return held_out_score(jll, ok, yi, w, self.scoring)

    # ------------------------------------------------------------ derivation
    def _derive(self, stats: Any, priors: _F, **extra: Any) -> dict[str, Any]:
        if not isinstance(stats, CrossValidatedStats):
            raise ValueError(
                f"{type(self).__name__} is derived from CrossValidatedStats (the statistics "
                f"and the held-out scores of its fit), not from {type(stats).__name__}; use "
                "RegularizedDiscriminantAnalysis.from_stats with a chosen alpha, gamma and ridge."
            )
        self._grid()  # the parameters are checked at every derivation
        points = np.asarray(stats.cv_points, dtype=float)
        scores = np.asarray(stats.cv_scores, dtype=float)
        if points.ndim != 2 or points.shape[1] != 3 or scores.shape != (points.shape[0],):
            raise ValueError(
                f"cv_points must have shape (n, 3) and cv_scores (n,); got {points.shape} "
                f"and {scores.shape}."
            )
        if not np.all((points >= 0) & (points <= 1)):
            raise ValueError("cv_points must hold (alpha, gamma, ridge) values in [0, 1].")
        last: SingularCovarianceError | None = None
        log_liks = stats.cv_log_likelihoods
        if log_liks is not None:
            log_liks = np.asarray(log_liks, dtype=float)
            if log_liks.shape != scores.shape:
                raise ValueError(
                    f"cv_log_likelihoods must have the shape of cv_scores, {scores.shape}; "
                    f"got {log_liks.shape}."
                )
        for alpha, gamma, ridge in self._choice_order(points, scores, log_liks, stats.total):
            try:
                attrs = self._family_attrs(
                    stats.total,
                    alpha=alpha,
                    shrinkage=gamma,
                    ridge=ridge,
                    reg_param=float(self.reg_param),
                    target_scale=shrinkage_scale(stats.total, str(self.target)),
                )
            except SingularCovarianceError as exc:
                # regular on every training split, singular on all the data
                # (rounding at the edge of tol): the next best candidate
                last = exc
                continue
            attrs.update(
                alpha_=alpha,
                gamma_=gamma,
                ridge_=ridge,
                cv_points_=points.copy(),
                cv_scores_=scores.copy(),
            )
            return attrs
        assert last is not None
        raise last

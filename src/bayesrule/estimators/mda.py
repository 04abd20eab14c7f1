"""Mixture discriminant analysis: each class a Gaussian mixture, fitted by EM from sub-class statistics.

The fit is a sequence of passes over the data, each one a mergeable summary
of every block of rows (:meth:`MixtureDiscriminantAnalysis._fit_passes`):

1. **survey**: the classes, their weights and row counts, the feature
   bounds and the moments the projection needs (per-class means and the
   pooled within-class scatter, :class:`~bayesrule.stats.PooledScatterStats`;
   without a projection :class:`~bayesrule.stats.DiagonalStats`);
2. **sample**: per class, the projected rows of an order-free sample: those
   with the ``m`` smallest values of a hash of the rows divided by the
   features' ranges (:func:`~bayesrule.estimators._mda_passes.sample_keys`,
   :class:`~bayesrule.stats._sketch.RowSample`), so that it does not depend
   on the units either. With ``'auto'`` the number of components of each
   class and the ridge are chosen on it
   (:mod:`~bayesrule.estimators._mda_select`), and k-means++ draws each
   class's seeds among it;
3. **seeding**, once per EM run: every row goes to its class's nearest seed
   in the projected space, and these hard responsibilities give the
   initial sub-class moments;
4. **one pass per EM iteration**: the E-step's responsibilities of each
   block (each class's rows against its own components only), their
   weighted moments (:func:`~bayesrule.models.mixture.component_moments`),
   the log-likelihood of each class and its worst-explained rows (where an
   empty component is re-seeded), all merged
   (:class:`~bayesrule.models.mixture.PassMoments`); the M-step derives the
   components from the merged moments
   (:func:`~bayesrule.models.mixture.derive_components`).

A fit therefore takes ``2 + sum over EM runs of (1 + n_iter)`` passes:
``3 + n_iter_`` with the defaults (``n_passes_``). The passes are written
once against a ``reduce(task)`` callable, so the same EM runs in memory (the
whole data as one block), out of core (:func:`bayesrule.fit_stream` reads the
source again for each pass) and on Dask (each pass one ``dask.compute`` of
per-block tasks merged in a tree): all three start from the same sample and
give the same model, to rounding.

The model is its hyperparameters plus :class:`~bayesrule.stats._mixture.MixtureStats`
(the last E-step's moments and the projection): ``from_stats`` and the model
files derive the mixture from them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from .._util.parallel import blas_budget
from ..models.mixture import (
    MixtureFamily,
    Projection,
    class_moments,
    class_scales,
    derive_components,
    n_parameters,
)
from ..stats import MixtureStats, as_classes, label_repr
from ._base import GenerativeClassifier, as_generator
from ._mda_passes import (
    _Context,
    _Gather,
    _replace_passes,
    _Rows,
    _Runner,
    _Sample,
    _sample_size,
    _Survey,
)
from ._mda_projection import fit_projection
from ._mda_select import (
    REG_FOR_CHOICE,
    choose_for,
)
from ._priors import PRIORS_CONSTRAINT
from .registry import register

__all__ = ["MixtureDiscriminantAnalysis"]

_F = NDArray[np.float64]
_Moments = tuple[_F, _F, _F]


@register("mda")
class MixtureDiscriminantAnalysis(GenerativeClassifier):
    r"""Mixture discriminant analysis: a Gaussian mixture per class, Bayes' rule over classes.

    Each class ``k`` has density ``p_k(x) = sum_c w_kc N(z; m_kc, Sigma_kc)``
    in a projection ``z = B'(x - c)`` of the features (times an isotropic
    Gaussian for the part of ``x`` outside it, the same for every class), and
    a row goes to ``argmax_k log pi_k + log p_k(x)``. The mixtures are fitted
    by EM, class by class on that class's rows; the M-step is the weighted
    sufficient statistics of the sub-classes with the responsibilities as
    weights. With ``covariance_type='shared'`` every component of every class
    has one covariance: Hastie and Tibshirani's original MDA.

    Parameters
    ----------
    n_components : 'auto', int, list of int, dict or 'bic', default='auto'
        Components per class. ``'auto'``: chosen for each class from its
        rows by held-out likelihood on the class's sample (5-fold
        cross-validation, or halves of 512 rows and more; EM with ``1, 2, 4,
        8, 12, ...`` components up to ``max_components`` and one per
        ``max(8, d)`` rows of a half; a larger number must gain more than 0.01 nats
        per held-out row). A class with more rows than the sample (2048) is
        only tested for 1 against 2 components on it; if 2 win it gets one
        component per ``8 d`` rows (``d`` the projected dimensions), at most
        ``max_components``. A class with fewer than 4 distinct rows gets one
        component, with a warning naming it. Otherwise one number for every
        class, one per class (a list in the order of the sorted labels, or
        ``{label: n}``), or ``'bic'`` to choose for each class the number in
        ``1..max_components`` with the lowest BIC (a full EM per number). A
        class with fewer rows than its components gets as many components
        as rows, with a warning naming the class.
    covariance_type : {'full', 'diag', 'spherical', 'shared', 'ppca'}, default='full'
        'shared': one covariance for all components of all classes;
        'ppca': probabilistic PCA components, ``rank`` principal axes plus an
        isotropic noise variance (a low-rank-plus-diagonal covariance, applied
        with Woodbury's identity).
    rank : int, default=None
        Principal axes of each 'ppca' component; less than the number of
        dimensions. None: ``min(10, n_dims - 1)``.
    reg_covar : float in [0, inf) or 'auto', default='auto'
        Added to the diagonal of every component covariance, as a fraction
        of the mean variance of the class in the projected space
        (``reg_covar * tr(Sigma_k) / d``, at least 1e-4 of the data's): the
        value does not depend on the features' units. ``'auto'``: when the
        sample holds every row of every class (at most 2048 distinct rows a
        class), the value of ``0.01, 0.03, 0.1, 0.3`` whose mixtures fitted
        on the training folds misclassify the fewest held-out rows (ties:
        the lower log-loss, then the larger ridge); for larger data 0.1
        (measured on MNIST, where a subsample's verdict is biased towards
        heavier ridges). The value used is ``reg_covar_``.
    projection : {'pca', 'fisher'} or None, default='pca'
        Fitted on the training data and part of the model: 'pca' the leading
        principal axes of the (weighted) data, 'fisher' the discriminant
        directions of LDA (orthonormalised), both of the features divided by
        their ranges in the training data (so that the model does not depend
        on the features' units; ``stats_.scale``); None the features
        themselves, in their own units. Predictions, densities and samples
        are in the original features.
    n_dims : int, default=None
        Dimensions kept (at most the number of features). None: 60 for
        'pca' (all features if fewer), ``n_classes - 1`` for 'fisher'.
    max_components : int, default=12
        The largest number ``n_components='auto'`` or ``'bic'`` gives a class.
    tol : float, default=1e-2
        EM stops when the mean log-likelihood per unit of weight changes by
        less than this.
    max_iter : int, default=100
        The most EM iterations (each one pass over the data; see ``n_passes_``).
    n_init : int, default=1
        EM runs from different k-means++ seeds; the best log-likelihood is kept.
    random_state : None, int or Generator, default=0
        Seeds the k-means++ initialisation.
    priors : array-like of shape (n_classes,), default=None
        Class priors; by default the weighted class proportions.
    dimension : int, default=None
        Reduced-rank MDA (Hastie and Tibshirani 1996; R mda's
        ``dimension``), only with ``covariance_type='shared'``: at every
        M-step the component means of all classes are confined to the
        ``dimension``-dimensional affine subspace of the leading
        discriminant directions of the components (the generalised
        eigenvectors of their weighted between-component scatter relative
        to the shared covariance), and the between-component variance of
        the directions left out joins the shared covariance, so EM fits the
        constrained model. Between 1 and ``min(M - 1, d)``, with ``M`` the
        total number of components of all classes and ``d`` the dimensions
        the mixtures see (``min(M - 1, d)`` is the unconstrained model);
        with ``n_components='bic'`` at most ``min(n_classes - 1, d)``.
        With one component per class it is
        ``LinearDiscriminantAnalysis(n_components=dimension, reduced_rank=True)``.
        None: the means are free.

    Attributes
    ----------
    classes_, priors_, class_count_, n_features_in_, stats_
    n_components_ : ndarray of shape (n_classes,)
        Components of each class.
    reg_covar_ : float
        The ridge of the model (``reg_covar``, or what ``'auto'`` chose).
    means_ : ndarray of shape (n_classes, n_features)
        The class means (the mixtures' means) in feature space; with
        ``dimension``, the data's class means (the mixtures' means are
        confined to the subspace, as LDA's ``reduced_rank`` leaves its
        ``means_`` unchanged).
    projection_mean_ : ndarray of shape (n_features,)
    projection_components_ : ndarray of shape (n_dims, n_features)
        Orthonormal rows: ``z = (x - projection_mean_) @ projection_components_.T``.
    n_iter_ : int
        EM iterations of the fit (each one pass over the data).
    converged_ : bool
    lower_bound_ : float
        Mean log-likelihood per unit of weight at the last E-step (projected space).
    n_passes_ : int
        Passes over the data the fit took: ``2 + sum over EM runs of
        (1 + n_iter)``, i.e. ``3 + n_iter_`` with one run (the default);
        with ``n_init`` or ``n_components='bic'`` every run counts. 0 for a
        model file written before it was recorded.

    Notes
    -----
    The fit is a sequence of passes over the data, each a mergeable summary
    of every block of rows, so it runs out of core
    (``bayesrule.fit_stream(MixtureDiscriminantAnalysis(), source)`` reads
    the source once per pass) and on Dask collections (each pass one
    ``dask.compute``; only summaries travel) and gives the model of ``fit``
    in memory, to rounding:

    1. the classes, weights, counts and feature bounds and the moments of
       the projection;
    2. per class, the projected rows of an order-free sample of
       ``max(2048, 32 x the most components of a class)`` rows: those whose
       hash of their values divided by the features' ranges (rounded to
       float32) is smallest (rows with one key are one, with their weights
       summed); ``'auto'`` chooses the components and the ridge on it, and
       k-means++ draws each class's seeds among it;
    3. per EM run, one pass assigning every row to its class's nearest
       seed (the initial sub-class moments), then
    4. one pass per EM iteration (E-step moments, log-likelihood and each
       class's worst-explained rows, where empty components are re-seeded).

    ``partial_fit``, ``merge`` and ``forget`` are not available: the
    sub-class moments are weighted by responsibilities that depend on the
    whole fit, and two fits' components do not correspond.

    References
    ----------
    T. Hastie and R. Tibshirani, "Discriminant analysis by Gaussian mixtures",
    JRSS B 58(1), 1996. M. E. Tipping and C. M. Bishop, "Mixtures of
    probabilistic principal component analyzers", Neural Computation 11(2), 1999.
    D. Arthur and S. Vassilvitskii, "k-means++: the advantages of careful
    seeding", SODA 2007.
    """

    #: the fit is several passes over the data (see :meth:`_fit_passes`):
    #: fit_stream and the Dask backend drive them instead of merging block statistics
    spec = GenerativeClassifier.spec.replace(statistic=MixtureStats, multi_pass=True)
    _parameter_constraints: dict = {
        "n_components": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto", "bic"}),
            list,
            tuple,
            dict,
            np.ndarray,
        ],
        "covariance_type": [StrOptions({"full", "diag", "spherical", "shared", "ppca"})],
        "rank": [Interval(Integral, 0, None, closed="left"), None],
        "reg_covar": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "projection": [StrOptions({"pca", "fisher"}), None],
        "n_dims": [Interval(Integral, 1, None, closed="left"), None],
        "max_components": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "priors": PRIORS_CONSTRAINT,
        "dimension": [Interval(Integral, 1, None, closed="left"), None],
    }

    refusals = {
        "partial_fit": "EM makes several passes over all the data, so batches cannot be added "
        "to a fit (refit instead; fit_stream and Dask collections run the passes)",
        "merge": "the components of two EM fits do not correspond (refit on both)",
        "forget": "responsibility-weighted moments cannot be downdated (refit instead)",
    }

    def __init__(
        self,
        *,
        n_components: Any = "auto",
        covariance_type: str = "full",
        rank: int | None = None,
        reg_covar: Any = "auto",
        projection: str | None = "pca",
        n_dims: int | None = None,
        max_components: int = 12,
        tol: float = 1e-2,
        max_iter: int = 100,
        n_init: int = 1,
        random_state: Any = 0,
        priors: ArrayLike | None = None,
        dimension: int | None = None,
    ) -> None:
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.rank = rank
        self.reg_covar = reg_covar
        self.projection = projection
        self.n_dims = n_dims
        self.max_components = max_components
        self.tol = tol
        self.max_iter = max_iter
        self.n_init = n_init
        self.random_state = random_state
        self.priors = priors
        self.dimension = dimension

    # ------------------------------------------------------------ statistics

    def _block(
        self, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
    ) -> tuple[Any, Any]:
        """Validate like every estimator, then run the passes in memory: the fitted :class:`MixtureStats`."""
        Xv, y_arr, w = self._validate_fit_input(X, y, sample_weight, reset=reset)
        rows = _Rows(Xv, y_arr, w)
        stats = self._fit_passes(lambda task: task.summarise(rows), classes=classes)
        return stats, self._schema(X, Xv.shape[1], Xv.dtype)

    def fit_plan(
        self,
        reduce: Callable[[Any], Any],
        *,
        first_block: Any = None,
        classes: ArrayLike | None = None,
        **options: Any,
    ) -> MixtureStats:
        """The EM fit as passes: ``reduce(task)`` once per pass (see :meth:`_fit_passes`)."""
        return self._fit_passes(lambda task: reduce(_PassTask(task)), classes=classes)

    def _fit_passes(
        self, reduce: Callable[[Any], Any], *, classes: ArrayLike | None = None
    ) -> MixtureStats:
        """The whole fit, as passes of ``reduce(task)``: the fitted :class:`MixtureStats`.

        ``task(X, y, sample_weight)`` summarises one block of rows (checked as
        ``fit`` checks them; ``None`` for a block without rows) into a value
        with ``merge``; ``reduce`` applies it to every block of the data, in
        any order, and returns the merge of the results (``None`` when no
        block had rows). In memory ``reduce`` calls ``task.summarise`` on
        the validated data at once; :func:`bayesrule.fit_stream` reads the
        source again for every pass; the Dask backend sends the task to the
        blocks. The fit takes ``2 + sum over EM runs of (1 + n_iter)``
        passes, recorded in ``n_passes``.

        Parameters
        ----------
        reduce : callable
        classes : array-like, optional
            The labels, when known before the first pass (else those of the data).
        """
        self._check_dimension()
        passes = [0]

        def counted(task: Any) -> Any:
            passes[0] += 1
            return reduce(task)

        base = clone(self)  # the parameters only: what the tasks carry to the blocks
        declared = None if classes is None else as_classes(classes)
        survey = counted(_Survey(base, declared, self.projection is not None))
        if survey is None:
            raise ValueError("X has 0 samples; at least one is required.")
        moments = survey
        c = moments.classes
        if c.size < self._min_classes:
            raise ValueError(
                "The number of classes has to be greater than one. Got "
                f"{c.size} class. {type(self).__name__} needs at least "
                f"{self._min_classes} classes to classify; y has {c.size} class ({c.tolist()})."
            )
        if not np.any(moments.weights > 0):
            raise ValueError(
                "every sample weight is zero: no sample has positive weight, nothing can be fitted."
            )
        proj = self._projection(moments)
        self._resolve_rank(proj.n_dims)
        size = _sample_size(self._most_components())
        sample = _Sample(counted(_Gather(base, c, proj, size)), size)
        stats = self._em(counted, _Context(base, c, proj), moments, sample)
        return _replace_passes(stats, passes[0]).with_bounds(moments.lower, moments.upper)

    def _most_components(self) -> int:
        """The most components any class may get (sizes the initialisation sample)."""
        nc = self.n_components
        if isinstance(nc, str):
            return int(self.max_components)
        try:
            values = list(nc.values()) if isinstance(nc, dict) else np.ravel(nc).tolist()
            return max(1, *(int(v) for v in values))
        except (TypeError, ValueError):  # _requested names the problem
            return 1

    def _check_dimension(
        self, n_components: int | None = None, d: int | None = None, *, bic: bool = False
    ) -> None:
        """Refuse a ``dimension`` without a shared covariance or beyond what the means can span."""
        if self.dimension is None:
            return
        if self.covariance_type != "shared":
            raise ValueError(
                "dimension (reduced-rank MDA) needs covariance_type='shared'; got "
                f"covariance_type={self.covariance_type!r} with dimension={self.dimension}."
            )
        if n_components is None or d is None:
            return
        top = min(n_components - 1, d)
        if self.dimension > top:
            what = (
                f"n_classes - 1 with n_components={self.n_components!r}"
                if bic
                else "the total number of components - 1"
            )
            raise ValueError(
                f"dimension must be at most min({what}, dimensions the mixtures see) = "
                f"min({n_components - 1}, {d}) = {top}; got dimension={self.dimension}."
            )

    def _resolve_rank(self, d: int) -> int:
        if self.rank is None:
            return max(min(10, d - 1), 0)
        if self.covariance_type == "ppca" and self.rank >= d:
            raise ValueError(
                f"rank must be less than the number of dimensions the mixtures see "
                f"({d}: n_dims, or n_features without a projection); got rank={self.rank}."
            )
        return int(min(self.rank, max(d - 1, 0)))

    def _projection(self, moments: Any) -> Projection:
        """The projection (see :func:`~bayesrule.estimators._mda_projection.fit_projection`)."""
        return fit_projection(moments, self.projection, self.n_dims)

    # ------------------------------------------------------------ components
    def _requested(self, classes: NDArray[Any], rows: NDArray[np.int64]) -> NDArray[np.int64]:
        """Components per class before any EM, clipped to the class's rows (with a warning)."""
        K = classes.size
        nc = self.n_components
        if nc == "auto":
            return np.ones(K, dtype=np.int64)  # chosen by _choose
        if isinstance(nc, str):
            want = np.full(K, int(self.max_components))
        elif isinstance(nc, (int, np.integer)):
            want = np.full(K, int(nc))
        elif isinstance(nc, dict):
            missing = [lab for lab in classes.tolist() if lab not in nc]
            unknown = [lab for lab in nc if lab not in classes.tolist()]
            if missing or unknown:
                raise ValueError(
                    "n_components as a dict must give a number for every class and no other "
                    f"label; missing {missing[:10]}, unknown {unknown[:10]}."
                )
            want = np.array([nc[lab] for lab in classes.tolist()])
        else:
            want = np.asarray(nc)
            if want.shape != (K,):
                raise ValueError(
                    f"n_components as a list must give one number per class ({K} classes: "
                    f"{classes.tolist()[:20]}); got {want.tolist()!r}."
                )
        if not np.issubdtype(want.dtype, np.integer) or np.any(want < 1):
            raise ValueError(f"n_components must be positive integers; got {want.tolist()!r}.")
        want = want.astype(np.int64)
        small = (want > rows) & (rows > 0)
        if np.any(small) and nc != "bic":
            for k in np.flatnonzero(small).tolist():
                warnings.warn(
                    f"class {label_repr(classes[k])} has {int(rows[k])} samples, fewer than its "
                    f"n_components={int(want[k])}; it gets {int(rows[k])} components.",
                    UserWarning,
                    stacklevel=4,
                )
        return np.maximum(np.minimum(want, np.maximum(rows, 1)), 1)

    def _em(
        self,
        reduce: Callable[[Any], Any],
        ctx: _Context,
        moments: Any,
        sample: _Sample,
    ) -> MixtureStats:
        classes, proj = ctx.classes, ctx.proj
        K = classes.size
        rows = np.asarray(moments.counts, dtype=np.int64)
        weights = np.asarray(moments.weights, dtype=np.float64)
        rng = as_generator(self.random_state)
        d = proj.n_dims
        rank = self._resolve_rank(d)
        want = self._requested(classes, rows)
        # with 'bic' every candidate has at least one component per class
        bic = self.n_components in ("bic", "auto")
        self._check_dimension(K if bic else int(want.sum()), d, bic=bic)
        ridge = None if self.reg_covar == "auto" else float(self.reg_covar)
        if self.n_components == "auto" or self.reg_covar == "auto":
            want, ridge = choose_for(self, classes, sample, rows, weights, d, rank, rng, want)
        ridge = float(REG_FOR_CHOICE if ridge is None else ridge)
        run = _Runner(self, reduce, ctx, sample, rows, weights, rank, ridge)
        # a class whose sample holds all its rows has no more components than
        # distinct rows (identical rows are one, with their weights summed)
        distinct = np.array([sample.of_class(k, d)[0].shape[0] for k in range(K)])
        want = np.where((distinct < sample.size) & (distinct > 0), np.minimum(want, distinct), want)
        if self.n_components == "bic":
            runs = {}
            scores = np.full((int(want.max()), K), np.inf)
            for C in range(1, int(want.max()) + 1):
                counts = np.minimum(np.full(K, C), want)
                runs[C] = run.best_of(counts, rng)
                for k in range(K):
                    if C <= want[k]:
                        npar = n_parameters(self.covariance_type, C, d, rank, self.dimension)
                        ll = runs[C][3][k]
                        scores[C - 1, k] = -2.0 * ll + npar * np.log(max(float(weights[k]), 1.0))
            want = (np.argmin(scores, axis=0) + 1).astype(np.int64)
        owner, moments_, n_iter, ll, converged = run.best_of(want, rng)
        if not converged:
            warnings.warn(
                f"EM did not converge in max_iter={self.max_iter} iterations (tol={self.tol}); "
                "increase max_iter or tol, or check for degenerate data.",
                ConvergenceWarning,
                stacklevel=4,
            )
        W, means, scatter = moments_
        return MixtureStats(
            classes=classes,
            counts=rows,
            weights=weights,
            owner=owner.astype(np.int64),
            component_weights=W,
            component_means=means,
            component_scatter=scatter,
            centre=proj.centre,
            basis=proj.basis,
            scale=np.asarray(proj.scale),
            residual_var=np.array([proj.residual_var]),
            log_likelihood=np.asarray(ll, dtype=np.float64),
            n_iter=np.array([n_iter], dtype=np.int64),
            converged=np.array([int(converged)], dtype=np.int64),
            reg_covar=np.array([ridge]),
        )

    def _ridge(self, stats: Any = None) -> float:
        """The ``reg_covar`` of the model: the parameter, or the value ``'auto'`` chose."""
        if self.reg_covar != "auto":
            return float(self.reg_covar)
        if stats is None:
            return float(REG_FOR_CHOICE)
        value = float(np.asarray(stats.reg_covar).ravel()[0])
        return value if np.isfinite(value) else float(REG_FOR_CHOICE)

    def _components(
        self, owner: NDArray[np.intp], moments: _Moments, K: int, rank: int, ridge: Any = None
    ) -> Any:
        W, means, scatter = moments
        M, d = means.shape
        with blas_budget(float(M) * d**3):  # small factorisations: few threads on a busy machine
            return self._derive_components(owner, moments, K, rank, ridge)

    def _derive_components(
        self, owner: NDArray[np.intp], moments: _Moments, K: int, rank: int, ridge: Any = None
    ) -> Any:
        W, means, scatter = moments
        return derive_components(
            owner,
            W,
            means,
            scatter,
            covariance_type=self.covariance_type,
            reg_covar=self._ridge() if ridge is None else float(ridge),
            rank=rank,
            scale=class_scales(owner, W, means, scatter, K),
            dimension=self.dimension,
        )

    # ------------------------------------------------------------ derivation
    def _derive(self, stats: Any, priors: _F, **extra: Any) -> dict[str, Any]:
        K = stats.n_classes
        owner = np.asarray(stats.owner, dtype=np.intp)
        if (
            owner.size == 0
            or np.any(np.diff(owner) < 0)
            or int(owner.max()) >= K
            or np.any(np.bincount(owner, minlength=K) == 0)
        ):
            raise ValueError("MixtureStats must give every class at least one component, in order.")
        rank = self._resolve_rank(stats.n_dims)
        self._check_dimension(int(owner.size), int(stats.n_dims))
        moments = (stats.component_weights, stats.component_means, stats.component_scatter)
        comps = self._components(owner, moments, K, rank, self._ridge(stats))
        proj = Projection(stats.centre, stats.basis, float(stats.residual_var[0]), stats.scale)
        _, class_means, _ = class_moments(owner, *moments, K)
        W = float(stats.weights.sum())
        return {
            "_model": MixtureFamily(comps, proj, K),
            "n_components_": stats.n_components,
            "means_": proj.back(class_means),
            "projection_mean_": stats.centre.copy(),
            "projection_components_": stats.basis.T.copy(),
            "n_iter_": int(stats.n_iter[0]),
            "n_passes_": int(stats.n_passes[0]),
            "converged_": bool(stats.converged[0]),
            "reg_covar_": self._ridge(stats),
            "lower_bound_": float(stats.log_likelihood.sum()) / W if W > 0 else float("nan"),
        }


class _PassTask:
    """One pass of the EM fit as a :class:`~bayesrule.estimators.seam.Summariser`."""

    def __init__(self, task: Any) -> None:
        self.task = task

    def statistics(self, X: Any, y: Any, sample_weight: Any = None, classes: Any = None) -> Any:
        return self.task(X, y, sample_weight)

    def combine(self, total: Any, block: Any) -> Any:
        if block is None:
            return total
        return block if total is None else total.merge(block)

    def finish(self, total: Any) -> Any:
        return total

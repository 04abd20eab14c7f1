"""Mixture discriminant analysis: each class a Gaussian mixture, fitted by EM from sub-class statistics.

The fit is a sequence of passes over the data, each one a mergeable summary
of every block of rows (:meth:`MixtureDiscriminantAnalysis._fit_passes`):

1. **survey**: the classes, their weights and row counts, the feature
   bounds, the moments the projection needs (per-class means and the
   pooled within-class scatter, :class:`~bayesrule.stats.PooledScatterStats`;
   without a projection :class:`~bayesrule.stats.DiagonalStats`) and, per
   class, the keys of an order-free sample of its rows: the ``m`` smallest
   values of a hash of the rows (:class:`~bayesrule.stats._sketch.KeySketch`);
2. **sample**: the projected rows behind those keys
   (:class:`~bayesrule.stats._sketch.KeyedRows`); k-means++ draws each
   class's seeds among them;
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

import dataclasses
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import eigh
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from .._parallel import blas_budget, in_parallel
from ..models.mixture import (
    BLOCK_ROWS,
    MixtureFamily,
    PassMoments,
    Projection,
    class_moments,
    class_scales,
    component_log_prob,
    component_moments,
    derive_components,
    merge_moments,
    n_parameters,
    worst_rows,
)
from ..stats import DiagonalStats, PooledScatterStats
from ..stats._common import as_classes, encode, label_repr
from ..stats._mixture import MixtureStats
from ..stats._sketch import KeyedRows, KeySketch, row_keys
from ._base import GenerativeClassifier, as_generator
from ._cv_stats import _Refused
from ._priors import PRIORS_CONSTRAINT

__all__ = ["MixtureDiscriminantAnalysis"]

_F = NDArray[np.float64]
_Moments = tuple[_F, _F, _F]
#: the least number of rows of each class kept for the k-means++ seeding
SAMPLE_ROWS = 2048
#: and at least this many per component
SAMPLE_PER_COMPONENT = 32


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
    n_components : int, list of int, dict or 'bic', default=12
        Components per class: one number for every class, one per class (a
        list in the order of the sorted labels, or ``{label: n}``), or
        ``'bic'`` to choose for each class the number in
        ``1..max_components`` with the lowest BIC. A class with fewer rows
        than its components gets as many components as rows, with a
        warning naming the class.
    covariance_type : {'full', 'diag', 'spherical', 'shared', 'ppca'}, default='full'
        'shared': one covariance for all components of all classes;
        'ppca': probabilistic PCA components, ``rank`` principal axes plus an
        isotropic noise variance (a low-rank-plus-diagonal covariance, applied
        with Woodbury's identity).
    rank : int, default=None
        Principal axes of each 'ppca' component; less than the number of
        dimensions. None: ``min(10, n_dims - 1)``.
    reg_covar : float >= 0, default=0.1
        Added to the diagonal of every component covariance, in units of the
        mean variance of the class in the projected space
        (``reg_covar * tr(Sigma_k) / d``): the value does not depend on the
        features' units.
    projection : {'pca', 'fisher'} or None, default='pca'
        Fitted on the training data and part of the model: 'pca' the leading
        principal axes of the (weighted) data, 'fisher' the discriminant
        directions of LDA (orthonormalised), None the features themselves.
        Predictions, densities and samples are in the original features.
    n_dims : int, default=None
        Dimensions kept (at most the number of features). None: 60 for
        'pca' (all features if fewer), ``n_classes - 1`` for 'fisher'.
    max_components : int, default=8
        The largest number tried with ``n_components='bic'``.
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

    1. the classes, weights, counts and feature bounds, the moments of the
       projection, and per class the keys of an order-free sample of
       ``max(2048, 32 x the most components of a class)`` rows: those whose
       hash of their float64 values is smallest (identical rows are one
       key, with their weights summed);
    2. the projected rows behind those keys, among which k-means++ draws
       each class's seeds;
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

    _stats_type = MixtureStats
    _parameter_constraints: dict = {
        "n_components": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"bic"}),
            list,
            tuple,
            dict,
            np.ndarray,
        ],
        "covariance_type": [StrOptions({"full", "diag", "spherical", "shared", "ppca"})],
        "rank": [Interval(Integral, 0, None, closed="left"), None],
        "reg_covar": [Interval(Real, 0, None, closed="left")],
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

    partial_fit = _Refused(
        "EM makes several passes over all the data, so batches cannot be added to a fit "
        "(refit instead; fit_stream and Dask collections run the passes)"
    )
    merge = _Refused("the components of two EM fits do not correspond (refit on both)")
    forget = _Refused("responsibility-weighted moments cannot be downdated (refit instead)")

    def __init__(
        self,
        *,
        n_components: Any = 12,
        covariance_type: str = "full",
        rank: int | None = None,
        reg_covar: float = 0.1,
        projection: str | None = "pca",
        n_dims: int | None = None,
        max_components: int = 8,
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
    #: the fit is several passes over the data (see :meth:`_fit_passes`):
    #: fit_stream and the Dask backend drive them instead of merging block statistics
    _multi_pass = True

    def _block(
        self, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
    ) -> tuple[Any, Any]:
        """Validate like every estimator, then run the passes in memory: the fitted :class:`MixtureStats`."""
        Xv, y_arr, w = self._validate_fit_input(X, y, sample_weight, reset=reset)
        rows = _Rows(Xv, y_arr, w)
        stats = self._fit_passes(lambda task: task.summarise(rows), classes=classes)
        return stats, self._schema(X, Xv.shape[1], Xv.dtype)

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
        size = _sample_size(self._most_components())
        survey = counted(_Survey(base, declared, size, self.projection is not None))
        if survey is None:
            raise ValueError("X has 0 samples; at least one is required.")
        moments = survey.moments
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
        sketch = survey.sketch.aligned(c)
        found = counted(_Gather(base, c, proj, sketch))
        sample = _Sample(sketch, found)
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
                "n_classes - 1 with n_components='bic'"
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
        """The projection, from the survey's class means and pooled within-class scatter."""
        p = int(moments.n_features)
        if self.projection is None:
            return Projection(np.zeros(p), np.eye(p), 0.0)
        K = int(moments.n_classes)
        cw = np.asarray(moments.weights, dtype=np.float64)
        W = float(cw.sum())
        centre = (cw @ moments.means) / W
        cm = moments.means - centre
        between = (cm * cw[:, None]).T @ cm / W
        within = moments.scatter / W
        total = within + between
        total = 0.5 * (total + total.T)
        if self.projection == "pca":
            d = min(self.n_dims or 60, p)
            if d >= p:
                return Projection(np.zeros(p), np.eye(p), 0.0)
            vals, vecs = eigh(total, subset_by_index=[p - d, p - 1])
            basis = vecs[:, ::-1]
            captured = float(np.maximum(vals, 0.0).sum())
        else:
            d = min(self.n_dims or (K - 1), p)
            within = 0.5 * (within + within.T)
            ridge = 1e-6 * max(float(np.trace(within)) / p, 1e-300)
            vals, vecs = eigh(between, within + ridge * np.eye(p))
            basis, _ = np.linalg.qr(vecs[:, ::-1][:, :d])
            captured = float(np.einsum("pd,pq,qd->", basis, total, basis))
        # each axis points to where its largest coordinate is positive: the
        # same axes from moments that differ by rounding (blocks merged in
        # another order)
        top = np.argmax(np.abs(basis), axis=0)
        basis = basis * np.where(basis[top, np.arange(basis.shape[1])] < 0, -1.0, 1.0)
        rest = max(float(np.trace(total)) - captured, 0.0) / max(p - d, 1)
        floor = 1e-12 * max(float(np.trace(total)) / p, 1e-300)
        return Projection(centre, np.ascontiguousarray(basis), max(rest, floor))

    # ------------------------------------------------------------ components
    def _requested(self, classes: NDArray[Any], rows: NDArray[np.int64]) -> NDArray[np.int64]:
        """Components per class before any EM, clipped to the class's rows (with a warning)."""
        K = classes.size
        nc = self.n_components
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
        bic = self.n_components == "bic"
        self._check_dimension(K if bic else int(want.sum()), d, bic=bic)
        run = _Runner(self, reduce, ctx, sample, rows, weights, rank)
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
            residual_var=np.array([proj.residual_var]),
            log_likelihood=np.asarray(ll, dtype=np.float64),
            n_iter=np.array([n_iter], dtype=np.int64),
            converged=np.array([int(converged)], dtype=np.int64),
        )

    def _components(self, owner: NDArray[np.intp], moments: _Moments, K: int, rank: int) -> Any:
        W, means, scatter = moments
        M, d = means.shape
        with blas_budget(float(M) * d**3):  # small factorisations: few threads on a busy machine
            return self._derive_components(owner, moments, K, rank)

    def _derive_components(
        self, owner: NDArray[np.intp], moments: _Moments, K: int, rank: int
    ) -> Any:
        W, means, scatter = moments
        return derive_components(
            owner,
            W,
            means,
            scatter,
            covariance_type=self.covariance_type,
            reg_covar=float(self.reg_covar),
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
        comps = self._components(owner, moments, K, rank)
        proj = Projection(stats.centre, stats.basis, float(stats.residual_var[0]))
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
            "lower_bound_": float(stats.log_likelihood.sum()) / W if W > 0 else float("nan"),
        }


# ------------------------------------------------------------------ the passes
def _sample_size(most_components: int) -> int:
    """Keys kept per class for the seeding: ``max(2048, 32 x the most components of a class)``."""
    return max(SAMPLE_ROWS, SAMPLE_PER_COMPONENT * int(most_components))


def _replace_passes(stats: MixtureStats, n: int) -> MixtureStats:
    return dataclasses.replace(stats, n_passes=np.array([n], dtype=np.int64))


class _Rows:
    """A validated block of rows and what the passes derive from it, each computed once.

    In memory the whole data is one such block for every pass, so its keys
    and its projected rows (sorted by class) are computed once per fit; a
    block read from a file or held by a Dask worker is a new one each pass.
    """

    def __init__(self, X: Any, y: NDArray[Any], w: _F) -> None:
        self.X = np.asarray(X, dtype=np.float64)
        self.y = y
        self.w = np.asarray(w, dtype=np.float64)
        self._keys: NDArray[np.uint64] | None = None
        self._codes: tuple[NDArray[Any], NDArray[np.intp]] | None = None
        self._projected: tuple[Projection, tuple[_F, _F, NDArray[np.intp]]] | None = None

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    def keys(self) -> NDArray[np.uint64]:
        if self._keys is None:
            self._keys = row_keys(self.X)
        return self._keys

    def codes(self, classes: NDArray[Any]) -> NDArray[np.intp]:
        if self._codes is None or not np.array_equal(self._codes[0], classes):
            self._codes = (classes, encode(self.y, classes))
        return self._codes[1]

    def projected(self, proj: Projection, classes: NDArray[Any]) -> tuple[_F, _F, NDArray[np.intp]]:
        """The projected rows and their weights sorted by class, and each class's slice bounds."""
        if self._projected is not None and self._projected[0] is proj:
            return self._projected[1]
        yi = self.codes(classes)
        order = np.argsort(yi, kind="stable")
        n, p = self.X.shape
        with blas_budget(float(n) * p * proj.n_dims):
            Z = proj.transform(self.X)
        value = (
            np.ascontiguousarray(Z[order]),
            self.w[order],
            np.searchsorted(yi[order], np.arange(classes.size + 1)),
        )
        self._projected = (proj, value)
        return value


class _Task:
    """One pass's work on a block of rows.

    ``task(X, y, sample_weight)`` (what :func:`bayesrule.fit_stream` and the
    Dask backend call on each raw block) checks the block as ``fit`` does
    and summarises it; ``None`` for a block without rows. It carries the
    estimator's parameters (an unfitted clone) and the pass's small model.
    """

    def __init__(self, est: Any) -> None:
        self.est = est

    def __call__(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        n = int(X.shape[0]) if hasattr(X, "shape") else len(X)
        if n == 0:
            return None
        Xv, y_arr, w = self.est._validate_fit_input(X, y, sample_weight, reset=True)
        return self.summarise(_Rows(Xv, y_arr, w))

    def summarise(self, rows: _Rows) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class _Context:
    est: Any
    classes: NDArray[Any]
    proj: Projection


@dataclass(frozen=True, eq=False)
class _Surveyed:
    """The first pass's summary: the moments for the projection and the sample's keys."""

    moments: Any
    sketch: KeySketch

    def merge(self, other: _Surveyed) -> _Surveyed:
        return _Surveyed(self.moments.merge(other.moments), self.sketch.merge(other.sketch))


class _Survey(_Task):
    """Pass 1: classes, weights, counts, bounds, projection moments and the sample's keys."""

    def __init__(self, est: Any, classes: Any, size: int, scatter: bool) -> None:
        super().__init__(est)
        self.classes = classes
        self.size = size
        self.scatter = scatter

    def summarise(self, rows: _Rows) -> _Surveyed:
        kind = PooledScatterStats if self.scatter else DiagonalStats
        moments = kind.from_data(rows.X, rows.y, rows.w, classes=self.classes)
        c = moments.classes
        sketch = KeySketch.from_keys(rows.keys(), rows.codes(c), rows.w, c, self.size)
        return _Surveyed(moments, sketch)


class _Gather(_Task):
    """Pass 2: the projected rows behind the sample's keys."""

    def __init__(self, est: Any, classes: NDArray[Any], proj: Projection, sketch: KeySketch):
        super().__init__(est)
        self.classes = classes
        self.proj = proj
        self.sketch = sketch

    def summarise(self, rows: _Rows) -> KeyedRows:
        keys = rows.keys()
        yi = rows.codes(self.classes)
        take = self.sketch.selects(keys, yi) & (rows.w > 0)
        return KeyedRows.of(yi[take], keys[take], self.proj.transform(rows.X[take]))


class _Sample:
    """Each class's sampled rows (projected) with their weights, in the order of their keys."""

    def __init__(self, sketch: KeySketch, found: KeyedRows | None) -> None:
        self.sketch = sketch
        self.found = found

    def of_class(self, k: int, d: int) -> tuple[_F, _F]:
        keys, weights = self.sketch.of_class(k)
        if keys.size == 0 or self.found is None:
            return np.zeros((0, d)), np.zeros(0)
        return self.found.of_class(k, keys), weights


class _ComponentPass(_Task):
    """A pass of sub-class moments: each class's rows against its own components only."""

    def __init__(self, ctx: _Context, owner: NDArray[np.intp]) -> None:
        super().__init__(ctx.est)
        self.ctx = ctx
        self.owner = owner

    def summarise(self, rows: _Rows) -> PassMoments:
        K = self.ctx.classes.size
        Zs, ws, bounds = rows.projected(self.ctx.proj, self.ctx.classes)
        owner = self.owner
        starts = np.searchsorted(owner, np.arange(K + 1))
        d = self.ctx.proj.n_dims
        present = [k for k in range(K) if bounds[k + 1] > bounds[k]]
        C = int(np.max(np.diff(starts), initial=1))
        work = float(rows.n) * C * d * d

        def step(k: int) -> tuple[Any, ...]:
            sl = slice(bounds[k], bounds[k + 1])
            return self.class_rows(Zs[sl], ws[sl], k, np.arange(starts[k], starts[k + 1]))

        results = in_parallel(step, present, work)
        out = PassMoments.empty(owner, d, K)
        W, means, scatter, ll = out.weights, out.means, out.scatter, out.log_likelihood
        worst: list[tuple[Any, Any, Any]] = []
        for k, (moments, total, *rest) in zip(present, results, strict=True):
            sl = slice(starts[k], starts[k + 1])
            W[sl], means[sl], scatter[sl] = moments
            ll[k] = total
            if rest:
                worst.append(tuple(rest))
        if not worst:
            return out
        return PassMoments(
            owner,
            W,
            means,
            scatter,
            ll,
            np.concatenate([o for o, _, _ in worst]),
            np.concatenate([v for _, v, _ in worst]),
            np.concatenate([r for _, _, r in worst]),
        )

    def class_rows(self, Z: _F, w: _F, k: int, which: NDArray[np.intp]) -> tuple[Any, ...]:
        raise NotImplementedError


class _Assign(_ComponentPass):
    """The seeding pass: every row to its class's nearest k-means++ seed (hard responsibilities)."""

    def __init__(self, ctx: _Context, owner: NDArray[np.intp], seeds: _F) -> None:
        super().__init__(ctx, owner)
        self.seeds = seeds

    def class_rows(self, Z: _F, w: _F, k: int, which: NDArray[np.intp]) -> tuple[Any, ...]:
        S = self.seeds[which]
        ss = np.einsum("cd,cd->c", S, S)
        out: _Moments | None = None
        for s in range(0, Z.shape[0], BLOCK_ROWS):
            Zb, wb = Z[s : s + BLOCK_ROWS], w[s : s + BLOCK_ROWS]
            dist = np.einsum("nd,nd->n", Zb, Zb)[:, None] - 2.0 * Zb @ S.T + ss
            R = np.zeros((Zb.shape[0], which.size))
            R[np.arange(Zb.shape[0]), np.argmin(dist, axis=1)] = 1.0
            part = component_moments(Zb, R, wb)
            out = part if out is None else merge_moments(out, part)
        assert out is not None
        return out, 0.0


class _EStep(_ComponentPass):
    """One EM iteration's pass: responsibilities, their moments, log-likelihood, worst rows."""

    def __init__(self, ctx: _Context, owner: NDArray[np.intp], comps: Any) -> None:
        super().__init__(ctx, owner)
        self.comps = comps

    def class_rows(self, Z: _F, w: _F, k: int, which: NDArray[np.intp]) -> tuple[Any, ...]:
        out: _Moments | None = None
        ll_total = 0.0
        ll_rows = np.empty(Z.shape[0])
        for s in range(0, Z.shape[0], BLOCK_ROWS):
            Zb, wb = Z[s : s + BLOCK_ROWS], w[s : s + BLOCK_ROWS]
            lp = component_log_prob(Zb, self.comps, which)
            ll = np.asarray(logsumexp(lp, axis=1))
            finite = np.isfinite(ll)
            R = np.exp(lp - np.where(finite, ll, 0.0)[:, None])
            if not np.all(finite):  # a row no component reaches: give it to all equally
                R[~finite] = 1.0 / lp.shape[1]
                ll = np.where(finite, ll, np.finfo(np.float64).min)
            part = component_moments(Zb, R, wb)
            out = part if out is None else merge_moments(out, part)
            ll_total += float(wb @ ll)
            ll_rows[s : s + BLOCK_ROWS] = ll
        assert out is not None
        # the class's worst-explained rows of positive weight, where empty components re-seed
        C = which.size
        pos = np.flatnonzero(w > 0)
        if pos.size > C:
            cut = np.partition(ll_rows[pos], C - 1)[C - 1]
            pos = pos[ll_rows[pos] <= cut]  # ties at the cut stay: worst_rows orders them
        limit = np.zeros(k + 1, dtype=np.intp)
        limit[k] = C
        worst = worst_rows(np.full(pos.size, k, dtype=np.intp), ll_rows[pos], Z[pos], limit)
        return (out, ll_total, *worst)


class _Runner:
    """EM runs of one fit, each pass through ``reduce``."""

    def __init__(
        self,
        est: MixtureDiscriminantAnalysis,
        reduce: Callable[[Any], Any],
        ctx: _Context,
        sample: _Sample,
        rows: NDArray[np.int64],
        weights: _F,
        rank: int,
    ) -> None:
        self.est = est
        self.reduce = reduce
        self.ctx = ctx
        self.sample = sample
        self.rows = rows
        self.weights = weights
        self.rank = rank

    def best_of(
        self, counts: NDArray[np.int64], rng: np.random.Generator
    ) -> tuple[NDArray[np.intp], _Moments, int, _F, bool]:
        """The run of ``n_init`` with the highest log-likelihood."""
        best = None
        for _ in range(int(self.est.n_init)):
            run = self.run(counts, rng)
            if best is None or run[3].sum() > best[3].sum():
                best = run
        assert best is not None
        return best

    def run(
        self, counts: NDArray[np.int64], rng: np.random.Generator
    ) -> tuple[NDArray[np.intp], _Moments, int, _F, bool]:
        """One EM run from a k-means++ seeding: (owner, moments, n_iter, ll per class, converged)."""
        est = self.est
        K = self.ctx.classes.size
        d = self.ctx.proj.n_dims
        owner = np.repeat(np.arange(K), counts).astype(np.intp)
        seeds = [int(s) for s in rng.integers(0, 2**31 - 1, size=K)]
        centres = np.concatenate(
            [
                _kmeanspp_seeds(*self.sample.of_class(k, d), int(counts[k]), seeds[k], d)
                for k in range(K)
            ]
        )
        moments = self.reduce(_Assign(self.ctx, owner, centres)).moments
        total_w = float(self.weights.sum())
        prev = -np.inf
        n_iter, converged = 0, False
        ll = np.zeros(K)
        for it in range(1, int(est.max_iter) + 1):
            comps = est._components(owner, moments, K, self.rank)
            result = self.reduce(_EStep(self.ctx, owner, comps))
            moments = result.moments
            ll = result.log_likelihood
            n_iter = it
            mean_ll = float(ll.sum()) / total_w
            if it < est.max_iter:
                moments, reseeded = _reseed(moments, owner, result)
            else:
                reseeded = False
            if not reseeded and abs(mean_ll - prev) < est.tol:
                converged = True
                break
            prev = mean_ll
        return owner, moments, n_iter, ll, converged


def _reseed(
    moments: _Moments, owner: NDArray[np.intp], result: PassMoments
) -> tuple[_Moments, bool]:
    """Re-seed empty components at the class's worst-explained rows, with the class covariance."""
    W, means, scatter = moments
    K = result.log_likelihood.size
    cW = np.bincount(owner, weights=W, minlength=K)
    empty = (W <= 1e-8 * cW[owner]) & (cW[owner] > 0)
    if not np.any(empty):
        return moments, False
    W, means, scatter = W.copy(), means.copy(), scatter.copy()
    _, _, ccov = class_moments(owner, *moments, K)
    C = np.bincount(owner, minlength=K)
    for k in np.unique(owner[empty]).tolist():
        rows = result.worst_rows[result.worst_owner == k]  # worst first
        if rows.shape[0] == 0:
            continue
        share = cW[k] / C[k]
        for j, m in enumerate(np.flatnonzero(empty & (owner == k)).tolist()):
            W[m] = share
            means[m] = rows[j % rows.shape[0]]
            scatter[m] = ccov[k] * share
    return (W, means, scatter), True


def _kmeanspp_seeds(Z: _F, w: _F, C: int, seed: int, d: int) -> _F:
    """``C`` k-means++ seeds among the rows ``Z`` (weighted), (C, d).

    Draws use the cumulative weights, so a row of integer weight ``w`` is
    chosen as often as ``w`` copies of it would be.
    """
    n = Z.shape[0]
    if n == 0:
        return np.zeros((C, d))
    rng = np.random.default_rng(seed)
    sq = np.einsum("nd,nd->n", Z, Z)

    def draw(p: _F) -> int:
        cum = np.cumsum(p)
        if not cum[-1] > 0:
            cum = np.cumsum(w)
        return int(min(np.searchsorted(cum, rng.random() * cum[-1], side="right"), n - 1))

    centres = [draw(w)]
    d2 = np.maximum(sq - 2.0 * Z @ Z[centres[0]] + sq[centres[0]], 0.0)
    for _ in range(1, C):
        i = draw(w * d2)
        centres.append(i)
        d2 = np.minimum(d2, np.maximum(sq - 2.0 * Z @ Z[i] + sq[i], 0.0))
    return np.ascontiguousarray(Z[centres])

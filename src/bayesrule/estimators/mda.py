"""Mixture discriminant analysis: each class a Gaussian mixture, fitted by EM from sub-class statistics.

The estimator holds the parameters, their checks and the derivation of the
model from its statistic, :class:`~bayesrule.stats.MixtureStats` (the last
E-step's moments and the projection): ``from_stats`` and the model files
derive the mixture from them. The fit is a sequence of passes over the data,
each a mergeable summary of every block of rows
(:meth:`MixtureDiscriminantAnalysis.fit_plan`); the EM algorithm that runs
them is :mod:`~bayesrule.estimators._mda_em`, the passes
:mod:`~bayesrule.estimators._mda_passes`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils._param_validation import Interval, StrOptions

from ..models.mixture import MixtureFamily, Projection, class_moments
from ..stats import MixtureStats, label_repr
from ._base import GenerativeClassifier
from ._mda_em import components, fit_em
from ._mda_passes import _Rows
from ._mda_select import REG_FOR_CHOICE
from ._priors import PRIORS_CONSTRAINT
from .registry import register
from .seam import Summariser, summarise

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
    covariance_type : {'auto', 'full', 'diag', 'spherical', 'shared', 'ppca'}, default='auto'
        'auto': 'full' or 'shared', whichever misclassifies fewer held-out
        rows of the folds that choose the ridge (chosen with it, on the same
        fits; 'shared', the simpler model, is kept unless 'full' has fewer
        errors by more than the square root of its count), when the sample holds every row of every
        class (at most 2048 distinct rows a class) or some class has no
        more rows than projected dimensions; 'full' for larger data, where
        each class has the rows to estimate its own covariances, and with
        ``n_components='bic'``; 'shared' with a ``dimension``. Where
        classes have fewer rows than dimensions, one pooled covariance (LDA's,
        with one component a class) usually predicts better than a
        regularised covariance per component. The structure used is
        ``covariance_type_``.
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
        the lower log-loss, then the larger ridge), or 0.3 where most
        sampled rows are in classes with no more rows than projected
        dimensions (their covariances are then mostly ridge, and lighter ones
        chosen on a few held-out rows give far too narrow densities); for
        larger data 0.1 (measured on MNIST, where a subsample's verdict is
        biased towards heavier ridges), unless some class has no more rows
        than dimensions (then chosen as for small data). The value used is
        ``reg_covar_``. It also floors the variance of the isotropic
        residual outside the projection, where there are fewer rows than
        features (``n`` rows span at most ``n - 1`` dimensions, so the
        training rows' own residual is 0 there): at least
        ``reg_covar_`` times the mean variance of a scaled feature, times
        ``1 - max(n - 1 - d, 0) / (p - d)``, the share of the ``p - d``
        dimensions left out that the rows cannot reach (no floor with
        ``n > p``).
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
    covariance_type_ : str
        The covariance structure of the model (``covariance_type``, or what
        ``'auto'`` chose).
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

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from bayesrule import MixtureDiscriminantAnalysis
    >>> X, y = load_iris(return_X_y=True)
    >>> mda = MixtureDiscriminantAnalysis(n_components=2, random_state=0).fit(X, y)
    >>> mda.n_components_
    array([2, 2, 2])
    >>> mda.predict(X[[0, 50, 100]])
    array([0, 1, 2])
    >>> bool(mda.score(X, y) > 0.95)
    True

    Each EM iteration is one pass over the data, after three passes that
    summarise the data, sample it for the seeds and assign the rows to them:

    >>> bool(mda.n_passes_ == 3 + mda.n_iter_)
    True
    """

    #: the fit is several passes over the data (see :meth:`_fit_passes`):
    #: fit_stream and the Dask backend drive them instead of merging block statistics
    spec = GenerativeClassifier.spec.replace(statistic=MixtureStats, multi_pass=True)
    squares_deviations = True
    _parameter_constraints: dict = {
        "n_components": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto", "bic"}),
            list,
            tuple,
            dict,
            np.ndarray,
        ],
        "covariance_type": [StrOptions({"auto", "full", "diag", "spherical", "shared", "ppca"})],
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
        covariance_type: str = "auto",
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

    def fit_plan(
        self,
        reduce: Callable[[Summariser], Any],
        *,
        first_block: Any = None,
        classes: ArrayLike | None = None,
        **options: Any,
    ) -> MixtureStats:
        """Run the EM fit as passes over the data: the fitted :class:`MixtureStats`.

        Each pass calls ``reduce(task)`` once, where ``task`` is a pure,
        picklable :class:`~bayesrule.estimators.seam.Summariser` and
        ``reduce`` returns ``task.finish`` of the ``task.combine`` of
        ``task.statistics(X, y, sample_weight, classes)`` over every block
        of the data (each block checked as ``fit`` checks its data). In
        memory the data are one block; :func:`bayesrule.fit_stream` reads
        the source again for every pass; the Dask backend sends the task to
        the blocks. The fit takes ``2 + sum over EM runs of (1 + n_iter)``
        passes, recorded in ``n_passes`` (see :mod:`~bayesrule.estimators._mda_em`).

        Parameters
        ----------
        reduce : callable
        first_block : ignored
            (The passes need no choice made from the first block.)
        classes : array-like, optional
            The labels, when known before the first pass (else those of the data).
        **options
            The backend's; none is used.
        """
        self._validate_params()
        return fit_em(self, reduce, classes)

    def _block(
        self, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
    ) -> tuple[Any, Any]:
        """Validate like every estimator, then run the passes in memory: the fitted :class:`MixtureStats`."""
        Xv, y_arr, w = self._validate_fit_input(X, y, sample_weight, reset=reset)
        self._check_squares(X, Xv, w)  # before the search meets an overflow
        # one block, validated and projected once for every pass
        block = [(_Rows(Xv, y_arr, w), y_arr, w)]
        stats = self.fit_plan(lambda task: summarise(task, block, classes), classes=classes)
        return stats, self._schema(X, Xv.shape[1], Xv.dtype)

    def _check_dimension(
        self, n_components: int | None = None, d: int | None = None, *, bic: bool = False
    ) -> None:
        """Refuse a ``dimension`` without a shared covariance or beyond what the means can span."""
        if self.dimension is None:
            return
        if self._structure() != "shared":
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
                    stacklevel=5,
                )
        return np.maximum(np.minimum(want, np.maximum(rows, 1)), 1)

    def _structure(self) -> str:
        """``covariance_type``, with ``'auto'`` meaning ``'shared'`` where a ``dimension`` is given."""
        if self.covariance_type == "auto" and self.dimension is not None:
            return "shared"
        return str(self.covariance_type)

    def _kind(self, stats: Any) -> str:
        """The covariance structure of the fitted ``stats``: the parameter, or what ``'auto'`` chose."""
        kind = self._structure()
        if kind != "auto":
            return kind
        return "shared" if int(np.asarray(stats.shared).ravel()[0]) == 1 else "full"

    def _ridge(self, stats: Any = None) -> float:
        """The ``reg_covar`` of the model: the parameter, or the value ``'auto'`` chose."""
        if self.reg_covar != "auto":
            return float(self.reg_covar)
        if stats is None:
            return float(REG_FOR_CHOICE)
        value = float(np.asarray(stats.reg_covar).ravel()[0])
        return value if np.isfinite(value) else float(REG_FOR_CHOICE)

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
        comps = components(self, owner, moments, K, rank, self._ridge(stats), self._kind(stats))
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
            "covariance_type_": self._kind(stats),
            "lower_bound_": float(stats.log_likelihood.sum()) / W if W > 0 else float("nan"),
        }

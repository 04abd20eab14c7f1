"""Mixture discriminant analysis: each class a Gaussian mixture, fitted by EM from sub-class statistics.

The fit is

1. one pass for the projection (``projection='pca'``: the weighted total
   covariance; ``'fisher'``: the within- and between-class scatter) and one to
   project the rows;
2. per EM iteration, one pass over the projected rows: for each block, the
   E-step's responsibilities and, with them as weights, the block's
   sub-class moments (:func:`~bayesrule.models.mixture.component_moments`);
   the blocks' moments are merged (Chan's update) and the M-step derives the
   components from the merged moments
   (:func:`~bayesrule.models.mixture.derive_components`). Nothing else
   travels between iterations, so the loop could run over blocks out of
   core or on a cluster.

The model is its hyperparameters plus :class:`~bayesrule.stats._mixture.MixtureStats`
(the last E-step's moments and the projection): ``from_stats`` and the model
files derive the mixture from them.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import eigh
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from .._parallel import blas_budget, in_parallel
from ..models.mixture import (
    BLOCK_ROWS,
    MixtureFamily,
    Projection,
    class_moments,
    class_scales,
    component_log_prob,
    component_moments,
    derive_components,
    merge_moments,
    n_parameters,
)
from ..stats._common import as_classes, encode, feature_bounds, label_repr
from ..stats._mixture import MixtureStats
from ._base import GenerativeClassifier, as_generator
from .rda_cv import _Refused

__all__ = ["MixtureDiscriminantAnalysis"]

_F = NDArray[np.float64]
_Moments = tuple[_F, _F, _F]


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
        The most EM iterations (each one pass over the data).
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

    Notes
    -----
    ``partial_fit``, ``merge`` and ``forget`` are not available: the
    sub-class moments are weighted by responsibilities that depend on the
    whole fit, and two fits' components do not correspond. To fit out of
    core, run the EM loop yourself over blocks: the statistic of each block
    is a merge-able :class:`~bayesrule.stats._mixture.MixtureStats`.

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
        "priors": ["array-like", None],
        "dimension": [Interval(Integral, 1, None, closed="left"), None],
    }

    partial_fit = _Refused("EM needs all the data at once (refit instead)")
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
    def _block(
        self, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
    ) -> tuple[Any, Any]:
        """Validate like every estimator, then run EM: the fitted :class:`MixtureStats`."""
        Xv, y_arr, w = self._validate_fit_input(X, y, sample_weight, reset=reset)
        self._check_dimension()
        c = as_classes(y_arr if classes is None else classes)
        if c.size < self._min_classes:
            raise ValueError(
                "The number of classes has to be greater than one. Got "
                f"{c.size} class. {type(self).__name__} needs at least "
                f"{self._min_classes} classes to classify; y has {c.size} class ({c.tolist()})."
            )
        if not np.any(w > 0):
            raise ValueError(
                "every sample weight is zero: no sample has positive weight, nothing can be fitted."
            )
        yi = encode(y_arr, c)
        Xf = np.asarray(Xv, dtype=np.float64)
        n, p = Xf.shape
        # on a busy machine the BLAS runs these products on the cores that are idle
        with blas_budget(float(n) * p * p):
            proj = self._fit_projection(Xf, yi, w, c.size)
            self._resolve_rank(proj.n_dims)
            Z = proj.transform(Xf)
        stats = self._em(Z, yi, w, c, proj)
        lower, upper = feature_bounds(Xv, w)  # the training range, in the original features
        return stats.with_bounds(lower, upper), self._schema(X, Xv.shape[1], Xv.dtype)

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

    def _fit_projection(self, X: _F, yi: NDArray[np.intp], w: _F, K: int) -> Projection:
        """The projection, from one pass of weighted moments over ``X``."""
        n, p = X.shape
        W = float(w.sum())
        centre = (w @ X) / W
        if self.projection is None:
            return Projection(np.zeros(p), np.eye(p), 0.0)
        total = np.zeros((p, p))
        for s in range(0, n, BLOCK_ROWS):
            A = (X[s : s + BLOCK_ROWS] - centre) * np.sqrt(w[s : s + BLOCK_ROWS, None])
            total += A.T @ A  # BLAS syrk
        total = 0.5 * (total + total.T) / W
        if self.projection == "pca":
            d = min(self.n_dims or 60, p)
            if d >= p:
                return Projection(np.zeros(p), np.eye(p), 0.0)
            vals, vecs = eigh(total, subset_by_index=[p - d, p - 1])
            basis = vecs[:, ::-1]
            captured = float(np.maximum(vals, 0.0).sum())
        else:
            d = min(self.n_dims or (K - 1), p)
            cw = np.bincount(yi, weights=w, minlength=K)
            cm = np.zeros((K, p))
            np.add.at(cm, yi, X * w[:, None])
            cm = cm / np.where(cw > 0, cw, 1.0)[:, None] - centre
            between = (cm * cw[:, None]).T @ cm / W
            within = total - between
            ridge = 1e-6 * max(float(np.trace(within)) / p, 1e-300)
            vals, vecs = eigh(between, within + ridge * np.eye(p))
            basis, _ = np.linalg.qr(vecs[:, ::-1][:, :d])
            captured = float(np.einsum("pd,pq,qd->", basis, total, basis))
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
        self, Z: _F, yi: NDArray[np.intp], w: _F, classes: NDArray[Any], proj: Projection
    ) -> MixtureStats:
        K = classes.size
        pos = w > 0
        rows = np.bincount(yi[pos], minlength=K).astype(np.int64)
        order = np.argsort(yi, kind="stable")
        Zs, ws = Z[order], w[order]
        bounds = np.searchsorted(yi[order], np.arange(K + 1))
        parts = [(Zs[bounds[k] : bounds[k + 1]], ws[bounds[k] : bounds[k + 1]]) for k in range(K)]
        rng = as_generator(self.random_state)
        d = Z.shape[1]
        rank = self._resolve_rank(d)
        want = self._requested(classes, rows)
        # with 'bic' every candidate has at least one component per class
        bic = self.n_components == "bic"
        self._check_dimension(K if bic else int(want.sum()), d, bic=bic)
        if self.n_components == "bic":
            runs = {}
            bic = np.full((int(want.max()), K), np.inf)
            for C in range(1, int(want.max()) + 1):
                counts = np.minimum(np.full(K, C), want)
                runs[C] = self._best_of(parts, counts, rng, rank)
                for k in range(K):
                    if C <= want[k]:
                        npar = n_parameters(self.covariance_type, C, d, rank, self.dimension)
                        ll = runs[C][3][k]
                        bic[C - 1, k] = -2.0 * ll + npar * np.log(
                            max(float(parts[k][1].sum()), 1.0)
                        )
            want = (np.argmin(bic, axis=0) + 1).astype(np.int64)
        owner, moments, n_iter, ll, converged = self._best_of(parts, want, rng, rank)
        if not converged:
            warnings.warn(
                f"EM did not converge in max_iter={self.max_iter} iterations (tol={self.tol}); "
                "increase max_iter or tol, or check for degenerate data.",
                ConvergenceWarning,
                stacklevel=4,
            )
        W, means, scatter = moments
        return MixtureStats(
            classes=classes,
            counts=rows,
            weights=np.asarray(np.bincount(yi, weights=w, minlength=K), dtype=np.float64),
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

    def _best_of(
        self,
        parts: list[tuple[_F, _F]],
        counts: NDArray[np.int64],
        rng: np.random.Generator,
        rank: int,
    ) -> tuple[NDArray[np.intp], _Moments, int, _F, bool]:
        """The run of ``n_init`` with the highest log-likelihood."""
        best = None
        for _ in range(int(self.n_init)):
            run = self._run_em(parts, counts, rng, rank)
            if best is None or run[3].sum() > best[3].sum():
                best = run
        assert best is not None
        return best

    def _run_em(
        self,
        parts: list[tuple[_F, _F]],
        counts: NDArray[np.int64],
        rng: np.random.Generator,
        rank: int,
    ) -> tuple[NDArray[np.intp], _Moments, int, _F, bool]:
        """One EM run from a k-means++ seeding: (owner, moments, n_iter, ll per class, converged)."""
        K = len(parts)
        owner = np.repeat(np.arange(K), counts)
        starts = np.concatenate([[0], np.cumsum(counts)])
        d = parts[0][0].shape[1]
        work = float(sum(Zk.shape[0] for Zk, _ in parts)) * float(counts.max()) * d * d
        seeds = [int(s) for s in rng.integers(0, 2**31 - 1, size=K)]

        def initial(k: int) -> _Moments:
            Zk, wk = parts[k]
            return _block_moments(Zk, wk, _kmeanspp_resp(Zk, wk, int(counts[k]), seeds[k]))

        moments = _stack(in_parallel(initial, list(range(K)), work))
        total_w = float(sum(wk.sum() for _, wk in parts))
        prev = -np.inf
        n_iter, converged = 0, False
        ll = np.zeros(K)
        for it in range(1, int(self.max_iter) + 1):
            comps = self._components(owner, moments, K, rank)

            def step(k: int, comps: Any = comps) -> tuple[_Moments, float, _F]:
                Zk, wk = parts[k]
                which = np.arange(starts[k], starts[k + 1])
                return _e_step_moments(Zk, wk, comps, which)

            results = in_parallel(step, list(range(K)), work)
            moments = _stack([r[0] for r in results])
            ll = np.array([r[1] for r in results])
            n_iter = it
            mean_ll = float(ll.sum()) / total_w
            if it < self.max_iter:
                moments, reseeded = _reseed(moments, owner, starts, parts, results)
            else:
                reseeded = False
            if not reseeded and abs(mean_ll - prev) < self.tol:
                converged = True
                break
            prev = mean_ll
        return owner, moments, n_iter, ll, converged

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
            "converged_": bool(stats.converged[0]),
            "lower_bound_": float(stats.log_likelihood.sum()) / W if W > 0 else float("nan"),
        }


# ------------------------------------------------------------------ EM pieces
def _block_moments(Z: _F, w: _F, R: _F) -> _Moments:
    """Moments of a class's rows in row blocks, merged (the shape of an out-of-core pass)."""
    out: _Moments | None = None
    for s in range(0, max(Z.shape[0], 1), BLOCK_ROWS):
        part = component_moments(
            Z[s : s + BLOCK_ROWS], R[s : s + BLOCK_ROWS], w[s : s + BLOCK_ROWS]
        )
        out = part if out is None else merge_moments(out, part)
    assert out is not None
    return out


def _e_step_moments(
    Z: _F, w: _F, comps: Any, which: NDArray[np.intp]
) -> tuple[_Moments, float, _F]:
    """One pass over a class's rows: responsibilities, their moments, the log-likelihood."""
    out: _Moments | None = None
    ll_total = 0.0
    ll_rows = np.empty(Z.shape[0])
    for s in range(0, max(Z.shape[0], 1), BLOCK_ROWS):
        Zb, wb = Z[s : s + BLOCK_ROWS], w[s : s + BLOCK_ROWS]
        lp = component_log_prob(Zb, comps, which)
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
    return out, ll_total, ll_rows


def _stack(parts: list[_Moments]) -> _Moments:
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
    )


def _reseed(
    moments: _Moments,
    owner: NDArray[np.intp],
    starts: NDArray[np.int64],
    parts: list[tuple[_F, _F]],
    results: list[tuple[_Moments, float, _F]],
) -> tuple[_Moments, bool]:
    """Re-seed empty components at the class's worst-explained row, with the class covariance."""
    W, means, scatter = moments
    K = len(parts)
    cW = np.bincount(owner, weights=W, minlength=K)
    empty = (W <= 1e-8 * cW[owner]) & (cW[owner] > 0)
    if not np.any(empty):
        return moments, False
    W, means, scatter = W.copy(), means.copy(), scatter.copy()
    _, _, ccov = class_moments(owner, *moments, K)
    for k in np.unique(owner[empty]).tolist():
        Zk, wk = parts[k]
        ll_rows = np.where(wk > 0, results[k][2], np.inf)
        order = np.argsort(ll_rows)
        share = cW[k] / (starts[k + 1] - starts[k])
        for j, m in enumerate(np.flatnonzero(empty & (owner == k)).tolist()):
            row = order[j % max(int(np.count_nonzero(wk > 0)), 1)]
            W[m] = share
            means[m] = Zk[row]
            scatter[m] = ccov[k] * share
    return (W, means, scatter), True


def _kmeanspp_resp(Z: _F, w: _F, C: int, seed: int) -> _F:
    """Hard responsibilities from k-means++ seeds (weighted), (n, C).

    Draws use the cumulative weights, so a row of integer weight ``w`` is
    chosen as often as ``w`` copies of it would be.
    """
    n = Z.shape[0]
    R = np.zeros((n, C))
    if n == 0:
        return R
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
    Cz = Z[centres]
    dist = sq[:, None] - 2.0 * Z @ Cz.T + np.einsum("cd,cd->c", Cz, Cz)
    R[np.arange(n), np.argmin(dist, axis=1)] = 1.0
    return R

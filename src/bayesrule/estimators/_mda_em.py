"""The EM fit of mixture discriminant analysis: a sequence of passes, each through ``reduce(task)``.

:meth:`~bayesrule.estimators.mda.MixtureDiscriminantAnalysis.fit_plan`
runs :func:`fit_em`. Every pass is one ``reduce(task)``: ``task`` is a
:class:`~bayesrule.estimators.seam.Summariser` of
:mod:`~bayesrule.estimators._mda_passes` and ``reduce`` (the backend's)
returns ``task.finish`` of the ``task.combine`` of
``task.statistics(X, y, sample_weight, classes)`` over every block:

1. **survey**: the classes, their weights and row counts, the feature
   bounds and the moments the projection needs (per-class means and the
   pooled within-class scatter, :class:`~bayesrule.stats.PooledScatterStats`;
   without a projection :class:`~bayesrule.stats.DiagonalStats`);
2. **sample**: per class, the projected rows of an order-free sample: those
   with the ``m`` smallest values of a hash of the rows divided by the
   features' ranges (:func:`~bayesrule.estimators._mda_passes.sample_keys`,
   :class:`~bayesrule.stats.RowSample`), so that it does not depend on the
   units either. With ``'auto'`` the number of components of each class
   and the ridge are chosen on it (:mod:`~bayesrule.estimators._mda_select`),
   and k-means++ draws each class's seeds among it;
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
``3 + n_iter_`` with the defaults (``n_passes_``). The same EM runs in
memory (the whole data one block, validated and projected once), out of
core (:func:`bayesrule.fit_stream` reads the source again for each pass)
and on Dask (each pass one ``dask.compute`` of per-block tasks merged in a
tree): all start from the same sample and give the same model, to rounding.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from .._util.parallel import blas_budget
from ..models.mixture import (
    PassMoments,
    class_moments,
    class_scales,
    derive_components,
    n_parameters,
)
from ..stats import MixtureStats, as_classes
from ._base import as_generator
from ._mda_passes import (
    _Assign,
    _Context,
    _EStep,
    _Gather,
    _kmeanspp_seeds,
    _Sample,
    _sample_size,
    _Survey,
)
from ._mda_projection import fit_projection, residual_floor
from ._mda_select import REG_FOR_CHOICE, choose_for

__all__ = ["components", "fit_em"]

_F = NDArray[np.float64]
_Moments = tuple[_F, _F, _F]
_Run = tuple[NDArray[np.intp], _Moments, int, _F, bool]


def fit_em(est: Any, reduce: Callable[[Any], Any], classes: Any = None) -> MixtureStats:
    """The whole fit of the estimator ``est``, as passes of ``reduce(task)``: its :class:`MixtureStats`.

    ``classes``: the labels, when known before the first pass (else those of
    the data). The number of passes is recorded in ``n_passes``.
    """
    est._check_dimension()
    passes = [0]

    def counted(task: Any) -> Any:
        passes[0] += 1
        return reduce(task)

    base = clone(est)  # the parameters only: what the tasks carry to the blocks
    declared = None if classes is None else as_classes(classes)
    moments = counted(_Survey(base, declared, est.projection is not None))
    if moments is None:
        raise ValueError("X has 0 samples; at least one is required.")
    c = moments.classes
    if c.size < est._min_classes:
        raise ValueError(
            "The number of classes has to be greater than one. Got "
            f"{c.size} class. {type(est).__name__} needs at least "
            f"{est._min_classes} classes to classify; y has {c.size} class ({c.tolist()})."
        )
    if not np.any(moments.weights > 0):
        raise ValueError(
            "every sample weight is zero: no sample has positive weight, nothing can be fitted."
        )
    proj = fit_projection(moments, est.projection, est.n_dims)
    est._resolve_rank(proj.n_dims)
    size = _sample_size(_most_components(est))
    sample = _Sample(counted(_Gather(base, c, proj, size)), size)
    stats = _em(est, counted, _Context(base, c, proj), moments, sample)
    stats = dataclasses.replace(stats, n_passes=np.array([passes[0]], dtype=np.int64))
    return stats.with_bounds(moments.lower, moments.upper)


def _most_components(est: Any) -> int:
    """The most components any class may get (sizes the initialisation sample)."""
    nc = est.n_components
    if isinstance(nc, str):
        return int(est.max_components)
    try:
        values = list(nc.values()) if isinstance(nc, dict) else np.ravel(nc).tolist()
        return max(1, *(int(v) for v in values))
    except (TypeError, ValueError):  # _requested names the problem
        return 1


def _em(
    est: Any, reduce: Callable[[Any], Any], ctx: _Context, moments: Any, sample: _Sample
) -> MixtureStats:
    """The components (chosen, or 'bic' over EM runs) and the best EM run's statistics."""
    classes, proj = ctx.classes, ctx.proj
    K = classes.size
    rows = np.asarray(moments.counts, dtype=np.int64)
    weights = np.asarray(moments.weights, dtype=np.float64)
    rng = as_generator(est.random_state)
    d = proj.n_dims
    rank = est._resolve_rank(d)
    want = est._requested(classes, rows)
    # with 'bic' every candidate has at least one component per class
    bic = est.n_components in ("bic", "auto")
    est._check_dimension(K if bic else int(want.sum()), d, bic=bic)
    ridge = None if est.reg_covar == "auto" else float(est.reg_covar)
    kind = est._structure()
    choose_kind = kind == "auto" and est.n_components != "bic"
    if est.n_components == "auto" or est.reg_covar == "auto" or choose_kind:
        want, ridge, kind = choose_for(est, classes, sample, rows, weights, d, rank, rng, want)
    kind = "full" if kind == "auto" else kind
    ridge = float(REG_FOR_CHOICE if ridge is None else ridge)
    run = _Runner(est, reduce, ctx, sample, weights, rank, ridge, kind)
    # a class whose sample holds all its rows has no more components than
    # distinct rows (identical rows are one, with their weights summed)
    distinct = np.array([sample.of_class(k, d)[0].shape[0] for k in range(K)])
    want = np.where((distinct < sample.size) & (distinct > 0), np.minimum(want, distinct), want)
    if est.n_components == "bic":
        runs = {}
        scores = np.full((int(want.max()), K), np.inf)
        for C in range(1, int(want.max()) + 1):
            counts = np.minimum(np.full(K, C), want)
            runs[C] = run.best_of(counts, rng)
            for k in range(K):
                if C <= want[k]:
                    npar = n_parameters(kind, C, d, rank, est.dimension)
                    ll = runs[C][3][k]
                    scores[C - 1, k] = -2.0 * ll + npar * np.log(max(float(weights[k]), 1.0))
        want = (np.argmin(scores, axis=0) + 1).astype(np.int64)
    owner, moments_, n_iter, ll, converged = run.best_of(want, rng)
    if not converged:
        warnings.warn(
            f"EM did not converge in max_iter={est.max_iter} iterations (tol={est.tol}); "
            "increase max_iter or tol, or check for degenerate data.",
            ConvergenceWarning,
            stacklevel=5,
        )
    W, means, scatter = moments_
    # the rows' own residual is 0 where they span no more than the projection
    proj = residual_floor(moments, proj, ridge)
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
        shared=np.array([int(kind == "shared")]),
    )


def components(
    est: Any,
    owner: NDArray[np.intp],
    moments: _Moments,
    K: int,
    rank: int,
    ridge: float,
    kind: str,
) -> Any:
    """The M-step: the components of the estimator ``est`` from sub-class moments ``(W, means, scatter)``.

    ``kind`` is the covariance structure (``covariance_type``, or what ``'auto'`` chose).
    """
    W, means, scatter = moments
    M, d = means.shape
    with blas_budget(float(M) * d**3):  # small factorisations: few threads on a busy machine
        return derive_components(
            owner,
            W,
            means,
            scatter,
            covariance_type=kind,
            reg_covar=float(ridge),
            rank=rank,
            scale=class_scales(owner, W, means, scatter, K),
            dimension=est.dimension,
        )


class _Runner:
    """EM runs of one fit, each pass through ``reduce``."""

    def __init__(
        self,
        est: Any,
        reduce: Callable[[Any], Any],
        ctx: _Context,
        sample: _Sample,
        weights: _F,
        rank: int,
        ridge: float,
        kind: str,
    ) -> None:
        self.est = est
        self.reduce = reduce
        self.ctx = ctx
        self.sample = sample
        self.weights = weights
        self.rank = rank
        self.ridge = ridge
        self.kind = kind

    def best_of(self, counts: NDArray[np.int64], rng: np.random.Generator) -> _Run:
        """The run of ``n_init`` with the highest log-likelihood."""
        best = None
        for _ in range(int(self.est.n_init)):
            run = self.run(counts, rng)
            if best is None or run[3].sum() > best[3].sum():
                best = run
        assert best is not None
        return best

    def run(self, counts: NDArray[np.int64], rng: np.random.Generator) -> _Run:
        """One EM run from a k-means++ seeding: (owner, moments, n_iter, ll per class, converged)."""
        est = self.est
        K = self.ctx.classes.size
        d = self.ctx.proj.n_dims
        owner = np.repeat(np.arange(K), counts).astype(np.intp)
        seeds = [int(s) for s in self.sample.class_seeds(rng, K)]
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
            comps = components(est, owner, moments, K, self.rank, self.ridge, self.kind)
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

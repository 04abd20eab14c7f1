"""How many components each class of a mixture discriminant analysis gets: a held-out likelihood.

``n_components='auto'`` (the default) chooses, for each class on its own,
the number of components whose mixture best predicts rows it was not fitted
on. The rows are the class's seeding sample (the projected rows of the
smallest keys of a hash, :class:`~bayesrule.stats._sketch.RowSample`: all
the class's distinct rows up to 2048 of them, a uniform sample beyond), so
the choice needs no pass over the data and is the same in memory, out of
core and on Dask:

1. the sample is split for cross-validation in the order of the keys (a
   random split that depends on the rows alone): 5 folds (rows ``i, i + 5,
   ...`` held out in fold ``i``), or, when a half holds at least 512 rows,
   once into halves (fitted on one, scored on the other);
2. for each candidate ``C`` of the ladder ``1, 2, 4, 8, 12, 16, ...`` up to
   ``max_components`` and to a cap of one component per ``max(8, d)`` rows
   of a half (``d`` the projected dimensions), EM (k-means++ seeds, the
   estimator's covariance structure and ridge) is fitted on each training
   part and scored on its held-out rows: the held-out log-likelihood;
3. a larger number is kept only if it raises the held-out log-likelihood by
   more than :data:`MIN_GAIN` nats per held-out row; the ladder stops after
   two numbers that do not.

A class with fewer than :data:`MIN_ROWS` distinct rows cannot be split
for scoring: it gets one component (the estimator warns,
naming the class).

The same folds then choose the ridge (``reg_covar='auto'``) and the
covariance structure (``covariance_type='auto'``: each component's own, or
one pooled from every class's components) by the held-out errors of
Bayes' rule over all the classes (:func:`choose_reg_covar`), where the
sample holds every row or some class has no more rows than dimensions.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import logsumexp

from .._util.parallel import blas_budget, in_parallel
from ..models.mixture import (
    class_scales,
    component_log_prob,
    component_moments,
    derive_components,
    segment_logsumexp,
)
from ..stats import label_repr
from ._mda_passes import _kmeanspp_seeds, _Sample

__all__ = [
    "LADDER",
    "MIN_ROWS",
    "REG_GRID",
    "ROWS_PER_COMPONENT",
    "Choice",
    "choose_components",
    "choose_for",
    "choose_reg_covar",
    "structure_of",
]

_F = NDArray[np.float64]
#: the numbers of components tried, in order
LADDER = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64)
#: a class needs at least this many distinct rows for a choice (two folds of two)
MIN_ROWS = 4
#: at most one component per this many rows of a half
ROWS_PER_COMPONENT = 8
#: a class with more rows than its sample, shown multimodal on it, gets one
#: component per this many rows per projected dimension
ROWS_PER_DIM = 8
#: the ridges ``reg_covar='auto'`` chooses among (fractions of a class's mean variance)
REG_GRID = (0.01, 0.03, 0.1, 0.3)
#: the ridge the numbers of components are chosen with
REG_FOR_CHOICE = 0.1
#: EM on a half: at most this many iterations, stopping at this change of the
#: mean log-likelihood
SELECT_MAX_ITER = 12
SELECT_TOL = 1e-2
#: halves of at least this many rows are scored one way only (fit on the first)
ONE_WAY_ROWS = 512
#: folds of the cross-validation of a class with fewer rows
FOLDS = 5
#: a larger number must raise the held-out log-likelihood by this much per row
MIN_GAIN = 0.01


def candidates(n_rows: int, max_components: int, d: int = 1) -> list[int]:
    """The numbers of components tried for a class with ``n_rows`` sampled rows in ``d`` dimensions.

    At most ``max_components``, and one component per ``max(8, d)`` rows of
    a half (a component's covariance is estimated from its rows).
    """
    if n_rows < MIN_ROWS:
        return [1]
    per = max(ROWS_PER_COMPONENT, int(d))
    cap = max(1, min(int(max_components), (n_rows // 2) // per))
    return [c for c in LADDER if c <= cap]


@dataclass
class Choice:
    """One class's choice: its number of components, the held-out scores, the splits' fits.

    ``scores[C]`` is the held-out log-likelihood with ``C`` components summed
    over the splits; ``splits`` the (training, held-out) pairs of (rows,
    weights) and ``moments`` the final E-step moments of the EM fitted on
    each training part (for the chosen number).
    """

    n_components: int
    scores: dict[int, float]
    splits: tuple[Any, ...] = ()
    moments: tuple[Any, ...] = ()


def choose_components(
    Z: _F,
    w: _F,
    *,
    max_components: int,
    covariance_type: str,
    reg_covar: float,
    rank: int,
    seed: int,
    only: int | None = None,
    rows: int | None = None,
    scored: bool = False,
) -> Choice:
    """The number of components of one class (see the module's docstring).

    A number replaces a smaller one only if it raises the held-out
    log-likelihood by more than :data:`MIN_GAIN` nats per held-out row (a
    unit-free margin: components that add nothing measurable are not
    kept); the ladder stops after two numbers that do not.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        The class's sampled rows in the projected space, in the order of their keys.
    w : ndarray of shape (n,)
        Their weights.
    max_components, covariance_type, reg_covar, rank :
        The estimator's (see :class:`~bayesrule.MixtureDiscriminantAnalysis`).
    seed : int
        Seeds the k-means++ draws.
    only : int, optional
        Fit the folds with this number only (for ``reg_covar='auto'`` with
        the number given): the choice is then that number.
    rows : int, optional
        The class's rows (with positive weight), given when the sample holds
        only some of them (it is full). Then the sample is a subsample, whose held-out optimum is
        smaller than that of all the rows: only 1 and 2 components are
        compared on it, and if 2 win the class gets one component per
        :data:`ROWS_PER_DIM` ``x d`` of its rows (at least 2, at most
        ``max_components``).
    scored : bool
        Fit and score the folds even when one component is the only
        candidate (a class with few rows for its dimensions): the ridge
        and the structure are then chosen on those fits.
    """
    if only is not None:
        ladder = [int(only)] if Z.shape[0] >= max(MIN_ROWS, 2 * int(only)) else []
        if not ladder:
            return Choice(int(only), {})
    else:
        ladder = candidates(Z.shape[0], max_components, Z.shape[1])
        if len(ladder) == 1 and not (scored and Z.shape[0] >= MIN_ROWS):
            return Choice(1, {})
        if rows is not None:
            ladder = ladder[:2]
    if not ladder:
        return Choice(1, {})
    splits = _splits(Z, w)
    held_out = float(sum(wb.sum() for _, (_, wb) in splits))
    kind = "full" if covariance_type in ("shared", "auto") else covariance_type
    scores: dict[int, float] = {}
    fits: dict[int, tuple[Any, ...]] = {}
    best, worse = ladder[0], 0
    for C in ladder:
        total, moments = 0.0, []
        for i, ((A, wa), (B, wb)) in enumerate(splits):
            try:
                comps, m = _fit(A, wa, C, kind, reg_covar, rank, seed + 7919 * C + i)
            except ValueError:  # a singular component (reg_covar=0): C is too many
                total = -np.inf
                break
            total += float(wb @ np.asarray(logsumexp(component_log_prob(B, comps), axis=1)))
            moments.append(m)
        if not np.isfinite(total):
            break
        scores[C], fits[C] = total, tuple(moments)
        if C == best or total > scores[best] + MIN_GAIN * held_out:
            best, worse = C, 0
        else:
            worse += 1
            if worse >= 2:
                break
    chosen = best
    if only is None and rows is not None and best > 1:
        per = ROWS_PER_DIM * Z.shape[1]
        chosen = int(min(max_components, max(best, rows // per)))
    return Choice(chosen, scores, tuple(splits), fits.get(chosen, ()))


def choose_reg_covar(
    choices: list[Choice],
    log_priors: _F,
    grid: tuple[float, ...],
    *,
    covariance_type: str,
    rank: int,
    rows_per_class: int = 256,
    kinds: tuple[str, ...] | None = None,
) -> tuple[float, dict[tuple[str, float], tuple[float, float]], str]:
    """The ridge (and structure) of the fewest held-out errors of Bayes' rule over every class's folds.

    For each structure of ``kinds`` (default: ``covariance_type`` alone) and
    each ``reg_covar`` of ``grid``, each class's mixtures are derived from
    the moments EM reached on each training part (with the ridge the
    components were chosen with) and the held-out rows (at most
    ``rows_per_class`` of each class) are classified: the weighted count of
    errors summed over every fold, ties broken by the log-loss
    ``-sum w log P(class | z)``. For ``'shared'`` the components of every
    class on their training part i pool their scatter into one covariance
    (no class's held-out rows are in it). Classes without folds (too few
    rows) are left out. Returns the ridge, each candidate's (errors,
    log-loss) keyed by (structure, ridge), and the structure; ties go to
    the earlier structure, then to the larger ridge. Between ``'shared'``
    and another structure, the other is chosen only if its fewest errors are
    below the shared ones' by more than their standard error (the square
    root of the count): one pooled covariance is the simpler model, and on
    a few hundred rows the errors of the two differ by chance (breast_cancer:
    95.2-96.3 over ``random_state`` with the plain minimum).
    """
    K = len(choices)
    kinds = kinds or (covariance_type,)
    scored = [c for c in choices if c.moments]
    if not scored or K < 2:
        return float(grid[-1]), {}, kinds[0]
    losses: dict[tuple[str, float], tuple[float, float]] = {}
    folds = max(len(c.moments) for c in choices)
    # the held-out rows of every class's part i, scored together
    held = []
    for i in range(folds):
        parts = [
            (k, c.splits[i][1][0][:rows_per_class], c.splits[i][1][1][:rows_per_class])
            for k, c in enumerate(choices)
            if len(c.moments) > i
        ]
        truth = np.concatenate([np.full(B.shape[0], k) for k, B, _ in parts])
        held.append(
            (np.vstack([B for _, B, _ in parts]), np.concatenate([w for *_, w in parts]), truth)
        )
    for kind in kinds:
        for reg in grid:
            total = errors = 0.0
            for i, (B, wb, truth) in enumerate(held):
                # each class's fit on its part i (or on its only part): other classes'
                # rows are held out from it either way
                density = _fold_densities(choices, i, kind, float(reg), rank)
                joint = density(B) + log_priors[None, :]
                present = np.isfinite(joint).any(axis=0)
                norm = np.asarray(logsumexp(joint[:, present], axis=1))
                errors += float(wb @ (np.argmax(joint, axis=1) != truth))
                total -= float(wb @ (joint[np.arange(truth.size), truth] - norm))
            losses[(kind, float(reg))] = (errors, total if np.isfinite(total) else np.inf)
    kind = structure_of(losses, kinds)
    best = min(v for (kd, _), v in losses.items() if kd == kind)
    return max(r for (kd, r), v in losses.items() if kd == kind and v == best), losses, kind


def structure_of(
    losses: dict[tuple[str, float], tuple[float, float]], kinds: tuple[str, ...]
) -> str:
    """The structure of :func:`choose_reg_covar`'s held-out ``losses`` ((errors, log-loss) by
    (structure, ridge)): the fewest errors (ties: the lower log-loss, then the earlier
    structure), except that one pooled covariance (``'shared'``), the simpler model, gives
    way only to a structure whose fewest errors are below its own by more than their
    standard error, the square root of the count (the one-standard-error rule).
    """
    scored = [kd for kd in kinds if any(k == kd for k, _ in losses)]
    if "shared" in scored and len(scored) > 1:
        pooled = min(v for (kd, _), v in losses.items() if kd == "shared")[0]
        rivals = [v[0] for (kd, _), v in losses.items() if kd != "shared" and kd in scored]
        if not any(e < pooled - float(np.sqrt(pooled)) for e in rivals):
            return "shared"
        scored = [kd for kd in scored if kd != "shared"]
    best = min(v for (kd, _), v in losses.items() if kd in scored)
    return next(kd for kd in scored if any(v == best for (k, _), v in losses.items() if k == kd))


def _fold_densities(choices: list[Choice], i: int, kind: str, reg: float, rank: int) -> Any:
    """``Z -> (n, K)`` log densities of every class fitted on its training part ``i``.

    A class without folds gets ``-inf``. The components of every class are
    derived at once, as the estimator derives them (each class's ridge in
    units of its own mean variance); ``kind='shared'``: every class's
    components on its part ``i`` share their pooled covariance.
    """
    K = len(choices)
    parts = [c.moments[min(i, len(c.moments) - 1)] if c.moments else None for c in choices]
    held = [k for k, m in enumerate(parts) if m is not None]
    fitted = [m for m in parts if m is not None]
    W = np.concatenate([m[0] for m in fitted])
    means = np.concatenate([m[1] for m in fitted])
    scatter = np.concatenate([m[2] for m in fitted])
    owner = np.repeat(np.arange(len(held)), [m[0].size for m in fitted]).astype(np.intp)
    comps = derive_components(
        owner,
        W,
        means,
        scatter,
        covariance_type=kind,
        reg_covar=reg,
        rank=rank,
        scale=class_scales(owner, W, means, scatter, len(held)),
    )
    starts = np.searchsorted(owner, np.arange(len(held))).astype(np.intp)

    def densities(B: _F) -> _F:
        out = np.full((B.shape[0], K), -np.inf)
        out[:, held] = segment_logsumexp(component_log_prob(B, comps), starts)
        return out

    return densities


def _derive(moments: Any, kind: str, reg_covar: float, rank: int) -> Any:
    W, means, scatter = moments
    owner = np.zeros(W.size, dtype=np.intp)
    return derive_components(
        owner,
        W,
        means,
        scatter,
        covariance_type=kind,
        reg_covar=reg_covar,
        rank=rank,
        scale=class_scales(owner, W, means, scatter, 1),
    )


def _fit(
    Z: _F, w: _F, C: int, kind: str, reg_covar: float, rank: int, seed: int
) -> tuple[Any, Any]:
    """EM of a ``C``-component mixture on the rows ``Z`` (weights ``w``), in memory.

    Returns the components and the moments of the last E-step.
    """
    d = Z.shape[1]
    centres = _kmeanspp_seeds(Z, w, C, seed, d)
    sq = np.einsum("nd,nd->n", Z, Z)
    dist = sq[:, None] - 2.0 * Z @ centres.T + np.einsum("cd,cd->c", centres, centres)
    R = np.zeros((Z.shape[0], C))
    R[np.arange(Z.shape[0]), np.argmin(dist, axis=1)] = 1.0
    moments = component_moments(Z, R, w)
    total_w = float(w.sum())
    prev = -np.inf
    for _ in range(SELECT_MAX_ITER):
        comps = _derive(moments, kind, reg_covar, rank)
        lp = component_log_prob(Z, comps)
        ll = np.asarray(logsumexp(lp, axis=1))
        moments = component_moments(Z, np.exp(lp - ll[:, None]), w)
        mean_ll = float(w @ ll) / total_w
        if abs(mean_ll - prev) < SELECT_TOL:
            break
        prev = mean_ll
    return _derive(moments, kind, reg_covar, rank), moments


def choose_for(
    est: Any,
    classes: NDArray[Any],
    sample: _Sample,
    rows: NDArray[np.int64],
    weights: _F,
    d: int,
    rank: int,
    rng: np.random.Generator,
    want: NDArray[np.int64],
) -> tuple[NDArray[np.int64], float | None, str]:
    """``'auto'``: each class's number of components, then the ridge and structure, held out.

    For the estimator ``est``: the components of each class (``want`` where
    they were given), the ridge of the fit (None: the default's) and the
    covariance structure (``covariance_type='auto'``: ``'full'`` or
    ``'shared'``, whichever misclassifies fewer held-out rows when the
    sample holds every row or some class has no more rows than dimensions;
    ``'full'`` otherwise).
    """
    K = classes.size
    seeds = sample.class_seeds(rng, K)
    parts = [sample.of_class(k, d) for k in range(K)]
    auto = est.n_components == "auto"
    for k, (Z, _) in enumerate(parts):
        if auto and 0 < Z.shape[0] < MIN_ROWS:
            warnings.warn(
                f"class {label_repr(classes[k])} has {int(rows[k])} samples "
                f"({Z.shape[0]} distinct), too few to choose its number of components "
                f"(at least {MIN_ROWS} are needed); it gets one component.",
                UserWarning,
                stacklevel=7,
            )
    reg = REG_FOR_CHOICE if est.reg_covar == "auto" else float(est.reg_covar)
    # the ridge and the structure are chosen where the folds' fits stand for
    # the model: when the sample holds every row of every class; else the
    # fixed default ridge and full covariances, unless some class has no more
    # rows than dimensions (a covariance of its own would be mostly ridge)
    sizes = [Z.shape[0] for Z, _ in parts]
    complete = all(
        n < sample.size or int(r) <= sample.size for n, r in zip(sizes, rows, strict=True)
    )
    narrow = [MIN_ROWS <= n <= d for n in sizes]
    structure = est._structure()
    fixed = est.reg_covar != "auto"
    if structure == "auto":  # 'bic' compares numbers of full components
        kinds: tuple[str, ...] = ("full",) if est.n_components == "bic" else ("full", "shared")
    else:
        kinds = (structure,)
    choosing = (complete or any(narrow)) and (not fixed or len(kinds) > 1)

    def one(k: int) -> Choice:
        Z, w = parts[k]
        return choose_components(
            Z,
            w,
            max_components=int(est.max_components) if auto else int(want[k]),
            covariance_type=est.covariance_type,
            reg_covar=reg,
            rank=rank,
            seed=int(seeds[k]),
            only=None if auto else int(want[k]),
            rows=int(rows[k]) if Z.shape[0] >= sample.size else None,
            scored=choosing,
        )

    top = int(est.max_components) if auto else int(want.max())
    work = float(sum(Z.shape[0] for Z, _ in parts)) * d * d * top
    with blas_budget(work):
        choices = in_parallel(one, list(range(K)), work)
    ridge: float | None = float(est.reg_covar) if fixed else None
    kind = kinds[0]
    if choosing:
        # the classes' weights, not the ``priors`` parameter: the choice is one of
        # the class densities, which given priors only shift (as in the model)
        log_priors = np.log(np.maximum(weights, 1e-300) / weights.sum())
        # a class with no more rows than dimensions has a covariance the ridge
        # makes: the held-out errors of a few rows would choose a light one whose
        # densities are far too narrow, so data whose rows are mostly in such
        # classes keep the heaviest (a stray row of its own label does not)
        thin = 2 * sum(n for n, t in zip(sizes, narrow, strict=True) if t) >= sum(sizes)
        grid = (float(est.reg_covar),) if fixed else REG_GRID[-1:] if thin else REG_GRID
        ridge, _, kind = choose_reg_covar(
            choices, log_priors, grid, covariance_type=kinds[0], rank=rank, kinds=kinds
        )
    elif not fixed:
        ridge = REG_FOR_CHOICE
    if not auto:
        return want, ridge, kind
    return np.asarray([c.n_components for c in choices], dtype=np.int64), ridge, kind


def _splits(Z: _F, w: _F) -> list[tuple[tuple[_F, _F], tuple[_F, _F]]]:
    """(training, held-out) pairs of a class's sample, in the order of its keys.

    Halves of at least :data:`ONE_WAY_ROWS` rows: one split, fitted on the
    even rows and scored on the odd. Fewer rows: :data:`FOLDS`-fold
    cross-validation (rows ``i, i + F, ...`` held out in fold ``i``; fewer
    folds for fewer than ``2 F`` rows), so that every row is scored once.
    """
    n = Z.shape[0]
    if n // 2 >= ONE_WAY_ROWS:
        return [((Z[0::2], w[0::2]), (Z[1::2], w[1::2]))]
    F = max(2, min(FOLDS, n // 2))
    fold = np.arange(n) % F
    return [((Z[fold != i], w[fold != i]), (Z[fold == i], w[fold == i])) for i in range(F)]

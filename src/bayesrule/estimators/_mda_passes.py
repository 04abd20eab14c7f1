"""The passes of a mixture discriminant analysis fit: each a mergeable summary of every block of rows.

Each pass is a task with the :class:`~bayesrule.estimators.seam.Summariser`
protocol; :func:`~bayesrule.estimators._mda_em.fit_em` runs them through a
``reduce(task)`` callable (in memory, :func:`bayesrule.fit_stream` or Dask);
see :mod:`~bayesrule.estimators._mda_em` for the sequence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy.special import logsumexp

from .._util.parallel import blas_budget, in_parallel
from ..models.mixture import (
    BLOCK_ROWS,
    PassMoments,
    Projection,
    component_log_prob,
    component_moments,
    merge_moments,
    worst_rows,
)
from ..stats import DiagonalStats, PooledScatterStats, RowSample, encode, row_keys

_F = NDArray[np.float64]
_Moments = tuple[_F, _F, _F]
#: the least number of rows of each class kept for the k-means++ seeding
SAMPLE_ROWS = 2048
#: and at least this many per component
SAMPLE_PER_COMPONENT = 32


def _sample_size(most_components: int) -> int:
    """Keys kept per class for the seeding: ``max(2048, 32 x the most components of a class)``."""
    return max(SAMPLE_ROWS, SAMPLE_PER_COMPONENT * int(most_components))


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
        self._codes: tuple[NDArray[Any], NDArray[np.intp]] | None = None
        self._projected: tuple[Projection, tuple[_F, _F, NDArray[np.intp]]] | None = None

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

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
    """One pass's work: a :class:`~bayesrule.estimators.seam.Summariser` of blocks of rows.

    ``statistics(X, y, sample_weight)`` checks a raw block as ``fit`` does
    and summarises it (``None`` for a block without rows); ``X`` may also be
    a :class:`_Rows`, a block already checked (the in-memory fit, whose one
    block is validated and projected once for all its passes). The
    summaries ``merge``; ``finish`` returns the merged value. A task is
    picklable: it carries the estimator's parameters (an unfitted clone)
    and the pass's small model.
    """

    def __init__(self, est: Any) -> None:
        self.est = est

    def statistics(self, X: Any, y: Any, sample_weight: Any = None, classes: Any = None) -> Any:
        if isinstance(X, _Rows):
            return self.summarise(X, classes)
        n = int(X.shape[0]) if hasattr(X, "shape") else len(X)
        if n == 0:
            return None
        Xv, y_arr, w = self.est._validate_fit_input(X, y, sample_weight, reset=True)
        return self.summarise(_Rows(Xv, y_arr, w), classes)

    def combine(self, total: Any, block: Any) -> Any:
        if block is None:
            return total
        return block if total is None else total.merge(block)

    def finish(self, total: Any) -> Any:
        return total

    def summarise(self, rows: _Rows, classes: Any = None) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class _Context:
    est: Any
    classes: NDArray[Any]
    proj: Projection


class _Survey(_Task):
    """Pass 1: classes, weights, counts, feature bounds and the projection's moments."""

    def __init__(self, est: Any, classes: Any, scatter: bool) -> None:
        super().__init__(est)
        self.classes = classes
        self.scatter = scatter

    def summarise(self, rows: _Rows, classes: Any = None) -> Any:
        kind = PooledScatterStats if self.scatter else DiagonalStats
        declared = self.classes if self.classes is not None else classes
        return kind.from_data(rows.X, rows.y, rows.w, classes=declared)


#: :func:`sample_keys` hashes each standardised value rounded to a multiple of this
KEY_GRID = 2.0**-10


def sample_keys(X: _F, proj: Projection) -> NDArray[np.uint64]:
    """Keys of the rows that depend neither on the features' units nor on their origins, (n,).

    The hash (:func:`~bayesrule.stats._sketch.row_keys`) of each row's
    features centred and divided by the projection's scale, rounded to a
    multiple of ``KEY_GRID`` (1/1024 of the feature's scale). A feature
    times ``a`` plus ``b`` (grams for kilograms, kelvin for degrees Celsius,
    a timestamp's epoch) changes the standardised values only by the
    rounding of its arithmetic, far below the grid's spacing, so the keys,
    the sample and the choices made on it stay the same but for a value
    within that rounding of a grid boundary. (Rounded to float32, as
    before, a value near 1 had a spacing of 1.2e-7, and an offset of 1e6
    on wine's features moved some of them across it and changed MDA's
    chosen ridge.) Rows equal to the grid's precision share a key.
    """
    out = np.empty(X.shape[0], dtype=np.uint64)
    scale = np.asarray(proj.scale)
    for s in range(0, X.shape[0], BLOCK_ROWS):
        with np.errstate(over="ignore", invalid="ignore"):
            U = np.rint((X[s : s + BLOCK_ROWS] - proj.centre) / (scale * KEY_GRID))
        out[s : s + BLOCK_ROWS] = row_keys(U)
    return out


class _Gather(_Task):
    """Pass 2: per class, the projected rows of the ``size`` smallest keys (a :class:`RowSample`)."""

    def __init__(self, est: Any, classes: NDArray[Any], proj: Projection, size: int):
        super().__init__(est)
        self.classes = classes
        self.proj = proj
        self.size = size

    def summarise(self, rows: _Rows, classes: Any = None) -> RowSample:
        K = self.classes.size
        keys = sample_keys(rows.X, self.proj)
        yi = rows.codes(self.classes)
        at = np.arange(rows.n, dtype=np.float64)[:, None]
        # the candidates first (row indices as their values), then their projected rows
        cand = RowSample.of(yi, keys, rows.w, at, K, self.size)
        take = cand.rows[:, 0].astype(np.intp)
        Z = self.proj.transform(rows.X[take])
        return RowSample.of(cand.owner, cand.keys, cand.weights, Z, K, self.size)


class _Sample:
    """Each class's sampled rows (projected) with their weights, in the order of their keys."""

    def __init__(self, found: RowSample | None, size: int) -> None:
        self.found = found
        #: rows kept per class at most: a class with fewer has them all
        self.size = int(size)

    def of_class(self, k: int, d: int) -> tuple[_F, _F]:
        if self.found is None:
            return np.zeros((0, d)), np.zeros(0)
        Z, w, _ = self.found.of_class(k)
        return Z, w

    def class_seeds(self, rng: np.random.Generator, K: int) -> NDArray[np.int64]:
        """One seed per class, dealt in the order of the classes' least sampled keys.

        The keys are hashes of the rows, so a class's seed follows its rows,
        not its label: relabelling the classes (or sorting other labels
        differently) gives each class's rows the same k-means++ draws.
        Classes without sampled rows come last, by index.
        """
        draws = rng.integers(0, 2**31 - 1, size=K)
        if self.found is None:
            return draws
        top = np.iinfo(np.uint64).max
        first = [self.found.of_class(k)[2] for k in range(K)]
        least = np.array([int(keys[0]) if keys.size else top for keys in first], dtype=np.uint64)
        seeds = np.empty(K, dtype=np.int64)
        seeds[np.argsort(least, kind="stable")] = draws
        return seeds


class _ComponentPass(_Task):
    """A pass of sub-class moments: each class's rows against its own components only.

    An engine that holds the rows elsewhere (the array API backend, on a
    device) reads the pass's public attributes (``em_pass``: "assign" or
    "estep"; ``ctx.proj``, ``ctx.classes``, ``owner``, and ``seeds`` or
    ``comps``), computes each class's result where the rows are, and gives
    them to :meth:`summarise_classes`.
    """

    #: which pass this is, for an engine that computes it elsewhere
    em_pass: ClassVar[str] = ""

    def __init__(self, ctx: _Context, owner: NDArray[np.intp]) -> None:
        super().__init__(ctx.est)
        self.ctx = ctx
        self.owner = owner

    def summarise_classes(
        self, bounds: NDArray[np.intp], class_rows: Callable[[int, int, int, Any], Any]
    ) -> PassMoments:
        """The pass's moments from ``class_rows(k, start, stop, which)`` of each class with rows.

        ``bounds``: each class's slice of the rows sorted by class; ``which``:
        the indices of class ``k``'s components. ``class_rows`` returns what
        :meth:`class_rows` returns for the class's rows.
        """
        K = self.ctx.classes.size
        starts = np.searchsorted(self.owner, np.arange(K + 1))
        present = [k for k in range(K) if bounds[k + 1] > bounds[k]]
        results = [
            class_rows(k, int(bounds[k]), int(bounds[k + 1]), np.arange(starts[k], starts[k + 1]))
            for k in present
        ]
        return assemble(self.owner, self.ctx.proj.n_dims, K, present, results)

    @staticmethod
    def worst_of_class(
        ll_rows: _F, w: _F, k: int, C: int, rows_of: Callable[[Any], _F]
    ) -> tuple[NDArray[np.intp], _F, _F]:
        """Class ``k``'s ``C`` worst-explained rows of positive weight (``rows_of(pos)``: their rows)."""
        return worst_of_class(ll_rows, w, k, C, rows_of)

    def summarise(self, rows: _Rows, classes: Any = None) -> PassMoments:
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
        return assemble(owner, d, K, present, results)

    def class_rows(self, Z: _F, w: _F, k: int, which: NDArray[np.intp]) -> tuple[Any, ...]:
        raise NotImplementedError


class _Assign(_ComponentPass):
    """The seeding pass: every row to its class's nearest k-means++ seed (hard responsibilities)."""

    em_pass = "assign"

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

    em_pass = "estep"

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
        worst = worst_of_class(ll_rows, w, k, which.size, lambda pos: Z[pos])
        return (out, ll_total, *worst)


def assemble(
    owner: NDArray[np.intp], d: int, K: int, present: list[int], results: list[tuple[Any, ...]]
) -> PassMoments:
    """A pass's :class:`PassMoments` from each present class's ``class_rows`` result.

    ``results[i]`` is ``(moments, log-likelihood[, worst owner, ll, rows])``
    of class ``present[i]`` (the in-memory pass's and the array API backend's).
    """
    starts = np.searchsorted(owner, np.arange(K + 1))
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


def worst_of_class(
    ll_rows: _F, w: _F, k: int, C: int, rows_of: Any
) -> tuple[NDArray[np.intp], _F, _F]:
    """Class ``k``'s ``C`` worst-explained rows of positive weight (``rows_of(pos)``: their rows)."""
    pos = np.flatnonzero(w > 0)
    if pos.size > C:
        cut = np.partition(ll_rows[pos], C - 1)[C - 1]
        pos = pos[ll_rows[pos] <= cut]  # ties at the cut stay: worst_rows orders them
    limit = np.zeros(k + 1, dtype=np.intp)
    limit[k] = C
    return worst_rows(np.full(pos.size, k, dtype=np.intp), ll_rows[pos], rows_of(pos), limit)


def _kmeanspp_seeds(Z: _F, w: _F, C: int, seed: int, d: int) -> _F:
    """``C`` greedy k-means++ seeds among the rows ``Z`` (weighted), (C, d).

    Each seed after the first is the best of ``2 + floor(log C)`` rows drawn
    with probability proportional to weight times squared distance to the
    seeds so far: the one that lowers the weighted sum of squared distances
    most (Arthur and Vassilvitskii's greedy variant, as scikit-learn's
    ``KMeans``), which starts EM nearer a good optimum than one draw.
    Draws use the cumulative weights, so a row of integer weight ``w`` is
    chosen as often as ``w`` copies of it would be.
    """
    n = Z.shape[0]
    if n == 0:
        return np.zeros((C, d))
    rng = np.random.default_rng(seed)
    sq = np.einsum("nd,nd->n", Z, Z)
    trials = 2 + int(np.log(max(C, 1)))

    def draw(p: _F, size: int) -> NDArray[np.intp]:
        cum = np.cumsum(p)
        if not cum[-1] > 0:
            cum = np.cumsum(w)
        at = np.searchsorted(cum, rng.random(size) * cum[-1], side="right")
        return np.minimum(at, n - 1).astype(np.intp)

    first = int(draw(w, 1)[0])
    centres = [first]
    d2 = np.maximum(sq - 2.0 * Z @ Z[first] + sq[first], 0.0)
    for _ in range(1, C):
        cand = draw(w * d2, trials)
        dist = np.maximum(sq[:, None] - 2.0 * Z @ Z[cand].T + sq[cand], 0.0)
        new = np.minimum(d2[:, None], dist)
        best = int(np.argmin(w @ new))
        centres.append(int(cand[best]))
        d2 = new[:, best]
    return np.ascontiguousarray(Z[centres])

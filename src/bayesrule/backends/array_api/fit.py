"""Fitting from device arrays: the statistics' products where the data live, the rest on host.

The estimator drives its fit through the public seam, as for every engine:
``est.fit_plan(reduce, first_block=..., classes=...)`` calls ``reduce(task)``
once per pass. This module's ``reduce`` computes the one-pass statistics of
the Gaussian and count models in the input's namespace on its device
(:func:`device_statistics`: one-hot class weights, class sums, centred
scatter per class, per-feature second moments, feature ranges) and brings
only the result, ``K x p x p`` numbers at most, to the host as the same
statistic the NumPy path builds. Passes it has no device code for (mixture
discriminant analysis' EM passes and RDA-CV's search have device code of
their own (:mod:`.mda`, :mod:`.rda_cv`); data with NaN as missing values,
or not finite, summarise one host copy of the data, made once per fit, with
the task's own ``statistics`` (and its checks and messages).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._util.validation import check_labels, check_sample_weight
from ...estimators import EstimatorSummariser, Schema
from ...stats import CountStats, DiagonalStats, FourthMomentStats, ScatterStats, as_classes
from .arrays import namespace_and_device, to_host, where
from .mda import DeviceRows, is_em_pass, summarise
from .rda_cv import is_search, search

__all__ = ["BLOCK_ROWS", "FLOAT32_PRODUCTS", "collection_statistics", "device_statistics"]

#: rows of one block of products (float32 products are summed in float64 per block)
BLOCK_ROWS = 1 << 15

#: float32 X: the scatter's products in float32 (summed in float64 per block of
#: rows) rather than in float64. Off: on 6 000 MNIST rows float32 products moved
#: LDA's rank decision (660 directions instead of 655) and changed predictions;
#: see docs/gpu.md for the measurements
FLOAT32_PRODUCTS = False

_DEVICE = (ScatterStats, FourthMomentStats, DiagonalStats, CountStats)


def _float_dtype(xp: Any, dev: Any) -> Any:
    """float64 where the device has it (accumulation), else float32."""
    try:
        xp.zeros(1, dtype=xp.float64, device=dev)
        return xp.float64
    except Exception:  # pragma: no cover - devices without float64 (Apple MPS)
        return xp.float32


def checked_X(est: Any, X: Any, xp: Any, dev: Any, *, counts: bool) -> Any:
    """X as a 2-D float array of its namespace; a clear error for another shape or dtype."""
    name = type(est).__name__
    if X.ndim != 2:
        raise ValueError(
            f"X must be 2-dimensional (n_samples, n_features); got an array of shape "
            f"{tuple(X.shape)} ({where(xp, dev)})."
        )
    dt = X.dtype
    if dt in (xp.float32, xp.float64):
        return X
    integral = dt in (xp.int8, xp.int16, xp.int32, xp.int64, xp.uint8, xp.bool)
    if counts and integral:  # counts and binary data: integers mean what they say
        return xp.astype(X, _float_dtype(xp, dev))
    raise TypeError(
        f"{name} takes float32 or float64 X on {where(xp, dev)}; got dtype {dt}. "
        + ("Convert it with X.to(torch.float64) or xp.astype(X, xp.float64)." if integral else "")
    )


def _onehot(xp: Any, codes: Any, w: Any, K: int, dt: Any) -> Any:
    """(n, K) one-hot class matrix holding each row's weight."""
    ks = xp.arange(K, dtype=codes.dtype, device=codes.device)
    return xp.astype(codes[:, None] == ks[None, :], dt) * w[:, None]


def _ranges(xp: Any, X: Any, pos: Any, dt: Any) -> tuple[Any, Any]:
    """The smallest and largest value of each feature over the rows of positive weight."""
    inf = xp.asarray(np.inf, dtype=X.dtype, device=X.device)
    lo = xp.min(xp.where(pos[:, None], X, inf), axis=0)
    hi = xp.max(xp.where(pos[:, None], X, -inf), axis=0)
    return xp.astype(lo, dt), xp.astype(hi, dt)


def _blocks(n: int) -> list[tuple[int, int]]:
    return [(a, min(a + BLOCK_ROWS, n)) for a in range(0, n, BLOCK_ROWS)]


def device_statistics(stat: Any, X: Any, codes: Any, w: Any, classes: Any, xp: Any) -> Any:
    """The statistic ``stat`` of one block on X's device, returned as host (NumPy) values.

    ``codes`` are the rows' class positions and ``w`` their weights, both on
    X's device. Sums are float64 (where the device has it); a float32 ``X``
    is cast to float64 block by block (with :data:`FLOAT32_PRODUCTS`, centred
    and multiplied in float32, each block's product added in float64), and
    the rounding of the centring is removed exactly afterwards
    (Chan-Golub-LeVeque: ``S - W d d'``).
    """
    K, (n, p) = int(classes.size), X.shape
    acc = _float_dtype(xp, X.device)
    lo = xp.full(p, np.inf, dtype=acc, device=X.device)
    hi = xp.full(p, -np.inf, dtype=acc, device=X.device)
    W = xp.zeros(K, dtype=acc, device=X.device)
    counts = xp.zeros(K, dtype=acc, device=X.device)
    sums = xp.zeros((K, p), dtype=acc, device=X.device)
    for a, b in _blocks(n):
        Xb, wb = xp.astype(X[a:b, :], acc, copy=False), w[a:b]
        H = _onehot(xp, codes[a:b], wb, K, acc)
        W += xp.sum(H, axis=0)
        counts += xp.sum(xp.astype(H > 0, acc), axis=0)
        sums += H.T @ Xb
        blo, bhi = _ranges(xp, Xb, wb > 0, acc)
        lo, hi = xp.minimum(lo, blo), xp.maximum(hi, bhi)
    host = {k: to_host(v) for k, v in {"W": W, "counts": counts, "lo": lo, "hi": hi}.items()}
    weights, lower, upper = host["W"], host["lo"], host["hi"]
    common = dict(classes=classes, counts=np.rint(host["counts"]).astype(np.int64))
    common.update(weights=weights)
    bounds = dict(lower=lower, upper=upper)
    if stat is CountStats:
        V = np.repeat(weights[:, None], p, axis=1)
        return CountStats(**common, feature_weights=V, sums=to_host(sums), **bounds)
    safe = xp.where(W > 0, W, xp.ones_like(W))
    means = sums / safe[:, None]
    if stat is DiagonalStats:
        m2 = xp.zeros((K, p), dtype=acc, device=X.device)
        s1 = xp.zeros((K, p), dtype=acc, device=X.device)
        for a, b in _blocks(n):
            R = xp.astype(X[a:b, :], acc, copy=False) - xp.take(means, codes[a:b], axis=0)
            H = _onehot(xp, codes[a:b], w[a:b], K, acc)
            s1 += H.T @ R
            m2 += H.T @ (R * R)
        d = s1 / safe[:, None]
        m2 = m2 - s1 * d
        present = weights[:, None] > 0
        V = np.repeat(weights[:, None], p, axis=1)
        return DiagonalStats(
            **common,
            feature_weights=V,
            means=np.where(present, to_host(means + d), 0.0),
            m2=np.where(present, np.maximum(to_host(m2), 0.0), 0.0),
            **bounds,
        )
    return _scatter(xp, X, codes, w, means, weights, common, bounds, acc, stat is FourthMomentStats)


def _scatter(
    xp: Any,
    X: Any,
    codes: Any,
    w: Any,
    means: Any,
    weights: Any,
    common: Any,
    bounds: Any,
    acc: Any,
    fourth: bool = False,
) -> ScatterStats:
    """Per-class centred scatter and residual-norm moments: rows in class order, one GEMM a block.

    ``fourth``: also the entrywise third and fourth moments ``T = sum w r_j^2 r_l``
    and ``Q = sum w r_j^2 r_l^2`` (:class:`~bayesrule.stats.FourthMomentStats`,
    for Ledoit-Wolf's intensity): two more GEMMs a block, in float64.
    """
    K, p = int(weights.size), X.shape[1]
    order = xp.argsort(codes, stable=True)
    Xs, ws = xp.take(X, order, axis=0), xp.take(w, order)
    sizes = np.bincount(to_host(codes).astype(np.int64), minlength=K)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    # float32 data: centred and multiplied in float32, summed in float64
    low = X.dtype if FLOAT32_PRODUCTS else acc
    S = np.zeros((K, p, p))
    # T and Q: the fourth-moment parts (left zero without ``fourth``)
    T, Q = (
        np.zeros((K, p, p) if fourth else (K, 0, 0)),
        np.zeros((K, p, p) if fourth else (K, 0, 0)),
    )
    s1, m3, m4 = np.zeros((K, p)), np.zeros((K, p)), np.zeros(K)
    for k in range(K):
        if weights[k] <= 0:
            continue
        mk = means[k, :]
        Sk = xp.zeros((p, p), dtype=acc, device=X.device)
        s1k = xp.zeros(p, dtype=acc, device=X.device)
        m3k = xp.zeros(p, dtype=acc, device=X.device)
        m4k = xp.zeros((), dtype=acc, device=X.device)
        Tk = xp.zeros((p, p), dtype=acc, device=X.device) if fourth else None
        Qk = xp.zeros((p, p), dtype=acc, device=X.device) if fourth else None
        for a in range(int(starts[k]), int(starts[k + 1]), BLOCK_ROWS):
            b = min(a + BLOCK_ROWS, int(starts[k + 1]))
            R = xp.astype(Xs[a:b, :], low, copy=False) - xp.astype(mk, low, copy=False)
            wb = xp.astype(ws[a:b], low, copy=False)
            Sk += xp.astype((R * wb[:, None]).T @ R, acc)
            R64, w64 = xp.astype(R, acc, copy=False), ws[a:b]
            s1k += w64 @ R64
            r2 = xp.sum(R64 * R64, axis=1)
            m3k += (w64 * r2) @ R64
            m4k += xp.sum(w64 * r2 * r2)
            if fourth:
                R2w = R64 * R64 * w64[:, None]
                Tk += R2w.T @ R64
                Qk += R2w.T @ (R64 * R64)
        S[k], s1[k], m3[k], m4[k] = to_host(Sk), to_host(s1k), to_host(m3k), float(to_host(m4k))
        if fourth:
            T[k], Q[k] = to_host(Tk), to_host(Qk)
    safe = np.where(weights > 0, weights, 1.0)
    d = s1 / safe[:, None]
    # T and Q (as m3 and m4) are kept about the device's means: their residual
    # sum s1 is the rounding of the division (|d| ~ 1e-16 |mean|), which moves
    # T and Q by O(|d| S), far below the statistics' tolerances; the scatter,
    # whose pivots decide ranks, is re-centred exactly
    S -= weights[:, None, None] * d[:, :, None] * d[:, None, :]
    S = 0.5 * (S + np.swapaxes(S, 1, 2))
    present = weights > 0
    values = dict(
        **common,
        means=np.where(present[:, None], to_host(means) + d, 0.0),
        scatter=S,
        m3=np.where(present[:, None], m3, 0.0),
        m4=np.where(present, m4, 0.0),
        **bounds,
    )
    if fourth:
        keep = present[:, None, None]
        return FourthMomentStats(**values, t=np.where(keep, T, 0.0), q=np.where(keep, Q, 0.0))
    return ScatterStats(**values)


def _task_statistic(task: Any) -> Any:
    """The statistic a one-pass task computes, when this module can compute it on the device."""
    # the seam's one-pass task (``est.summariser()``): an unfitted copy of the
    # estimator whose ``statistics`` summarise a block; other passes' tasks
    # (MDA's EM) carry no estimator
    est: Any = getattr(task, "estimator", None)
    if not isinstance(task, EstimatorSummariser) or not hasattr(est, "input_spec"):
        return None
    stat = est.input_spec().statistic
    # the class's declared statistic too: RDA-CV's task returns its own
    # (CrossValidatedStats), built around the ScatterStats it names here; the
    # discriminant analyses' fourth moments (``moments``) extend their scatter
    declared = est.spec.statistic
    fourth = stat is FourthMomentStats and declared is ScatterStats
    return stat if stat in _DEVICE and (declared is stat or fourth) else None


def _prepared(est: Any, X: Any, xp: Any) -> Any:
    """X as the estimator's statistics see it: BernoulliNB's binarising, on the device."""
    threshold = est.get_params().get("binarize", None)
    if threshold is None:
        return X
    return xp.astype(X > threshold, X.dtype)


class _Data:
    """One fit's data: the device arrays, and a host copy made the first time a pass needs it."""

    def __init__(self, X: Any, y: Any, w: Any, xp: Any, dev: Any) -> None:
        self.X, self.y, self.w, self.xp, self.dev = X, y, w, xp, dev
        self._host: Any = None
        self._rows: DeviceRows | None = None

    def rows(self) -> DeviceRows:
        """The rows as mixture discriminant analysis' EM passes read them (made once)."""
        if self._rows is None:
            self._rows = DeviceRows(
                self.X, self.y, self.w, self.xp, _float_dtype(self.xp, self.dev)
            )
        return self._rows

    def host(self) -> Any:
        if self._host is None:
            self._host = to_host(self.X)
        return self._host


def reducer(data: _Data, classes: Any) -> Any:
    """The ``reduce(task)`` of a fit on device arrays (see the module's docstring)."""
    xp = data.xp

    def reduce(task: Any) -> Any:
        if is_em_pass(task):  # mixture discriminant analysis' per-row passes
            return task.finish(task.combine(None, summarise(task, data.rows())))
        est_ = getattr(task, "estimator", None)
        if isinstance(task, EstimatorSummariser) and is_search(est_):
            if bool(xp.all(xp.isfinite(data.X))):  # else the host's checks and messages
                acc = _float_dtype(xp, data.dev)
                found = search(est_, data.X, data.y, data.w, classes, xp, acc, device_statistics)
                return task.finish(task.combine(None, found))
        stat = _task_statistic(task)
        if stat is not None:
            est = task.estimator
            X = _prepared(est, data.X, xp)
            finite = bool(xp.all(xp.isfinite(data.X)))  # before binarising hides a NaN
            positive = not est.input_spec().positive or bool(xp.all(X >= 0))
            if finite and positive:
                pos = np.searchsorted(classes, data.y)
                codes = xp.asarray(pos.astype(np.int64), device=data.dev)
                w = xp.asarray(data.w, dtype=_float_dtype(xp, data.dev), device=data.dev)
                return task.finish(
                    task.combine(None, device_statistics(stat, X, codes, w, classes, xp))
                )
        # no device code for this pass (or NaN, infinity, negative counts: the
        # estimator's own checks and messages, on a host copy)
        return task.finish(
            task.combine(None, task.statistics(data.host(), data.y, data.w, classes))
        )

    return reduce


def collection_statistics(
    est: Any, X: Any, y: Any, sample_weight: Any, classes: Any, *, reset: bool
) -> tuple[Any, Any]:
    """The statistics of device arrays and X's schema: what ``fit`` and its kin install.

    ``y`` and ``sample_weight`` may be NumPy arrays or arrays of X's
    namespace and device; labels come to the host (n numbers), the data stay.
    """
    from sklearn.base import clone

    name = type(est).__name__
    xp, dev = namespace_and_device(X, y, sample_weight)
    if y is None:
        raise ValueError(f"{name} requires y to be passed, but the target y is None.")
    spec = est.input_spec()
    X = checked_X(est, X, xp, dev, counts=spec.positive or "binarize" in est.get_params())
    n, p = int(X.shape[0]), int(X.shape[1])
    if not reset and p != est.n_features_in_:
        raise ValueError(
            f"X has {p} features, but {name} is expecting {est.n_features_in_} features as input."
        )
    y_host = np.asarray(to_host(y))
    if y_host.ndim == 2 and y_host.shape[1] == 1:
        y_host = y_host.ravel()
    if y_host.ndim != 1 or y_host.shape[0] != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: X has {n} rows, y has "
            f"shape {y_host.shape}."
        )
    check_labels(y_host)
    w_host = check_sample_weight(to_host(sample_weight), n)
    if classes is not None:
        classes = np.asarray(to_host(classes))
        check_labels(classes, "classes")
    c = as_classes(y_host if classes is None else classes)
    missing = np.setdiff1d(y_host, c)
    if missing.size:
        raise ValueError(f"y holds labels {missing.tolist()} that are not in classes {c.tolist()}.")
    planner = clone(est) if reset else est
    data = _Data(X, y_host, w_host, xp, dev)
    dtype = np.float32 if X.dtype == xp.float32 else np.float64
    first = np.empty((0, p), dtype=dtype)
    stats = planner.fit_plan(reducer(data, c), first_block=first, classes=c)
    return stats, Schema(p, None, np.dtype(dtype))

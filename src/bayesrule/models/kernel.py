"""Product kernel density estimates: the class model of kernel naive Bayes."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ..stats import class_label
from ._bandwidth import (
    bandwidths,
    check_bandwidth_resolution,
)
from ._checks import check_observed, feature_name
from ._family import KernelFamily, KernelOptions
from ._terms import scale_rows
from ._types import Floats as _F

__all__ = ["CV_FACTORS", "KernelDensity", "auto_method", "split_far"]

_HALF_LOG_2PI = 0.5 * float(np.log(2.0 * np.pi))
#: entries of (classes x rows x values) evaluated at once by the exact method
_BLOCK = 1 << 22
#: bandwidth multipliers of Scott's rule tried by likelihood cross-validation
CV_FACTORS = np.geomspace(0.25, 4.0, 9)
_MAX = float(np.finfo(np.float64).max)
#: kernel terms that building the grid costs per class, feature and grid point
#: (the kernel sampled, two FFTs, the bound at the ends): about 150 ns, against
#: 15 to 30 ns for one term of the exact sum (measured, 200 to 20000 rows)
_GRID_TERMS = 8
#: rows for which the exact sum costs, at most, what building the grid costs
_EXACT_ROWS = 16
#: kernel terms, per grid point, that one row may cost on the exact path
_ROW_TERMS = 64


def auto_method(n_classes: int, n_values: int, n_features: int, grid_size: int) -> str:
    """The path, 'exact' or 'grid', that ``method='auto'`` takes for a model of these sizes.

    Predicting a row exactly costs one kernel term per class and stored
    value, ``n_classes * n_values``; the grid costs about ``_GRID_TERMS``
    (8) terms per class, feature and grid point once, when it is built, and
    about 2 per class and entry after. 'auto' is exact when both

    * a batch of ``_EXACT_ROWS`` (16) rows costs no more exactly than
      building the grid: ``16 n_values <= 8 n_features grid_size``, that is
      when the features hold at most ``grid_size / 2`` stored values on
      average (512 by default), whatever the number of classes, and
    * a row costs at most ``_ROW_TERMS * grid_size`` terms (65536 by
      default, the rule 'auto' had alone before; 1 to 2 ms).

    The choice is the model's, made once from its sizes, not each batch's:
    the two paths differ by about 1e-4 of the log density, and a row's
    prediction must not depend on the rows predicted with it (one at a time,
    in the blocks of a stream or the partitions of a cluster, or all at
    once). Beyond 16 rows the grid is the faster path, by up to about
    ``n_values / (2 n_features)`` times for a large batch; the exact path is
    kept below 512 values per feature for its exactness, while it costs at
    most about 10 microseconds per class, feature and row. A model of many
    values per feature with few features (the few kernel columns of a
    :class:`~bayesrule.MixedNB`) takes the grid, which the second condition
    alone would not: 2 classes and 4 features of 2000 values each predicted
    15000 rows in 4 to 6 s exactly and take 0.01 to 0.03 s on the grid.

    Parameters
    ----------
    n_classes, n_values, n_features, grid_size : int
        The rows of ``weights`` (classes), the stored values of all
        features, the features and the grid points per feature.

    Returns
    -------
    str
    """
    per_row = n_classes * n_values
    if per_row > _ROW_TERMS * grid_size:
        return "grid"
    exact = _EXACT_ROWS * per_row
    grid = _GRID_TERMS * n_classes * n_features * grid_size
    return "exact" if exact <= grid else "grid"


def _cv_bandwidths(indptr: Any, values: _F, W: _F, h_scott: _F, floor: _F, **kde: Any) -> _F:
    """Per present class and feature, the multiple of ``h_scott`` of largest leave-one-out likelihood.

    The leave-one-out density at a stored value ``v`` of weight ``w`` in a
    class of weight ``V`` removes one unit of weight there:
    ``f_-(v) = (V f(v) - phi_h(0)) / (V - 1)``; the score is
    ``sum_u w_u log f_-(v_u)``. ``W`` holds the weights of the values per
    row (class), ``h_scott`` and ``floor`` are per row and feature. Returns
    shape (n_rows, n_features).

    With ``method='auto'`` the densities are exact while a row costs at most
    ``64 * grid_size`` kernel terms, whatever the values per feature (the
    second condition of :func:`auto_method` does not apply): subtracting
    ``phi_h(0)`` leaves, at an isolated value, a small remainder that the
    grid's binning of the value itself would swamp.
    """
    if kde.get("method", "auto") == "auto":
        per_row = W.shape[0] * np.size(values)
        fits = per_row <= _ROW_TERMS * kde.get("grid_size", 1024)
        kde = {**kde, "method": "exact" if fits else "grid"}
    p = len(indptr) - 1
    counts = np.diff(indptr)
    U = int(counts.max(initial=0))
    rows = np.arange(values.size) - np.repeat(indptr[:-1], counts)
    feature = np.repeat(np.arange(p), counts)
    Xv = np.full((U, p), np.nan)
    Xv[rows, feature] = values
    Wv = np.zeros((W.shape[0], U, p))
    Wv[:, rows, feature] = W
    V = Wv.sum(axis=1)  # (K, p)
    best = np.full(V.shape, -np.inf)
    choice = h_scott.copy()
    for c in CV_FACTORS:
        h = np.maximum(c * h_scott, floor)
        model = KernelDensity(indptr, values, W, h, **kde)
        logf = np.nan_to_num(model.feature_log_prob(Xv), nan=-np.inf)  # (K, U, p)
        self_term = 1.0 / (h * np.sqrt(2.0 * np.pi))
        with np.errstate(divide="ignore", invalid="ignore"):
            loo = (V[:, None, :] * np.exp(logf) - self_term[:, None, :]) / (V[:, None, :] - 1.0)
            score = np.where(Wv > 0, Wv * np.log(np.maximum(loo, 0.0)), 0.0).sum(axis=1)
        score = np.where(V > 1, score, -np.inf)
        better = score > best
        best = np.where(better, score, best)
        choice = np.where(better, h, choice)
    return np.asarray(choice)


def split_far(F: _F, X: _F) -> tuple[_F, NDArray[np.bool_]]:
    """Per row and class, the log density summed over the entries every class resolves.

    ``F`` holds the log densities of each entry of ``X``, shape (K, n, p).
    Returns that sum over the entries that are neither missing (NaN, left
    out) nor far, shape (n, K), and ``far`` (n, p): the observed entries whose
    density underflows for some class, which the caller expands on a scale.
    """
    missing = np.isnan(X)
    far = np.any(~np.isfinite(F), axis=0) & ~missing
    exact = np.where(far[None] | missing[None], 0.0, F).sum(axis=2).T
    return exact, far


class KernelDensity(KernelFamily):
    r"""Independent features, each with a weighted Gaussian kernel density (Parzen).

    For class ``k`` and feature ``j``,
    ``f_kj(x) = sum_u w_ku phi((x - v_u) / h_kj) / (h_kj sum_u w_ku)`` over the
    distinct values ``v_u`` of feature ``j``. The values are stored like a CSR
    matrix (as in :class:`bayesrule.stats.ValueCountStats`).

    Parameters
    ----------
    indptr : array-like of shape (n_features + 1,)
    values : array-like of shape (n_values,)
    weights : array-like of shape (n_values,) or (n_classes, n_values)
        Non-negative weights; each class must have positive weight on every feature.
    bandwidth : array-like of shape (n_features,) or (n_classes, n_features)
        Positive kernel standard deviations.
    method : {'auto', 'exact', 'grid'}, default='auto'
        'exact' sums over every stored value. 'grid' bins the values of each
        feature linearly onto ``grid_size`` points, convolves them with the
        kernel by FFT and interpolates the log density linearly; beyond the
        grid (and where the density underflows) it uses the lower bound given
        by the nearest extreme value alone. 'auto' weighs what predicting
        costs on each path (see :func:`auto_method`): it is exact when the
        features hold at most ``grid_size / 2`` stored values on average and
        the classes at most ``64 * grid_size`` in all, and takes the grid
        otherwise. The choice is made once, for the model, so that a row's
        prediction never depends on the rows predicted with it.
    grid_size : int, default=1024

    ``log_prob`` drops the term of a NaN (missing) entry: it integrates to 1.

    References
    ----------
    E. Parzen, "On estimation of a probability density function and mode",
    Annals of Mathematical Statistics 33(3), 1962. B. W. Silverman,
    "Algorithm AS 176: kernel density estimation using the fast Fourier
    transform", Applied Statistics 31(1), 1982.
    """

    def __init__(
        self,
        indptr: ArrayLike,
        values: ArrayLike,
        weights: ArrayLike,
        bandwidth: ArrayLike,
        *,
        method: str = "auto",
        grid_size: int = 1024,
    ) -> None:
        self.indptr = np.asarray(indptr, dtype=np.intp)
        self.values = np.asarray(values, dtype=float)
        w = np.asarray(weights, dtype=float)
        self._single = w.ndim == 1
        self.weights = np.atleast_2d(w)
        K, p = self.weights.shape[0], self.indptr.size - 1
        self.bandwidth = np.broadcast_to(np.asarray(bandwidth, dtype=float), (K, p)).copy()
        if np.any(~(self.bandwidth > 0)):
            raise ValueError("bandwidth of a KernelDensity must be positive.")
        self.feature = np.repeat(np.arange(p), np.diff(self.indptr))
        F = sp.csr_matrix(
            (np.ones(self.values.size), (np.arange(self.values.size), self.feature)),
            shape=(self.values.size, p),
        )
        self.feature_weights = np.asarray(self.weights @ F)
        if np.any(~(self.feature_weights > 0)):
            k, j = (int(v[0]) for v in np.nonzero(~(self.feature_weights > 0)))
            raise ValueError(f"feature {j} has no weight in class {k}: its density is undefined.")
        with np.errstate(divide="ignore"):
            self._log_w = np.log(self.weights / self.feature_weights[:, self.feature])
        self.grid_size = int(grid_size)
        if method == "auto":
            # fixed for the model, not chosen per batch: the two paths differ slightly
            method = auto_method(K, self.values.size, p, self.grid_size)
        if method not in ("exact", "grid"):
            raise ValueError(f"method must be 'auto', 'exact' or 'grid'; got {method!r}.")
        self.method = method
        self._extremes()
        if method == "grid":
            self._build_grid()

    @classmethod
    def _kernels(cls, stats: Any, options: KernelOptions) -> KernelDensity:
        """Each present class's density of its values, with bandwidths by the checked rule."""
        present, b, floor, kde, bandwidth, feature_names = options
        h, V, h_scott, lower = bandwidths(stats.moments(), b, floor)
        check_observed(V, present, stats.classes, feature_names)
        if isinstance(b, str) and b == "cv":
            # the multiples of Scott's bandwidth may go down to the floor, not just to Scott's
            W = stats.value_weights[present]
            h_present = _cv_bandwidths(
                stats.indptr, stats.values, W, h_scott[present], lower[present], **kde
            )
        else:
            h_present = h[present]
        if not np.all(np.isfinite(h_present)):
            k, j = (int(v[0]) for v in np.nonzero(~np.isfinite(h_present)))
            raise ValueError(
                f"the kernel bandwidth of feature {feature_name(feature_names, j)!r} in class "
                f"{class_label(stats.classes[present], k)!r} is not finite: the feature's values are "
                "so large that their squared deviations overflow float64; rescale X or give "
                "bandwidth as a number."
            )
        check_bandwidth_resolution(h_present, stats.indptr, stats.values, feature_names, bandwidth)
        return cls(stats.indptr, stats.values, stats.value_weights[present], h_present, **kde)

    # ---------------------------------------------------------------- tails
    def _extremes(self) -> None:
        """Per class and feature, the smallest and largest value with weight, and its log weight."""
        K, p = self.bandwidth.shape
        has = self.weights > 0
        big = np.where(has, self.values, np.inf)
        small = np.where(has, self.values, -np.inf)
        starts = self.indptr[:-1]
        self._lo = (
            np.minimum.reduceat(big, starts, axis=1) if self.values.size else np.zeros((K, p))
        )
        self._hi = (
            np.maximum.reduceat(small, starts, axis=1) if self.values.size else np.zeros((K, p))
        )
        # log weight of the extreme values themselves (values are sorted per feature)
        idx_lo = np.where(has, np.arange(self.values.size), self.values.size)
        first = np.minimum.reduceat(idx_lo, starts, axis=1)
        idx_hi = np.where(has, np.arange(self.values.size), -1)
        last = np.maximum.reduceat(idx_hi, starts, axis=1)
        rows = np.arange(K)[:, None]
        self._lw_lo = self._log_w[rows, first]
        self._lw_hi = self._log_w[rows, last]

    def _tail(self, x: _F, kslice: Any = slice(None)) -> _F:
        """Lower bound of ``log f_kj(x)`` from the extreme values alone; x is (..., p)."""
        h = self.bandwidth[kslice]
        norm = -np.log(h) - _HALF_LOG_2PI
        lo = (
            self._lw_lo[kslice][:, None] - 0.5 * ((x - self._lo[kslice][:, None]) / h[:, None]) ** 2
        )
        hi = (
            self._lw_hi[kslice][:, None] - 0.5 * ((x - self._hi[kslice][:, None]) / h[:, None]) ** 2
        )
        return np.maximum(lo, hi) + norm[:, None]

    # ----------------------------------------------------------------- grid
    def _build_grid(self) -> None:
        K, p = self.bandwidth.shape
        G = self.grid_size
        hmax = self.bandwidth.max(axis=0)
        vmin = np.minimum.reduceat(self.values, self.indptr[:-1])
        vmax = np.maximum.reduceat(self.values, self.indptr[:-1])
        self._g0 = vmin - 5.0 * hmax
        self._step = (vmax + 5.0 * hmax - self._g0) / (G - 1)
        # linear binning: each value splits its weight between its two grid points
        pos = (self.values - self._g0[self.feature]) / self._step[self.feature]
        i0 = np.clip(np.floor(pos).astype(np.intp), 0, G - 2)
        frac = pos - i0
        U = self.values.size
        cols = np.concatenate([self.feature * G + i0, self.feature * G + i0 + 1])
        B = sp.csr_matrix(
            (np.concatenate([1.0 - frac, frac]), (np.tile(np.arange(U), 2), cols)),
            shape=(U, p * G),
        )
        mass = np.asarray(np.exp(self._log_w) @ B).reshape(K, p, G)
        # the kernel sampled on the grid and normalised to unit mass, so that even
        # a kernel narrower than a grid step keeps the density integrating to 1
        L = 2 * G
        d = np.arange(L, dtype=float)
        d = np.minimum(d, L - d)
        z = d[None, None, :] * (self._step[None, :, None] / self.bandwidth[:, :, None])
        kern = np.exp(-0.5 * z * z)
        kern /= kern.sum(axis=2, keepdims=True)
        dens = np.fft.irfft(np.fft.rfft(mass, n=L) * np.fft.rfft(kern), n=L)[:, :, :G]
        dens /= self._step[None, :, None]
        grid = self._g0[:, None] + self._step[:, None] * np.arange(G)
        tail = self._tail(grid.T).transpose(0, 2, 1)  # (K, p, G)
        thr = 1e-10 * dens.max(axis=2, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            logd = np.where(dens > thr, np.log(np.where(dens > thr, dens, 1.0)), -np.inf)
        self._table = np.maximum(logd, tail).reshape(K, p * G)

    def _beyond_grid(self, X: _F) -> _F:
        """Extrapolate from the grid's end: every value's kernel decays as the nearest extreme's.

        ``log phi((x - v)/h) = log phi((e - v)/h) - (x - e)(e - v)/h^2 - (x - e)^2/(2h^2)``
        at the grid end ``e``, with ``v`` the class's extreme value: exact when
        the class's mass at the end comes from that value, and close otherwise.
        """
        K, p = self.bandwidth.shape
        G = self.grid_size
        T = self._table.reshape(K, p, G)
        h2 = (self.bandwidth**2)[:, None, :]
        e_lo, e_hi = self._g0, self._g0 + self._step * (G - 1)
        below = X < e_lo
        e = np.where(below, e_lo, e_hi)
        v = np.where(below[None], self._lo[:, None, :], self._hi[:, None, :])
        edge = np.where(below[None], T[:, None, :, 0], T[:, None, :, -1])
        dx = X - e
        return edge - (dx * (e - v) + 0.5 * dx * dx) / h2

    # -------------------------------------------------------------- density
    def feature_log_prob(self, X: ArrayLike) -> _F:
        """``log f_kj(x_ij)`` for every class, row and feature, shape (K, n, p); NaN stays NaN."""
        X = np.asarray(X, dtype=float)
        if self.method == "grid":
            return self._grid_feature_log_prob(X)
        return self._exact_feature_log_prob(X)

    def _exact_feature_log_prob(self, X: _F) -> _F:
        K, p = self.bandwidth.shape
        n = X.shape[0]
        out = np.empty((K, n, p))
        starts = self.indptr[:-1]
        h = self.bandwidth[:, self.feature]  # (K, U)
        norm = -np.log(self.bandwidth) - _HALF_LOG_2PI
        step = max(1, _BLOCK // max(K * self.values.size, 1))
        for s in range(0, n, step):
            Xb = np.nan_to_num(X[s : s + step])
            with np.errstate(over="ignore", invalid="ignore"):
                z = (Xb[:, self.feature][None] - self.values) / h[:, None, :]  # (K, b, U)
                terms = self._log_w[:, None, :] - 0.5 * z * z
                top = np.maximum.reduceat(terms, starts, axis=2)
                # far from every value the terms underflow to -inf: so does the density
                # (log_prob_terms gives its value), rather than -inf - -inf = NaN
                finite_top = np.where(np.isfinite(top), top, 0.0)
                shifted = np.exp(terms - finite_top[:, :, self.feature])
                with np.errstate(divide="ignore"):
                    dens = np.log(np.add.reduceat(shifted, starts, axis=2)) + finite_top
            out[:, s : s + step] = np.where(np.isfinite(top), dens, -np.inf)
        out += norm[:, None, :]
        out[:, np.isnan(X)] = np.nan
        return out

    def _grid_feature_log_prob(self, X: _F) -> _F:
        K, p = self.bandwidth.shape
        G = self.grid_size
        pos = (X - self._g0) / self._step
        inside = (pos >= 0) & (pos <= G - 1)
        posc = np.where(inside, pos, 0.0)
        i0 = np.minimum(np.floor(posc).astype(np.intp), G - 2)
        frac = posc - i0
        flat = np.arange(p) * G + i0
        a, b = self._table[:, flat], self._table[:, flat + 1]
        with np.errstate(invalid="ignore"):
            out = a + frac * (b - a)
            # -inf next to a finite grid value interpolates to -inf or NaN; use the finite one
            out = np.where(np.isfinite(a) & np.isfinite(b), out, np.maximum(a, b))
        if not inside.all():
            with np.errstate(over="ignore", invalid="ignore"):
                far = self._beyond_grid(np.nan_to_num(X))
                far = np.where(np.isnan(far), -np.inf, far)
            out = np.where(inside, out, far)
        out[:, np.isnan(X)] = np.nan
        return out

    def log_prob_terms(self, X: ArrayLike) -> list[tuple[_F, Any]]:
        """``log_prob`` as scaled terms that cannot overflow (see :mod:`bayesrule.models._terms`).

        Where a feature's density underflows for some class (an entry far
        from the class's values), every class's density of that entry is
        taken from the nearer of its extreme values ``v`` alone, as
        ``log w_v + norm - (x - v)^2 / (2 h^2)``, expanded about 0 with
        ``u = x 2^-E``: ``2^2E (-(u/h)^2 / 2) + 2^E (u/h)(v/h) - (v/h)^2 / 2``
        (so that classes with the same bandwidth are compared on ``v``).
        Elsewhere the density is exact.
        """
        X = np.asarray(X, dtype=float)
        exact, far = split_far(self.feature_log_prob(X), X)
        if not far.any():
            return [(exact, 0)]
        U, E = scale_rows(np.where(far, X, 0.0))
        upper = X[None] > 0.5 * (self._lo + self._hi)[:, None, :]  # (K, n, p)
        v = np.where(upper, self._hi[:, None, :], self._lo[:, None, :])
        lw = np.where(upper, self._lw_hi[:, None, :], self._lw_lo[:, None, :])
        h = self.bandwidth[:, None, :]
        norm = -np.log(h) - _HALF_LOG_2PI
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            uh = U[None] / h
            vh = v / h
            quad = np.where(far, -0.5 * uh * uh, 0.0).sum(axis=2).T
            lin = np.where(far, uh * vh, 0.0).sum(axis=2).T
            const = np.where(far, lw + norm - 0.5 * vh * vh, 0.0).sum(axis=2).T
        return [
            (np.where(np.isnan(quad), -np.inf, quad), 2 * E),
            (np.nan_to_num(lin, nan=0.0, posinf=_MAX, neginf=-_MAX), E),
            (np.where(np.isnan(const), -np.inf, const), 0),
            (exact, 0),
        ]

    def entry_log_prob(self, x: ArrayLike, feature: ArrayLike) -> _F:
        """``log f_kj(x)`` of single entries: value ``x[i]`` of feature ``feature[i]``, shape (K, m).

        What :meth:`feature_log_prob` gives, for scattered entries (those of a
        row that a point mass does not take, say) rather than whole rows.
        """
        x = np.asarray(x, dtype=float)
        j = np.asarray(feature, dtype=np.intp)
        K, p = self.bandwidth.shape
        if self.method == "exact":
            out = np.empty((K, x.size))
            order = np.argsort(j, kind="stable")
            bounds = np.searchsorted(j[order], np.arange(p + 1))
            for f in np.flatnonzero(np.diff(bounds)):
                idx = order[bounds[f] : bounds[f + 1]]
                sl = slice(self.indptr[f], self.indptr[f + 1])
                z = (x[idx][None, :, None] - self.values[sl]) / self.bandwidth[:, f, None, None]
                terms = self._log_w[:, None, sl] - 0.5 * z * z
                top = terms.max(axis=2)
                out[:, idx] = np.log(np.exp(terms - top[:, :, None]).sum(axis=2)) + top
            return out - np.log(self.bandwidth[:, j]) - _HALF_LOG_2PI
        G = self.grid_size
        pos = (x - self._g0[j]) / self._step[j]
        inside = (pos >= 0) & (pos <= G - 1)
        posc = np.where(inside, pos, 0.0)
        i0 = np.minimum(np.floor(posc).astype(np.intp), G - 2)
        frac = posc - i0
        flat = j * G + i0
        a, b = self._table[:, flat], self._table[:, flat + 1]
        with np.errstate(invalid="ignore"):
            out = a + frac * (b - a)
            out = np.where(np.isfinite(a) & np.isfinite(b), out, np.maximum(a, b))
        if not inside.all():
            far = np.flatnonzero(~inside)
            out[:, far] = self._beyond_grid_entries(x[far], j[far])
        return np.asarray(out)

    def _beyond_grid_entries(self, x: _F, j: NDArray[np.intp]) -> _F:
        """:meth:`_beyond_grid` for single entries, shape (K, m)."""
        G = self.grid_size
        K, p = self.bandwidth.shape
        T = self._table.reshape(K, p, G)
        e_lo, e_hi = self._g0[j], self._g0[j] + self._step[j] * (G - 1)
        below = x < e_lo
        e = np.where(below, e_lo, e_hi)
        v = np.where(below, self._lo[:, j], self._hi[:, j])
        edge = np.where(below, T[:, j, 0], T[:, j, -1])
        dx = x - e
        return np.asarray(edge - (dx * (e - v) + 0.5 * dx * dx) / self.bandwidth[:, j] ** 2)

    def log_prob(self, X: ArrayLike, block_rows: int = 512) -> _F:
        """Log density of each row, shape (n,) or (n, n_classes); NaN entries are skipped."""
        X = np.asarray(X, dtype=float)
        K = self.bandwidth.shape[0]
        out = np.empty((X.shape[0], K))
        for s in range(0, X.shape[0], block_rows):
            out[s : s + block_rows] = np.nansum(
                self.feature_log_prob(X[s : s + block_rows]), axis=2
            ).T
        return out[:, 0] if self._single else out

    def __len__(self) -> int:
        return int(self.bandwidth.shape[0])

    def __getitem__(self, k: int) -> KernelDensity:
        return KernelDensity(
            self.indptr,
            self.values,
            self.weights[k],
            self.bandwidth[k],
            method=self.method,
            grid_size=self.grid_size,
        )

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        """Draw ``n`` rows from a single-class model: a stored value plus kernel noise."""
        w = self.weights[0]
        p = self.indptr.size - 1
        cum = np.cumsum(w)
        before = np.concatenate([[0.0], cum])[self.indptr[:-1]]
        target = before + rng.random((n, p)) * self.feature_weights[0]
        idx = np.searchsorted(cum, target, side="right")
        idx = np.clip(idx, self.indptr[:-1], self.indptr[1:] - 1)
        return self.values[idx] + self.bandwidth[0] * rng.standard_normal((n, p))

    def __repr__(self) -> str:
        K, p = self.bandwidth.shape
        return f"KernelDensity(n_classes={K}, n_features={p}, method={self.method!r})"

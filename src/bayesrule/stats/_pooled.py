"""Per-class weighted means with one pooled within-class scatter: LDA's statistic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._common import (
    BLOCK_VALUES,
    ClassStatistic,
    arrays_close,
    as_classes,
    noise_floor,
    one_hot_classes,
    pilot_means,
    prepare,
    symmetrized,
    syrk_add,
)

__all__ = ["PooledScatterStats"]

_F = NDArray[np.float64]


@dataclass(frozen=True, eq=False, repr=False)
class PooledScatterStats(ClassStatistic):
    r"""Per-class weights and means, and the pooled within-class scatter.

    ``scatter = sum_k sum_{i in k} w_i (x_i - m_k)(x_i - m_k)'``. This is all a
    shared-covariance model (LDA) needs; it takes ``K`` times less memory than
    :class:`ScatterStats` and is computed with one symmetric product per block
    of rows, in the rows' own order.

    Monoid laws as for :class:`ScatterStats`. Merging two values updates each
    class mean by the Chan-Golub-LeVeque rule and adds, for every class, the
    between-parts term ``(W_a W_b / W) d d'`` (``d`` the difference of the two
    parts' class means) to the scatter — one matrix product for all classes.

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
    counts : ndarray of shape (n_classes,), int64
    weights : ndarray of shape (n_classes,)
    means : ndarray of shape (n_classes, n_features)
    scatter : ndarray of shape (n_features, n_features)
    """

    classes: NDArray[Any]
    counts: NDArray[np.int64]
    weights: _F
    means: _F
    scatter: _F

    _per_class = ("counts", "weights", "means")

    @classmethod
    def empty(cls, classes: ArrayLike, n_features: int) -> PooledScatterStats:
        """The identity element."""
        c = as_classes(classes)
        k, p = c.size, int(n_features)
        return cls(
            classes=c,
            counts=np.zeros(k, dtype=np.int64),
            weights=np.zeros(k),
            means=np.zeros((k, p)),
            scatter=np.zeros((p, p)),
        )

    @classmethod
    def from_data(
        cls,
        X: Any,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        classes: ArrayLike | None = None,
    ) -> PooledScatterStats:
        """Statistics of one data set (see :meth:`ScatterStats.from_data`)."""
        X, c, yi, w, unit = prepare(X, y, sample_weight, classes)
        n, p = X.shape
        counts, weights, means = pilot_means(X, yi, w, c.size)
        k = c.size
        # When there are few classes, the per-class residual sums ride along in
        # the symmetric product: with the (weighted) one-hot columns H appended
        # to the centred block D, syrk([D H]) holds D'D and D'H together.
        fuse = k <= max(8, p // 8)
        q = p + k if fuse else p
        acc = np.zeros((q, q), order="F")
        s1 = np.zeros_like(means)
        step = max(64, BLOCK_VALUES // max(q, 1))
        buf = np.empty((min(step, n), q))
        for s in range(0, n, step):
            e = min(s + step, n)
            D = buf[: e - s]
            np.subtract(X[s:e], means[yi[s:e]], out=D[:, :p])
            if fuse:
                D[:, p:] = 0.0
                D[np.arange(e - s), p + yi[s:e]] = 1.0
            else:
                s1 += one_hot_classes(yi[s:e], w[s:e], k) @ D
            if not unit:
                D *= np.sqrt(w[s:e])[:, None]
            syrk_add(D, acc)
        full = symmetrized(acc)
        if fuse:
            s1 = full[p:, :p]
        scatter = full[:p, :p]
        # Remove the rounding error of the first-pass means exactly:
        # S = S_about_m - sum_k W_k d_k d_k' with d_k = s1_k / W_k.
        d = s1 / np.where(weights > 0, weights, 1.0)[:, None]
        scatter = scatter - (d * weights[:, None]).T @ d
        means = np.where(weights[:, None] > 0, means + d, 0.0)  # no weight: the empty statistic
        return cls(classes=c, counts=counts, weights=weights, means=means, scatter=scatter)

    def _merge_aligned(self, other: PooledScatterStats) -> PooledScatterStats:
        a, b, c = self, other, self.classes
        W = a.weights + b.weights
        safe = np.where(W > 0, W, 1.0)
        delta = b.means - a.means
        mean = a.means + delta * (b.weights / safe)[:, None]
        scaled = delta * np.sqrt(a.weights * b.weights / safe)[:, None]
        return PooledScatterStats(
            classes=c,
            counts=a.counts + b.counts,
            weights=W,
            means=mean,
            scatter=a.scatter + b.scatter + scaled.T @ scaled,
        )

    @property
    def n_features(self) -> int:
        return int(self.means.shape[1])

    def pooled_scatter(self) -> _F:
        """Within-class scatter, shape (p, p)."""
        return self.scatter

    def pooled_covariance(self, ddof: float = 1.0) -> _F:
        """Pooled within-class covariance ``S_w / (W - ddof * K)`` (K: classes with weight)."""
        k = int(np.count_nonzero(self.weights > 0))
        denom = self.weights.sum() - ddof * k
        if denom <= 0:
            raise ValueError(
                f"the pooled covariance needs more weight than classes: total weight "
                f"{self.weights.sum():g} with {k} classes."
            )
        return self.scatter / denom

    def allclose(self, other: PooledScatterStats, rtol: float = 1e-10, atol: float = 0.0) -> bool:
        """Whether two statistics agree to ``rtol`` (relative to each array's largest entry)."""
        return (
            np.array_equal(self.classes, other.classes)
            and np.array_equal(self.counts, other.counts)
            and arrays_close(self.weights, other.weights, rtol, atol)
            and arrays_close(self.means, other.means, rtol, atol)
            and arrays_close(
                self.scatter, other.scatter, rtol, atol, noise_floor(self.weights, self.means, 2)
            )
        )

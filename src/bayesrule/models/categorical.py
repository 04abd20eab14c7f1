"""Independent categorical features: the class model of categorical naive Bayes."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._util.parallel import in_parallel, prediction_threads
from ._checks import check_observed
from ._family import SmoothedFamily, Smoothing
from ._types import Floats as _F

__all__ = ["Categorical", "categorical_tables", "check_min_categories", "gather_sum"]


def check_min_categories(min_categories: Any, n_features: int) -> Any:
    """None, or ``min_categories`` as an int array of shape () or (n_features,), each >= 1."""
    if min_categories is None:
        return None
    mc = np.asarray(min_categories)
    if mc.ndim > 1 or (mc.ndim == 1 and mc.shape[0] != n_features):
        raise ValueError(
            # scikit-learn's wording first
            f"'min_categories' should have shape ({n_features},) when an array-like is "
            f"provided. Got {mc.shape} instead. min_categories must be an int or one int per "
            f"feature ({n_features} features)."
        )
    if not np.issubdtype(mc.dtype, np.integer):
        raise ValueError(
            f"'min_categories' should have integral type. Got {mc.dtype} instead. "
            f"min_categories must be positive integers; got {mc.tolist()}."
        )
    if np.any(mc < 1):
        raise ValueError(f"min_categories must be positive integers; got {mc.tolist()}.")
    return mc.astype(np.int64)


def categorical_tables(
    stats: Any, alpha: Any, min_categories: Any = None
) -> tuple[NDArray[np.int64], _F, _F]:
    """``(n_categories, log_probs, log_unseen)``: smoothed category frequencies of every class.

    ``stats`` is a :class:`bayesrule.stats.CategoryStats`. ``n_categories[j]``
    is one more than the largest code seen (or ``min_categories``);
    ``log_probs`` has shape (K, p, C) with every code at or beyond
    ``n_categories[j]`` given ``log_unseen[k, j] = log(alpha / (N_kj + alpha
    n_j))``, the smoothed probability of a category never seen.
    """
    cc = stats.category_counts
    K, p, C = cc.shape
    seen = cc.sum(axis=0) > 0  # (p, C)
    last = np.where(seen.any(axis=1), C - 1 - np.argmax(seen[:, ::-1], axis=1), -1)
    n_cat = (last + 1).astype(np.int64)
    if min_categories is not None:
        n_cat = np.maximum(n_cat, np.broadcast_to(np.asarray(min_categories, dtype=np.int64), (p,)))
    Cmax = int(n_cat.max(initial=1))
    cc = np.pad(cc, ((0, 0), (0, 0), (0, max(Cmax - C, 0))))[:, :, :Cmax]
    a = np.broadcast_to(np.asarray(alpha, dtype=float), (p,))
    N = cc.sum(axis=2)
    denom = np.log(N + a * n_cat)
    with np.errstate(divide="ignore"):
        log_probs = np.log(cc + a[None, :, None]) - denom[:, :, None]
        log_unseen = np.log(np.broadcast_to(a, (K, p))) - denom
    beyond = np.arange(Cmax)[None, :] >= n_cat[:, None]
    log_probs = np.where(beyond[None], log_unseen[:, :, None], log_probs)
    return n_cat, log_probs, log_unseen


#: Table entries gathered per block of rows (2 MiB of float64): a block's
#: codes, indices and gathered entries stay in cache, none is made at full size.
GATHER_BLOCK = 2**18


def gather_sum(flat: _F, offsets: _F, n_codes: float, X: _F) -> _F:
    """``out[i] = sum_j flat[offsets[j] + min(X[i, j], n_codes)]``, shape (n, K).

    ``flat`` (shape (rows, K)) holds each feature's table at ``offsets[j]``:
    ``n_codes`` known codes and then the unseen code's entry, and a last row of
    zeros read by NaN (missing) entries. ``X`` holds non-negative integer codes
    (or NaN), as floats; a negative code is a ValueError. Blocks of rows are gathered (``np.take``) and summed
    over the features in the features' order; they are shared among threads of
    ours (:func:`~bayesrule._util.parallel.prediction_threads`: a block never
    waits for another, so a busy core delays only its own). Every temporary
    has the size of a block.
    """
    n, p = X.shape
    K = flat.shape[1]
    out = np.empty((n, K))
    if n == 0:
        return out
    if p == 0:
        out.fill(0.0)
        return out
    missing = float(flat.shape[0] - 1)
    rows = max(1, GATHER_BLOCK // (p * K))
    work = float(n) * p * K
    threads = prediction_threads(work)
    # a few parts per thread, each of whole blocks: a thread that waits for
    # a core leaves the remaining parts to the others
    per_part = max(rows, -(-n // (4 * threads)) if threads > 1 else n)
    per_part = -(-per_part // rows) * rows
    starts = list(range(0, n, per_part))

    def part(start: int) -> None:
        stop = min(n, start + per_part)
        b = min(rows, stop - start)
        # feature-major buffers: the sum over the features then adds whole
        # (rows, K) slices, contiguous, in the features' order
        codes = np.empty(p * b)
        index = np.empty(p * b, dtype=np.intp)
        gathered = np.empty(p * b * K)
        for s in range(start, stop, rows):
            m = min(rows, stop - s)
            c, ix = codes[: p * m].reshape(p, m), index[: p * m].reshape(p, m)
            g = gathered[: p * m * K].reshape(p, m, K)
            np.minimum(X[s : s + m].T, n_codes, out=c)
            if c.min() >= 0:  # the common case: every entry a code (NaN fails)
                c += offsets[:, None]
            else:
                nan = np.isnan(c)
                with np.errstate(invalid="ignore"):
                    if np.any(c < 0):
                        # a negative code would read another feature's entries
                        raise ValueError(
                            "category codes must be non-negative; got "
                            f"{float(np.nanmin(c)):g} (rows {s}..{s + m - 1})."
                        )
                c += offsets[:, None]
                np.copyto(c, missing, where=nan)
            np.copyto(ix, c, casting="unsafe")
            # every index is in range (checked above): 'clip' spares the copy
            # that 'raise' makes of the output
            np.take(flat, ix, axis=0, out=g, mode="clip")
            np.sum(g, axis=0, out=out[s : s + m])

    in_parallel(part, starts, work, threads=threads)
    return out


class Categorical(SmoothedFamily):
    r"""``x_j ~ Categorical(probs_j)`` independently, for one or several classes.

    Parameters
    ----------
    log_probs : array-like of shape (n_features, n_categories) or
        (n_classes, n_features, n_categories)
        Log probabilities of the codes ``0 .. n_categories - 1`` (``-inf`` for
        padding of features with fewer categories).
    log_unseen : array-like of shape (n_features,) or (n_classes, n_features)
        Log probability given to a code at or beyond ``n_categories`` (a
        category never seen in training): the smoothed probability of an
        unseen category, instead of an error.
    n_categories : array-like of int of shape (n_features,), optional
        The number of categories of each feature; ``sample`` draws only codes
        below it (by default every code of ``log_probs``).

    ``log_prob`` gathers the table entries of all features and classes by
    blocks of rows (:func:`gather_sum`); NaN entries are missing.
    """

    def __init__(
        self, log_probs: ArrayLike, log_unseen: ArrayLike, n_categories: ArrayLike | None = None
    ) -> None:
        lp = np.asarray(log_probs, dtype=float)
        self._single = lp.ndim == 2
        self.log_probs = lp[None] if self._single else lp
        K, p, C = self.log_probs.shape
        self.n_categories = (
            np.full(p, C, dtype=np.int64)
            if n_categories is None
            else np.broadcast_to(np.asarray(n_categories, dtype=np.int64), (p,)).copy()
        )
        self.log_unseen = np.broadcast_to(np.asarray(log_unseen, dtype=float), (K, p)).copy()
        # one table row per (feature, code), an "unseen" code per feature, and
        # a last row of zeros that missing entries read (they add nothing)
        table = np.concatenate([self.log_probs, self.log_unseen[:, :, None]], axis=2)
        flat = np.zeros((p * (C + 1) + 1, K))
        flat[:-1] = table.reshape(K, p * (C + 1)).T
        self._flat = flat
        self._offsets = np.arange(p, dtype=np.float64) * (C + 1)

    #: the number of categories is checked before the observed features
    checks_observed = False

    @classmethod
    def _smoothed(cls, stats: Any, s: Smoothing, *, min_categories: Any = None) -> Categorical:
        """``p_kjc = (N_kjc + alpha) / (N_kj + alpha n_j)`` from ``CategoryStats``.

        ``min_categories`` (int or array-like of shape (n_features,), optional)
        is the minimum number of categories ``n_j`` of each feature.
        """
        mc = check_min_categories(min_categories, stats.n_features)
        check_observed(stats.feature_weights, s.present, stats.classes, s.names)
        n_cat, log_probs, log_unseen = categorical_tables(stats, s.alpha, mc)
        return cls(log_probs[s.present], log_unseen[s.present], n_cat)

    def log_prob(self, X: ArrayLike) -> _F:
        """Log probability of each row, shape (n,) or (n, n_classes).

        A gather and a sum per block of rows (:func:`gather_sum`), the blocks
        shared among threads; codes at or beyond ``n_categories`` read the
        unseen entry, NaN entries add nothing.
        """
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            X = np.atleast_2d(X)
        out = gather_sum(self._flat, self._offsets, float(self.log_probs.shape[2]), X)
        return out[:, 0] if self._single else out

    def log_prob_terms(self, X: ArrayLike) -> list[tuple[_F, Any]]:
        """``log_prob`` as one term: table entries never overflow (``-inf`` is a zero probability)."""
        return [(np.asarray(self.log_prob(X)).reshape(np.shape(X)[0], -1), 0)]

    def __len__(self) -> int:
        return int(self.log_probs.shape[0])

    def __getitem__(self, k: int) -> Categorical:
        return Categorical(self.log_probs[k], self.log_unseen[k], self.n_categories)

    def sample(self, n: int, rng: np.random.Generator) -> _F:
        """Draw ``n`` rows of codes from a single-class model (codes below ``n_categories``)."""
        C = self.log_probs.shape[2]
        # the codes past a feature's categories stand for unseen ones: never drawn
        real = np.arange(C)[None, :] < self.n_categories[:, None]
        cum = np.cumsum(np.where(real, np.exp(self.log_probs[0]), 0.0), axis=1)
        cum /= cum[:, -1:]
        u = rng.random((n, cum.shape[0]))
        return (u[:, :, None] > cum[None]).sum(axis=2).astype(np.float64)

    def __repr__(self) -> str:
        k, p, c = self.log_probs.shape
        return f"Categorical(n_classes={k}, n_features={p}, n_categories={c})"

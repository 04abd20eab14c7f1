"""What one EM pass of mixture discriminant analysis takes from a block of rows.

Responsibility-weighted moments of the components, merged pairwise
(Chan-Golub-LeVeque), the log-likelihood and worst-explained rows of each
class, and the pooled moments and scales of each class; see
:mod:`bayesrule.models.mixture`, which exports them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ._types import Floats as _F

__all__ = [
    "PassMoments",
    "class_moments",
    "class_scales",
    "component_moments",
    "merge_moments",
    "worst_rows",
]


# ------------------------------------------------------------------ statistics of a block
def component_moments(Z: _F, R: _F, w: _F) -> tuple[_F, _F, _F]:
    r"""Per-component weight, mean and centred scatter of one block of rows.

    Component ``c`` sees row ``i`` with weight ``w_i r_ic``:
    ``W_c = sum_i w_i r_ic``, ``m_c = sum_i w_i r_ic z_i / W_c`` and
    ``S_c = sum_i w_i r_ic (z_i - m_c)(z_i - m_c)'`` (accumulated about the
    mean, never from raw sums of squares).

    Parameters
    ----------
    Z : ndarray of shape (n, d)
    R : ndarray of shape (n, C)
        Responsibilities (each row sums to 1 over the class's components).
    w : ndarray of shape (n,)
        Sample weights.

    Returns
    -------
    W : (C,), means : (C, d), scatter : (C, d, d)
    """
    WR = R * w[:, None]
    W = WR.sum(axis=0)
    safe = np.where(W > 0, W, 1.0)
    means = (WR.T @ Z) / safe[:, None]
    n, C, d = R.shape[0], R.shape[1], Z.shape[1]
    scatter = np.empty((C, d, d))
    root = np.sqrt(WR)
    for c in range(C):  # one symmetric product (BLAS syrk) per component
        # Responsibilities are nearly hard in many dimensions: the rows a
        # component does not reach (below 1e-10) change its scatter by less
        # than rounding, and leaving them out saves most of the work.
        rows = np.flatnonzero(R[:, c] > 1e-10)
        if rows.size > 0.7 * n:
            A = (Z - means[c]) * root[:, c : c + 1]
        else:
            A = (Z[rows] - means[c]) * root[rows, c : c + 1]
        scatter[c] = A.T @ A
    return W, means, scatter


def merge_moments(a: tuple[_F, _F, _F], b: tuple[_F, _F, _F]) -> tuple[_F, _F, _F]:
    """The moments of the union of two blocks (Chan–Golub–LeVeque), component by component."""
    Wa, ma, Sa = a
    Wb, mb, Sb = b
    W = Wa + Wb
    safe = np.where(W > 0, W, 1.0)
    delta = mb - ma
    means = ma + delta * (Wb / safe)[:, None]
    f = Wa * Wb / safe
    S = Sa + Sb + f[:, None, None] * delta[:, :, None] * delta[:, None, :]
    return W, means, S


@dataclass(frozen=True, eq=False)
class PassMoments:
    r"""What one pass of EM takes from a block of rows; blocks merge into their union.

    Per component (``owner`` gives its class), the responsibility-weighted
    moments (:func:`component_moments`); per class, the log-likelihood
    ``sum_i w_i log p_k(z_i)`` of its rows; and per class the ``C_k`` rows
    of positive weight that the model explains worst (lowest
    ``log p_k(z_i)``; ties go to the lexicographically smaller row), where
    an empty component is re-seeded (``C_k`` the class's components, so
    each empty one gets its own row).

    Merging is Chan's update for the moments, a sum for the log-likelihood
    and a selection for the worst rows: associative and commutative (to
    rounding), with the moments of no rows as the identity.

    Attributes
    ----------
    owner : (M,) class index of each component
    weights, means, scatter : (M,), (M, d), (M, d, d)
    log_likelihood : (K,)
    worst_owner : (r,) class of each worst row
    worst_log_likelihood : (r,)
    worst_rows : (r, d)
    """

    owner: NDArray[np.intp]
    weights: _F
    means: _F
    scatter: _F
    log_likelihood: _F
    worst_owner: NDArray[np.intp]
    worst_log_likelihood: _F
    worst_rows: _F

    @classmethod
    def empty(cls, owner: NDArray[np.intp], d: int, n_classes: int) -> PassMoments:
        M = owner.size
        return cls(
            owner,
            np.zeros(M),
            np.zeros((M, d)),
            np.zeros((M, d, d)),
            np.zeros(n_classes),
            np.zeros(0, dtype=np.intp),
            np.zeros(0),
            np.zeros((0, d)),
        )

    @property
    def moments(self) -> tuple[_F, _F, _F]:
        return self.weights, self.means, self.scatter

    def merge(self, other: PassMoments) -> PassMoments:
        if not np.array_equal(self.owner, other.owner) or self.means.shape != other.means.shape:
            raise ValueError(
                f"cannot merge the moments of {self.means.shape} components with those of "
                f"{other.means.shape}: the passes ran different models."
            )
        W, means, scatter = merge_moments(self.moments, other.moments)
        owner, ll, rows = worst_rows(
            np.concatenate([self.worst_owner, other.worst_owner]),
            np.concatenate([self.worst_log_likelihood, other.worst_log_likelihood]),
            np.concatenate([self.worst_rows, other.worst_rows]),
            np.bincount(self.owner, minlength=self.log_likelihood.size),
        )
        return PassMoments(
            self.owner,
            W,
            means,
            scatter,
            self.log_likelihood + other.log_likelihood,
            owner,
            ll,
            rows,
        )


def worst_rows(
    owner: NDArray[np.intp], ll: _F, rows: _F, limit: NDArray[np.intp]
) -> tuple[NDArray[np.intp], _F, _F]:
    """Per class ``k``, the ``limit[k]`` entries of lowest ``ll`` (ties: the smaller row), sorted."""
    if owner.size == 0:
        return owner.astype(np.intp), ll, rows
    # lexsort's last key is the first: class, then log-likelihood, then the row's values
    keys = tuple(rows[:, j] for j in range(rows.shape[1] - 1, -1, -1)) + (ll, owner)
    order = np.lexsort(keys)
    o = owner[order]
    rank = np.arange(o.size) - np.searchsorted(o, o, side="left")
    keep = order[rank < limit[o]]
    return owner[keep].astype(np.intp), ll[keep], rows[keep]


def class_moments(
    owner: NDArray[np.intp], W: _F, means: _F, scatter: _F, K: int
) -> tuple[_F, _F, _F]:
    """Each class's weight, mean and covariance from its components' moments (Chan's merge)."""
    d = means.shape[1]
    cW = np.asarray(np.bincount(owner, weights=W, minlength=K), dtype=np.float64)
    safe = np.where(cW > 0, cW, 1.0)
    cm = np.zeros((K, d))
    np.add.at(cm, owner, means * W[:, None])
    cm /= safe[:, None]
    D = means - cm[owner]
    S = scatter + W[:, None, None] * D[:, :, None] * D[:, None, :]
    cS = np.zeros((K, d, d))
    np.add.at(cS, owner, S)
    return cW, cm, cS / safe[:, None, None]


#: the least scale of a class, relative to the mean variance of all the data
SCALE_FLOOR = 1e-4


def class_scales(owner: NDArray[np.intp], W: _F, means: _F, scatter: _F, K: int) -> _F:
    """The mean variance ``tr(Sigma_k) / d`` of each class.

    At least :data:`SCALE_FLOOR` times the mean variance of all the data (a
    class of one distinct row has a scatter of rounding noise), and 1 where
    the data have none.
    """
    cW, cm, cov = class_moments(owner, W, means, scatter, K)
    d = max(means.shape[1], 1)
    s = np.trace(cov, axis1=1, axis2=2) / d
    _, _, total = class_moments(np.zeros(K, dtype=np.intp), cW, cm, cov * cW[:, None, None], 1)
    overall = float(np.trace(total[0])) / d
    if not overall > 0:
        return np.ones(K)
    return np.asarray(np.maximum(s, SCALE_FLOOR * overall), dtype=np.float64)

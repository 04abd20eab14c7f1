"""Gaussian mixtures per class (mixture discriminant analysis), built from sub-class statistics.

Every class ``k`` is a mixture of Gaussian components (sub-classes) in a
``d``-dimensional projection ``z = B'(x - c)`` of the features; the part of
``x`` outside the projection is isotropic Gaussian noise of one variance
shared by every class, so each class has a proper density in the original
feature space and samples are mapped back to it.

The pieces here are pure functions of arrays, used by the estimator's EM
(:mod:`bayesrule.estimators.mda`) and by :meth:`MixtureFamily.from_stats`:

* :func:`component_moments` — the statistics of one block of rows with the
  responsibilities as weights: per component the weight, mean and centred
  scatter (the M-step needs nothing else);
* :func:`merge_moments` — Chan, Golub and LeVeque's pairwise update, so the
  statistics of blocks merge into those of their union;
* :class:`PassMoments` — what one EM pass takes from a block (the moments,
  the log-likelihood of each class and its worst-explained rows), merged
  block by block;
* :func:`derive_components` — the M-step: mixing weights, means and
  covariances (full, diagonal, spherical, shared or probabilistic PCA) with
  ``reg_covar`` added; for a shared covariance optionally with the means
  confined to a ``dimension``-dimensional subspace (:func:`reduced_rank`);
* :func:`component_log_prob` — the E-step's log densities, by matrix
  products with Cholesky factors (Woodbury's identity for probabilistic PCA).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._mixture_moments import (
    SCALE_FLOOR,
    PassMoments,
    class_moments,
    class_scales,
    component_moments,
    merge_moments,
    worst_rows,
)
from ._projection import Projection
from ._types import LOG_2PI as _LOG_2PI
from ._types import Floats as _F

__all__ = [
    "SCALE_FLOOR",
    "Projection",
    "class_moments",
    "class_scales",
    "worst_rows",
    "COVARIANCE_TYPES",
    "Components",
    "MixtureFamily",
    "PassMoments",
    "component_log_prob",
    "component_moments",
    "derive_components",
    "merge_moments",
    "reduced_rank",
]

#: the covariance structures of the components
COVARIANCE_TYPES = ("full", "diag", "spherical", "shared", "ppca")
#: rows per block of the E-step's products (bounds the (rows, components x d) temporaries)
BLOCK_ROWS = 4096


# ------------------------------------------------------------------ the M-step
@dataclass(frozen=True)
class Components:
    """Gaussian components in the projected space, each belonging to one class.

    Attributes
    ----------
    owner : ndarray of shape (M,)
        Index of the class of each component; components of a class are contiguous.
    log_weights : ndarray of shape (M,)
        Log mixing weight within its class (``-inf`` for an empty component).
    means : ndarray of shape (M, d)
    covariance_type : str
    factors : ndarray
        'full'/'shared': lower Cholesky factors of the covariances, (M, d, d);
        'diag'/'spherical': variances, (M, d); 'ppca': principal axes
        ``(M, d, q)`` (orthonormal columns).
    whitening : ndarray
        'full'/'shared': ``L^-T`` (M, d, d); 'ppca': ``(lambda - s2) / lambda``
        per axis, (M, q); otherwise unused (empty).
    noise : ndarray of shape (M,)
        'ppca': the isotropic noise variance ``s2`` off the principal axes.
    log_det : ndarray of shape (M,)
        Log determinant of each covariance.
    """

    owner: NDArray[np.intp]
    log_weights: _F
    means: _F
    covariance_type: str
    factors: _F
    whitening: _F
    noise: _F
    log_det: _F

    @property
    def n_dims(self) -> int:
        return int(self.means.shape[1])

    def covariances(self) -> _F:
        """The covariance of every component, (M, d, d)."""
        M, d = self.means.shape
        kind = self.covariance_type
        if kind in ("full", "shared"):
            return np.einsum("mij,mkj->mik", self.factors, self.factors)
        if kind in ("diag", "spherical"):
            out = np.zeros((M, d, d))
            idx = np.arange(d)
            out[:, idx, idx] = self.factors
            return out
        U = self.factors
        lam = self.noise[:, None] / np.maximum(1.0 - self.whitening, 1e-300)
        out = np.einsum("mdq,mq,meq->mde", U, lam - self.noise[:, None], U)
        idx = np.arange(d)
        out[:, idx, idx] += self.noise[:, None]
        return out

    def sample_component(self, m: int, n: int, rng: np.random.Generator) -> _F:
        """``n`` draws from component ``m`` in the projected space."""
        d = self.n_dims
        E = rng.standard_normal((n, d))
        kind = self.covariance_type
        if kind in ("full", "shared"):
            return self.means[m] + E @ self.factors[m].T
        if kind in ("diag", "spherical"):
            return self.means[m] + E * np.sqrt(self.factors[m])
        U = self.factors[m]
        lam = self.noise[m] / np.maximum(1.0 - self.whitening[m], 1e-300)
        q = U.shape[1]
        low = rng.standard_normal((n, q)) * np.sqrt(np.maximum(lam - self.noise[m], 0.0))
        return self.means[m] + low @ U.T + E * np.sqrt(self.noise[m])


def n_parameters(
    covariance_type: str, n_components: int, d: int, rank: int, dimension: int | None = None
) -> int:
    """Free parameters of one class's mixture (a shared covariance is not counted per class).

    With a reduced-rank shared form (``dimension``), a component mean has
    ``dimension`` free coordinates in the subspace, which, like the
    covariance, is shared by every class and not counted per class.
    """
    per = {
        "full": d + d * (d + 1) // 2,
        "diag": 2 * d,
        "spherical": d + 1,
        "shared": d if dimension is None else int(dimension),
        "ppca": d + d * rank - rank * (rank - 1) // 2 + 1,
    }[covariance_type]
    return n_components * per + n_components - 1


def derive_components(
    owner: NDArray[np.intp],
    W: _F,
    means: _F,
    scatter: _F,
    *,
    covariance_type: str,
    reg_covar: float,
    rank: int,
    scale: _F,
    dimension: int | None = None,
) -> Components:
    r"""The M-step: component parameters from their weighted moments.

    Each covariance is ``S_c / W_c`` (for 'shared', ``sum_c S_c / sum_c W_c``
    over every component of every class), reduced to its structure, plus
    ``reg_covar * scale_k`` on the diagonal, where ``scale_k`` is the mean
    variance of class ``k``'s data in the projected space (so
    ``reg_covar`` has no units; for 'shared', the mean variance of the
    pooled covariance, one ridge for all). An empty component (no weight) gets
    mixing weight zero and its class's covariance, so nothing is NaN.

    Parameters
    ----------
    owner : (M,) class index of each component
    W, means, scatter : the merged moments (see :func:`component_moments`)
    covariance_type : one of :data:`COVARIANCE_TYPES`
    reg_covar : float >= 0
    rank : int
        Principal axes of each 'ppca' component.
    scale : (K,) the mean variance of each class, see :func:`class_scales`
    dimension : int or None
        Only with ``covariance_type='shared'``: reduced-rank MDA (Hastie and
        Tibshirani 1996). The component means are confined to a
        ``dimension``-dimensional affine subspace and the covariance takes
        the between-component variance of the directions left out
        (:func:`reduced_rank`, applied to the regularised pooled
        covariance). None: unconstrained means.
    """
    M, d = means.shape
    K = int(scale.size)
    class_W = np.bincount(owner, weights=W, minlength=K)
    with np.errstate(divide="ignore"):
        log_weights = np.log(W) - np.log(np.where(class_W > 0, class_W, 1.0))[owner]
    log_weights = np.where(W > 0, log_weights, -np.inf)
    ridge = reg_covar * scale[owner]  # (M,)
    safe_W = np.where(W > 0, W, 1.0)
    covs = scatter / safe_W[:, None, None]
    empty = W <= 0
    if np.any(empty):
        # an empty component (weight zero: never used for a density) stays finite
        covs[empty] = np.eye(d) * scale[owner[empty]][:, None, None]
    idx = np.arange(d)
    kind = covariance_type
    none = np.empty((M, 0))
    if kind == "shared":
        total = float(W.sum())
        pooled = scatter.sum(axis=0) / (total if total > 0 else 1.0)
        covs = np.broadcast_to(pooled, (M, d, d)).copy()
        # one covariance: one ridge, in units of the pooled mean variance
        unit = float(np.trace(pooled)) / max(d, 1)
        ridge = np.full(M, reg_covar * (unit if unit > 0 else 1.0))
        if dimension is not None:
            sigma = pooled + ridge[0] * np.eye(d)
            means, sigma = reduced_rank(W, means, sigma, int(dimension), reg_covar)
            covs = np.broadcast_to(sigma, (M, d, d)).copy()
            ridge = np.zeros(M)  # already in sigma
    if kind in ("full", "shared"):
        covs[:, idx, idx] += ridge[:, None]
        L = _cholesky(covs, reg_covar)
        inv = np.linalg.inv(L)  # lower triangular inverse; L^-T is upper
        white = np.ascontiguousarray(inv.transpose(0, 2, 1))
        log_det = 2.0 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(axis=1)
        return Components(owner, log_weights, means, kind, L, white, np.zeros(M), log_det)
    if kind in ("diag", "spherical"):
        var = np.diagonal(covs, axis1=1, axis2=2).copy()
        if kind == "spherical":
            var = np.repeat(var.mean(axis=1, keepdims=True), d, axis=1)
        var += ridge[:, None]
        var = _positive(var, reg_covar)
        log_det = np.log(var).sum(axis=1)
        return Components(owner, log_weights, means, kind, var, none, np.zeros(M), log_det)
    # probabilistic PCA (Tipping & Bishop): q leading axes, the rest one noise variance
    q = int(rank)
    vals, vecs = np.linalg.eigh(covs)  # one batched call for every component
    vals = np.maximum(vals[:, ::-1], 0.0)
    U = np.ascontiguousarray(vecs[:, :, ::-1][:, :, :q])
    lam = vals[:, :q].copy()
    s2 = vals[:, q:].mean(axis=1) if q < d else np.zeros(M)
    s2 = s2 + ridge
    lam = np.maximum(lam + ridge[:, None], s2[:, None])
    s2 = _positive(s2, reg_covar)
    lam = np.maximum(lam, s2[:, None])
    white = (lam - s2[:, None]) / lam  # Woodbury: Sigma^-1 = (I - U diag(white) U') / s2
    log_det = np.log(lam).sum(axis=1) + (d - q) * np.log(s2)
    return Components(owner, log_weights, means, kind, U, white, s2, log_det)


def reduced_rank(
    W: _F, means: _F, covariance: _F, dimension: int, reg_covar: float = 0.0
) -> tuple[_F, _F]:
    r"""Means confined to the leading ``dimension`` discriminant directions, and the covariance.

    The maximum-likelihood Gaussian model of weighted groups (here the
    components, of weights ``W``) with one covariance and group means in a
    ``dimension``-dimensional affine subspace (Campbell 1984), given the
    unconstrained means and the within-group ``covariance``: in the
    coordinates ``u = L^-1 z`` that whiten the covariance (``L L' =
    covariance``), the discriminant directions are the principal axes
    ``v_j`` of the weighted scatter of the means about their weighted mean
    ``u_bar`` (the leading generalised eigenvectors of the between-group
    scatter relative to the within), with between-group variances ``s_j^2``.
    Each mean keeps its part along the first ``dimension`` axes and takes
    ``u_bar``'s along the others; the covariance gains ``s_j^2`` along every
    axis left out: ``L (I + sum_{j > dimension} s_j^2 v_j v_j') L'``.

    Parameters
    ----------
    W : (M,) group weights (zero for an empty component, which adds nothing)
    means : (M, d)
    covariance : (d, d) positive definite
    dimension : int >= 1
    reg_covar : float, only for the message of a singular covariance

    Returns
    -------
    means : (M, d) the confined means
    covariance : (d, d)
    """
    L = _cholesky(covariance[None], reg_covar)[0]
    U = np.linalg.solve(L, means.T).T  # whitened means, (M, d)
    total = float(W.sum())
    p = W / (total if total > 0 else 1.0)
    ubar = p @ U
    _, s, Vt = np.linalg.svd(np.sqrt(p)[:, None] * (U - ubar), full_matrices=False)
    keep, drop, sx = Vt[:dimension], Vt[dimension:], s[dimension:]
    U_red = ubar + ((U - ubar) @ keep.T) @ keep
    LV = L @ drop.T  # (d, dropped)
    cov = covariance + (LV * sx**2) @ LV.T
    return U_red @ L.T, 0.5 * (cov + cov.T)


def _cholesky(covs: _F, reg_covar: float) -> _F:
    try:
        return np.asarray(np.linalg.cholesky(covs), dtype=np.float64)
    except np.linalg.LinAlgError:
        raise ValueError(
            "a mixture component has a singular covariance (fewer distinct rows than "
            f"dimensions, or a constant direction) with reg_covar={reg_covar!r}; increase "
            "reg_covar (e.g. 1e-3), lower n_components or n_dims."
        ) from None


def _positive(v: _F, reg_covar: float) -> _F:
    if np.any(~(v > 0)):
        raise ValueError(
            f"a mixture component has zero variance with reg_covar={reg_covar!r}; increase "
            "reg_covar (e.g. 1e-3) or lower n_components."
        )
    return v


# ------------------------------------------------------------------ the E-step
def component_log_prob(Z: _F, comps: Components, which: NDArray[np.intp] | None = None) -> _F:
    r"""``log w_c + log N(z; m_c, Sigma_c)`` for each row and component, (n, len(which)).

    One matrix product of the rows with every component's whitening at once
    (Cholesky ``L^-T``; for probabilistic PCA its principal axes, with
    Woodbury's identity ``Sigma^-1 = (I - U D U') / s2``), in row blocks.
    """
    if which is None:
        which = np.arange(comps.means.shape[0])
    n, d = Z.shape
    Cn = which.size
    out = np.empty((n, Cn))
    kind = comps.covariance_type
    mu = comps.means[which]
    const = comps.log_weights[which] - 0.5 * (comps.log_det[which] + d * _LOG_2PI)
    if kind in ("full", "shared"):
        Wt = comps.whitening[which]  # (C, d, d)
        flat = np.ascontiguousarray(Wt.transpose(1, 0, 2).reshape(d, Cn * d))
        shift = np.einsum("cd,cde->ce", mu, Wt).reshape(1, Cn * d)
        for s in range(0, n, BLOCK_ROWS):
            Y = Z[s : s + BLOCK_ROWS] @ flat - shift
            Y *= Y
            out[s : s + BLOCK_ROWS] = Y.reshape(-1, Cn, d).sum(axis=2)
    elif kind in ("diag", "spherical"):
        prec = 1.0 / comps.factors[which]  # (C, d)
        lin = (mu * prec).T
        quad = np.einsum("cd,cd->c", mu * mu, prec)
        for s in range(0, n, BLOCK_ROWS):
            Zb = Z[s : s + BLOCK_ROWS]
            out[s : s + BLOCK_ROWS] = (Zb * Zb) @ prec.T - 2.0 * (Zb @ lin) + quad
    else:
        U = comps.factors[which]  # (C, d, q)
        q = U.shape[2]
        flat = np.ascontiguousarray(U.transpose(1, 0, 2).reshape(d, Cn * q))
        shift = np.einsum("cd,cdq->cq", mu, U).reshape(1, Cn * q)
        damp = comps.whitening[which].reshape(1, Cn * q)
        s2 = comps.noise[which]
        mm = np.einsum("cd,cd->c", mu, mu)
        for s in range(0, n, BLOCK_ROWS):
            Zb = Z[s : s + BLOCK_ROWS]
            r2 = np.einsum("nd,nd->n", Zb, Zb)[:, None] - 2.0 * (Zb @ mu.T) + mm
            if q:
                P = Zb @ flat - shift
                P *= P
                P *= damp
                r2 -= P.reshape(-1, Cn, q).sum(axis=2)
            out[s : s + BLOCK_ROWS] = np.maximum(r2, 0.0) / s2
    np.maximum(out, 0.0, out=out)
    return const - 0.5 * out


class ClassMixture:
    """The mixture of one class: ``log_prob(X)`` and ``sample(n, rng)`` in feature space."""

    def __init__(self, family: MixtureFamily, k: int) -> None:
        self._family = family
        self._k = k
        self.components = np.flatnonzero(family.components.owner == k)

    @property
    def weights(self) -> _F:
        """Mixing weights of the class's components."""
        return np.exp(self._family.components.log_weights[self.components])

    @property
    def means(self) -> _F:
        """Component means in feature space, (C, p)."""
        return self._family.projection.back(self._family.components.means[self.components])

    def log_prob(self, X: Any) -> _F:
        return self._family.log_prob(X)[:, self._k]

    def sample(self, n: int, rng: np.random.Generator, *, noise: bool = True) -> _F:
        """``n`` rows in feature space (with the residual noise unless ``noise=False``)."""
        comps = self._family.components
        p = self.weights
        pick = rng.choice(self.components.size, size=int(n), p=p / p.sum())
        Z = np.empty((int(n), comps.n_dims))
        for j in np.unique(pick):
            rows = pick == j
            Z[rows] = comps.sample_component(int(self.components[j]), int(rows.sum()), rng)
        return self._family.projection.back(Z, rng if noise else None)

    def __repr__(self) -> str:
        return f"ClassMixture(n_components={self.components.size})"


class MixtureFamily:
    """A Gaussian mixture per class in a shared projection; ``log_prob`` is (n, n_classes)."""

    def __init__(self, components: Components, projection: Projection, n_classes: int) -> None:
        self.components = components
        self.projection = projection
        self.n_classes = int(n_classes)
        owner = components.owner
        # components of a class are contiguous: segment starts for reduceat
        self._starts = np.searchsorted(owner, np.arange(self.n_classes))

    def __len__(self) -> int:
        return self.n_classes

    def __getitem__(self, k: int) -> ClassMixture:
        return ClassMixture(self, int(k))

    def projected_log_prob(self, Z: _F) -> _F:
        """``log p_k(z)`` in the projected space, (n, n_classes)."""
        lp = component_log_prob(Z, self.components)
        return segment_logsumexp(lp, self._starts)

    def log_prob(self, X: Any) -> _F:
        # a row beyond float64's range gives inf or NaN here; the estimator
        # then gives it -inf (its density underflows), never NaN
        with np.errstate(over="ignore", invalid="ignore"):
            Z = self.projection.transform(X)
            return self.projected_log_prob(Z) + self.projection.residual_log_prob(X, Z)[:, None]

    def relative_log_prob(self, X: Any) -> _F:
        """``log p_k(x)`` less the residual term, which is the same for every class."""
        with np.errstate(over="ignore", invalid="ignore"):
            return self.projected_log_prob(self.projection.transform(X))


def segment_logsumexp(lp: _F, starts: NDArray[np.intp]) -> _F:
    """``logsumexp`` of contiguous column segments (one per class), (n, len(starts))."""
    if lp.shape[0] == 0:
        return np.empty((0, starts.size))
    top = np.maximum.reduceat(lp, starts, axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    counts = np.diff(np.append(starts, lp.shape[1]))
    with np.errstate(divide="ignore", under="ignore"):
        e = np.exp(lp - np.repeat(safe, counts, axis=1))
        return safe + np.log(np.add.reduceat(e, starts, axis=1))

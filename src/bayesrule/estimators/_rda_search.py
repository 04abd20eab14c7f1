"""Held-out terms of RDA-CV's candidates: many regularisations from one eigendecomposition.

Two families of candidates cost one eigendecomposition (and one rotation of
the held-out rows) per class and training split:

* for a fixed ``alpha``, every ``(gamma, ridge)`` (:func:`held_out_terms`):
  Friedman's shrinkage towards ``(tr/p) I``, the common ``ridge`` towards
  ``t I`` and the fixed ``reg_param`` all keep the eigenvectors of
  ``Sigma_k(alpha)`` and map each eigenvalue ``l`` to
  ``(1 - r) ((1 - rho) ((1 - gamma) l + gamma tr/p) + rho t) + r``;
* for a fixed ``(gamma, ridge)``, every ``alpha`` (:func:`alpha_sweep_terms`):
  the regularised covariance is linear in ``alpha``,
  ``Sigma_k(alpha) = alpha A_k + (1 - alpha) B`` with ``A_k`` the class's own
  regularised covariance and ``B`` the pooled one (Friedman's trace term is
  linear in ``alpha`` too), so the generalised eigendecomposition
  ``A_k U = B U diag(l)`` gives ``Sigma_k(alpha) = B^1/2 U diag(alpha l + 1 -
  alpha) U' B^1/2``: one decomposition serves a fine grid of alphas.

Both give exact distances and log-determinants, not approximations, and
mark each candidate regular or not by the test of
:meth:`bayesrule.models.GaussianFamily.from_stats` (the correlation matrix's
smallest eigenvalue above ``tol``), from a proven lower bound where it
suffices and from the eigenvalues otherwise.

The held-out rows ``X`` may be NumPy arrays or arrays of another array API
namespace on their device (the array API backend's RDA-CV): the ``p x p``
decompositions run on the host in float64 with LAPACK, and only their
results (rotations, inverse eigenvalues) go to the rows' device, where the
products over the rows run. The distances come back in the rows' namespace;
the log determinants and the regularity flags are host values.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import LinAlgError, cholesky, eigh, eigvalsh, solve_triangular

from ..covariance import shrink
from ..models.gaussian import correlation_singular

_F = NDArray[np.float64]


# ------------------------------------------------ the rows, in their namespace
def _namespace(X: Any) -> Any:
    """``X``'s array namespace; None for NumPy (whose code paths stay as they are)."""
    if isinstance(X, np.ndarray):
        return None
    from sklearn.externals.array_api_compat import array_namespace

    return array_namespace(X)


def on_rows(X: Any, a: Any) -> Any:
    """The host array ``a`` in ``X``'s namespace, on its device, in its dtype (NumPy: ``a``)."""
    xp = _namespace(X)
    if xp is None:
        return a
    return xp.asarray(np.ascontiguousarray(a), dtype=X.dtype, device=X.device)


def _columns(X: Any, idx: NDArray[np.intp]) -> Any:
    """``X[:, idx]``."""
    xp = _namespace(X)
    if xp is None:
        return X[:, idx]
    return xp.take(X, xp.asarray(np.asarray(idx, dtype=np.int64), device=X.device), axis=1)


def _row_norms(R: Any) -> Any:
    """Each row's squared norm."""
    xp = _namespace(R)
    if xp is None:
        return np.einsum("ij,ij->i", R, R)
    return xp.sum(R * R, axis=1)


def _stack(X: Any, parts: list[Any], axis: int) -> Any:
    xp = _namespace(X)
    return np.stack(parts, axis=axis) if xp is None else xp.stack(parts, axis=axis)


def _full(X: Any, shape: tuple[int, ...], value: float) -> Any:
    xp = _namespace(X)
    if xp is None:
        return np.full(shape, value)
    return xp.full(shape, value, dtype=X.dtype, device=X.device)


def regularised(
    cov: _F, gamma: float, ridge: float, t: float, reg_param: float, scale: _F | None = None
) -> _F:
    """``cov`` shrunk by ``gamma``, then ``ridge`` (towards ``t I``), then ``reg_param``.

    The order and arithmetic of ``GaussianFamily.from_stats``. With ``scale``
    ``s``, ``gamma`` and ``ridge`` act on ``D^-1 cov D^-1`` (``D = diag(s)``;
    ``t`` is then the average pooled variance of ``x / s``) and the result
    is mapped back by ``D (.) D`` before ``reg_param``.
    """
    p = cov.shape[0]
    outer = np.outer(scale, scale) if scale is not None and (gamma or ridge) else None
    S = cov / outer if outer is not None else cov
    S = shrink(S, gamma) if gamma else S.copy()
    if ridge:
        S *= 1.0 - ridge
        S[np.arange(p), np.arange(p)] += ridge * t
    if outer is not None:
        S *= outer
    if reg_param:
        S *= 1.0 - reg_param
        S[np.arange(p), np.arange(p)] += reg_param
    return S


def held_out_terms(
    cov: _F,
    means: _F,
    X: Any,
    gammas: _F,
    tol: float,
    reg_param: float = 0.0,
    ridges: _F | None = None,
    t: float = 0.0,
    scale: _F | None = None,
) -> tuple[Any, _F, NDArray[np.bool_]]:
    r"""Mahalanobis distances and log determinants of ``cov`` under every (gamma, ridge).

    ``Sigma(gamma, rho) = (1 - r) ((1 - rho) ((1 - gamma) Sigma + gamma (tr(Sigma)/p) I)
    + rho t I) + r I`` (``r = reg_param``) has the eigenvectors of ``Sigma``:
    one eigendecomposition and one rotation of the rows serve every
    candidate. Features with no variance in ``Sigma`` (a zero row and
    column, such as pixels that are 0 in every training row) form their own
    block, so the eigendecomposition and the rotation see only the others.

    Parameters
    ----------
    cov : ndarray of shape (p, p)
        ``Sigma``, before the shrinkage.
    means : ndarray of shape (m, p)
        The means the distances are measured to (all sharing ``cov``).
    X : ndarray of shape (n, p)
    gammas : ndarray of shape (G,)
    tol : float
        As in :func:`bayesrule.models.gaussian.correlation_singular`.
    reg_param : float in [0, 1], default=0.0
    ridges : ndarray of shape (R,), default=(0,)
    t : float
        The ridge's scale (the average pooled variance; of ``x / scale``
        with ``scale``).
    scale : ndarray of shape (p,), default=None
        The coordinates ``x / scale`` in which ``gamma`` and ``ridge`` shrink
        (see :func:`regularised`). Without ``reg_param`` the whole problem
        is solved there (distances do not change; the log determinants
        gain ``2 sum log scale``); with it, the candidates are no longer
        functions of one eigendecomposition and each is factorised on its
        own (:func:`_direct_terms`).

    Returns
    -------
    maha : ndarray of shape (n, m, G * R)
        Squared distances; candidate ``i * R + j`` is ``(gammas[i], ridges[j])``.
    logdet : ndarray of shape (G * R,)
    ok : ndarray of shape (G * R,), bool
        False where the covariance is singular by the test of
        ``GaussianFamily.from_stats`` (its distances are then meaningless).
    """
    rho = np.zeros(1) if ridges is None else np.asarray(ridges, dtype=float)
    if scale is not None:
        if reg_param:
            return _direct_terms(cov, means, X, gammas, rho, t, float(reg_param), scale, tol)
        shift = 2.0 * float(np.sum(np.log(scale)))
        maha, logdet, ok = held_out_terms(
            cov / np.outer(scale, scale),
            means / scale,
            X / on_rows(X, scale),
            gammas,
            tol,
            0.0,
            rho,
            t,
        )
        return maha, logdet + shift, ok
    p = cov.shape[0]
    tr = float(np.trace(cov)) / p
    gam_c = np.repeat(gammas, rho.size)
    rho_c = np.tile(rho, gammas.size)
    dead = np.diag(cov) == 0.0
    if dead.any() and np.any(cov[dead]):  # rounding left a row that is not zero: no block
        dead[:] = False
    live = np.flatnonzero(~dead)
    lam, V = eigh(cov[np.ix_(live, live)], driver="evd")
    r = float(reg_param)

    def mapped(values: _F) -> _F:
        out = (1.0 - rho_c) * ((1.0 - gam_c) * values + gam_c * tr) + rho_c * t
        return (1.0 - r) * out + r if r else out

    eig = mapped(lam[:, None])  # (p_live, C)
    eig_dead = mapped(np.zeros(1))  # (C,): the dead block's eigenvalue, |dead| times
    n_dead = int(dead.sum())
    low = eig.min(axis=0) if live.size else np.full(gam_c.size, np.inf)
    if n_dead:
        low = np.minimum(low, eig_dead)
    ok = low > 0
    # the largest variance of each candidate: the map is increasing in the variance
    top = _mapped_var(np.array([float(np.diag(cov).max())]), tr, t, gam_c, rho_c, r)
    with np.errstate(divide="ignore", invalid="ignore"):
        proven = low / top > tol  # lmin(C) >= lmin(Sigma) / max variance: regular
    for c in np.flatnonzero(ok & ~proven).tolist():
        S = regularised(cov, float(gam_c[c]), float(rho_c[c]), t, r)
        ok[c] = not correlation_singular(S, tol)[0]
    safe = np.where(eig > 0, eig, np.inf)
    inv_dead = np.where(eig_dead > 0, 1.0 / np.where(eig_dead > 0, eig_dead, 1.0), 0.0)
    logdet = np.sum(np.log(np.where(eig > 0, eig, 1.0)), axis=0)
    logdet += n_dead * np.log(np.where(eig_dead > 0, eig_dead, 1.0))
    Z0 = _columns(X, live) @ on_rows(X, V)
    inv = on_rows(X, 1.0 / safe)
    parts = []
    for m in means:
        Z = Z0 - on_rows(X, m[live] @ V)
        part = (Z * Z) @ inv
        if n_dead:
            R = _columns(X, np.flatnonzero(dead)) - on_rows(X, m[dead])
            part = part + _row_norms(R)[:, None] * on_rows(X, inv_dead)[None, :]
        parts.append(part)
    return _stack(X, parts, axis=1), logdet, ok


def _candidate_factors(
    cov: _F, gammas: _F, ridges: _F, t: float, reg_param: float, scale: _F, tol: float
) -> Iterator[_F | None]:
    """Each ``(gamma, ridge)`` candidate's lower Cholesky factor (gamma-major), None where its
    covariance is singular in the correlation scale (``tol``) or not positive definite."""
    for c in range(gammas.size * ridges.size):
        S = regularised(
            cov,
            float(gammas[c // ridges.size]),
            float(ridges[c % ridges.size]),
            t,
            reg_param,
            scale,
        )
        if correlation_singular(S, tol)[0]:
            yield None
            continue
        try:
            yield cholesky(S, lower=True)
        except LinAlgError:
            yield None


def _direct_terms(
    cov: _F,
    means: _F,
    X: Any,
    gammas: _F,
    ridges: _F,
    t: float,
    reg_param: float,
    scale: _F,
    tol: float,
) -> tuple[Any, _F, NDArray[np.bool_]]:
    """:func:`held_out_terms` one candidate at a time (a Cholesky factor each)."""
    C = gammas.size * ridges.size
    if _namespace(X) is not None:
        return _direct_terms_rows(cov, means, X, gammas, ridges, t, reg_param, scale, tol)
    out = np.full((X.shape[0], means.shape[0], C), np.inf)
    logdet = np.zeros(C)
    ok = np.zeros(C, dtype=bool)
    for c, L in enumerate(_candidate_factors(cov, gammas, ridges, t, reg_param, scale, tol)):
        if L is None:
            continue
        ok[c] = True
        logdet[c] = 2.0 * float(np.sum(np.log(np.diag(L))))
        for j, m in enumerate(means):
            Z = solve_triangular(L, (X - m).T, lower=True)
            out[:, j, c] = np.einsum("ij,ij->j", Z, Z)
    return out, logdet, ok


def _direct_terms_rows(
    cov: _F,
    means: _F,
    X: Any,
    gammas: _F,
    ridges: _F,
    t: float,
    reg_param: float,
    scale: _F,
    tol: float,
) -> tuple[Any, _F, NDArray[np.bool_]]:
    """:func:`_direct_terms` for rows on a device: each candidate's ``L^-T`` (host) applied there.

    ``|L^-1 (x - m)|^2 = |(x - m) L^-T|^2``: the triangular inverse is a
    ``p x p`` solve on the host, the rows meet it in one product per
    candidate (``L`` is the Cholesky factor of a covariance whose correlation
    matrix passed the regularity test).
    """
    C = gammas.size * ridges.size
    n, m_n = int(X.shape[0]), means.shape[0]
    logdet = np.zeros(C)
    ok = np.zeros(C, dtype=bool)
    per_candidate = []
    for c, L in enumerate(_candidate_factors(cov, gammas, ridges, t, reg_param, scale, tol)):
        if L is None:
            per_candidate.append(_full(X, (n, m_n), np.inf))
            continue
        ok[c] = True
        logdet[c] = 2.0 * float(np.sum(np.log(np.diag(L))))
        inv_t = on_rows(X, solve_triangular(L, np.eye(L.shape[0]), lower=True).T)
        per_candidate.append(
            _stack(X, [_row_norms((X - on_rows(X, m)) @ inv_t) for m in means], axis=1)
        )
    return _stack(X, per_candidate, axis=2), logdet, ok


def _mapped_var(d: _F, tr: float, t: float, gamma: Any, rho: Any, r: float) -> _F:
    """The variances of a candidate's covariance (the diagonal of ``regularised``).

    ``gamma`` and ``rho`` may be arrays of the candidates' values (broadcast with ``d``).
    """
    var = (1.0 - rho) * ((1.0 - gamma) * d + gamma * tr) + rho * t
    return (1.0 - r) * var + r if r else var


def alpha_sweep_terms(
    A: _F, B: _F, b_min: float, means: _F, X: Any, alphas: _F, tol: float
) -> tuple[Any, _F, NDArray[np.bool_]]:
    r"""Distances and log determinants of ``alpha A + (1 - alpha) B`` for every alpha.

    In the scale where ``B`` has unit variances (``D = diag(B)``,
    ``A~ = D^-1/2 A D^-1/2``, ``B~ = D^-1/2 B D^-1/2 = L L'``), the
    eigendecomposition ``L^-1 A~ L^-T = U diag(l) U'`` gives
    ``alpha A~ + (1 - alpha) B~ = L U diag(alpha l + 1 - alpha) U' L'``: the
    rows are rotated once, by ``D^-1/2 L^-T U``, for every alpha. A candidate
    is regular when ``lmin(B~) min(alpha l + 1 - alpha)`` over its largest
    variance exceeds ``tol`` (a lower bound on its correlation matrix's
    smallest eigenvalue); otherwise that eigenvalue is computed.

    Parameters
    ----------
    A, B : ndarray of shape (p, p)
        The class's own and the pooled regularised covariances.
    b_min : float
        The smallest eigenvalue of ``B~`` (shared by every class).
    means : ndarray of shape (m, p)
    X : ndarray of shape (n, p)
    alphas : ndarray of shape (S,)
    tol : float

    Returns
    -------
    maha : ndarray of shape (n, m, S)
    logdet : ndarray of shape (S,)
    ok : ndarray of shape (S,), bool
        All False when ``B`` is not positive definite.
    """
    S_n = alphas.size
    split = _isolated(A, B)
    if split is not None:
        return _with_isolated(split, A, B, b_min, means, X, alphas, tol)
    var_b = np.diag(B)
    none = (
        _full(X, (X.shape[0], means.shape[0], S_n), np.inf),
        np.zeros(S_n),
        np.zeros(S_n, dtype=bool),
    )
    if var_b.min() <= 0:
        return none
    d = np.sqrt(var_b)
    As = A / np.outer(d, d)
    Bs = B / np.outer(d, d)
    try:
        L = cholesky(Bs, lower=True)
    except LinAlgError:
        return none
    C = solve_triangular(L, solve_triangular(L, As, lower=True).T, lower=True)
    lam, U = eigh(0.5 * (C + C.T), driver="evd")
    W = solve_triangular(L.T, U, lower=False) / d[:, None]  # D^-1/2 L^-T U
    E = alphas[None, :] * lam[:, None] + (1.0 - alphas)[None, :]  # (p, S)
    low = E.min(axis=0)
    ok = low > 0
    top = alphas * float(np.diag(As).max()) + (1.0 - alphas)  # each candidate's largest variance
    with np.errstate(divide="ignore", invalid="ignore"):
        proven = b_min * low / top > tol
    for s in np.flatnonzero(ok & ~proven).tolist():
        a = float(alphas[s])
        ok[s] = not correlation_singular(a * A + (1.0 - a) * B, tol)[0]
    safe = np.where(E > 0, E, np.inf)
    logdet = 2.0 * float(np.sum(np.log(d))) + 2.0 * float(np.sum(np.log(np.diag(L))))
    logdet_s = logdet + np.sum(np.log(np.where(E > 0, E, 1.0)), axis=0)
    Z0 = X @ on_rows(X, W)
    inv = on_rows(X, 1.0 / safe)
    parts = []
    for m in means:
        Z = Z0 - on_rows(X, m @ W)
        parts.append((Z * Z) @ inv)
    return _stack(X, parts, axis=1), logdet_s, ok


def _isolated(A: _F, B: _F) -> tuple[NDArray[np.intp], NDArray[np.intp]] | None:
    """Features alone in both ``A`` and ``B`` with the same variance, and the others.

    Such a feature (a pixel constant in every training row, given the
    ridge's variance) has the same variance ``v`` and no covariance under
    every ``alpha A + (1 - alpha) B``: it adds ``(x - m)^2 / v`` to each
    distance and ``log v`` to each log determinant, and its correlation
    block (1) never holds the smallest eigenvalue. None when there are none
    (or only those).
    """
    da, db = np.diag(A), np.diag(B)
    alone = (np.count_nonzero(A, axis=1) == 1) & (np.count_nonzero(B, axis=1) == 1)
    alone &= (da == db) & (da > 0)
    if not alone.any() or alone.all():
        return None
    return np.flatnonzero(alone), np.flatnonzero(~alone)


def _with_isolated(
    split: tuple[NDArray[np.intp], NDArray[np.intp]],
    A: _F,
    B: _F,
    b_min: float,
    means: _F,
    X: Any,
    alphas: _F,
    tol: float,
) -> tuple[Any, _F, NDArray[np.bool_]]:
    """:func:`alpha_sweep_terms` on the other features, the isolated ones added in closed form.

    ``b_min`` is unchanged: the smallest eigenvalue of a correlation matrix
    is at most 1, so the isolated features' blocks (1 each) leave it to the others.
    """
    alone, live = split
    maha, logdet, ok = alpha_sweep_terms(
        A[np.ix_(live, live)],
        B[np.ix_(live, live)],
        b_min,
        means[:, live],
        _columns(X, live),
        alphas,
        tol,
    )
    v = np.diag(A)[alone]
    parts = []
    for j, m in enumerate(means):
        R = (_columns(X, alone) - on_rows(X, m[alone])) / on_rows(X, np.sqrt(v))
        parts.append(maha[:, j, :] + _row_norms(R)[:, None])
    return _stack(X, parts, axis=1), logdet + float(np.sum(np.log(v))), ok


def standardised_min_eigenvalue(B: _F) -> float:
    """Smallest eigenvalue of ``B`` scaled to unit variances (``-inf`` if a variance is 0)."""
    var = np.diag(B)
    if var.min() <= 0:
        return -np.inf
    s = np.sqrt(var)
    return float(eigvalsh(B / np.outer(s, s), driver="evd")[0])


def _log_sum_exp_classes(jll: _F) -> _F:
    """``log sum_k exp jll[:, k, :]``, shape (n, C), each row's largest term taken out.

    A row whose terms are all ``-inf`` gives ``-inf`` (such a candidate is
    singular and scored ``-inf`` anyway).
    """
    top = jll.max(axis=1)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return top + np.log(np.exp(jll - top[:, None, :]).sum(axis=1))


def held_out_score(jll: _F, ok: NDArray[np.bool_], yi: NDArray[np.intp], w: _F, scoring: str) -> _F:
    """Held-out score and log-likelihood of each candidate, shape (2, C), from ``jll`` (n, K, C).

    ``scoring`` 'accuracy' or 'log_likelihood' (the mean log posterior of the
    true class); both weighted by ``w``; ``-inf`` where ``ok`` is False.
    """
    post = jll[np.arange(len(yi)), yi, :] - _log_sum_exp_classes(jll)
    log_lik = (w @ post) / w.sum()
    if scoring == "accuracy":
        correct = np.argmax(jll, axis=1) == yi[:, None]
        score = (w @ correct) / w.sum()
    else:
        score = log_lik
    return np.where(ok, np.stack([score, log_lik]), -np.inf)


def device_scores(
    X: Any,
    K: int,
    C: int,
    pieces: list[Any],
    log_priors: _F,
    p: int,
    yi: NDArray[np.intp],
    w: _F,
    scoring: str,
) -> _F:
    """Held-out score and log-likelihood of ``C`` candidates, shape (2, C), on the rows' device.

    ``pieces`` holds each job's ``(classes, (maha, logdet, good))``: the
    distances ``(n, len(classes), C)`` (or ``(n, C)`` for one class) of
    :func:`held_out_terms` or :func:`alpha_sweep_terms`. The joint log
    likelihood ``(n, K, C)`` is assembled and reduced where the rows are
    (log-sum-exp over the classes with each row's largest value taken out,
    the true class's term, the arg max); only the ``(2, C)`` scores come to
    the host. A class with no job (no training rows) scores ``-inf``.
    """
    from sklearn.utils._array_api import _convert_to_numpy

    xp = _namespace(X)
    n = int(X.shape[0])
    cols: list[Any] = [None] * K
    ok = np.ones(C, dtype=bool)
    log_2pi = float(np.log(2.0 * np.pi))
    for ks, (maha, logdet, good) in pieces:
        ok &= good
        if maha.ndim == 2:  # one class's (n, C)
            maha = maha[:, None, :]
        for j, k in enumerate(ks):
            cols[k] = on_rows(X, log_priors[k]) - 0.5 * (
                maha[:, j, :] + on_rows(X, logdet + p * log_2pi)
            )
    empty = xp.full((n, C), -np.inf, dtype=X.dtype, device=X.device)
    jll = xp.stack([empty if col is None else col for col in cols], axis=1)
    top = xp.max(jll, axis=1)
    lse = top + xp.log(xp.sum(xp.exp(jll - top[:, None, :]), axis=1))
    codes = xp.asarray(yi.astype(np.int64), device=X.device)
    mine = codes[:, None] == xp.arange(K, dtype=codes.dtype, device=X.device)[None, :]
    own = xp.sum(xp.where(mine[:, :, None], jll, xp.zeros_like(jll)), axis=1)
    wd = on_rows(X, w)
    total = float(w.sum())
    log_lik = np.asarray(_convert_to_numpy(wd @ (own - lse), xp)) / total
    if scoring == "accuracy":
        correct = xp.astype(xp.argmax(jll, axis=1) == codes[:, None], X.dtype)
        score = np.asarray(_convert_to_numpy(wd @ correct, xp)) / total
    else:
        score = log_lik
    return np.where(ok, np.stack([score, log_lik]), -np.inf)

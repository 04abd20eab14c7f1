"""Leave-one-out predictive densities of one column, per class and distinct value.

MixedNB's kind choice (:mod:`._mixed_choice`) scores each candidate kind by
the log density (or, on a lattice of step ``step``, the cell probability)
that a class's model fitted without one row gives that row: the normal
family by its Student-t predictive, the kernel by its density with the row
left out. ``v`` holds the column's sorted distinct values and ``W`` the
weight of each class at each value, shape (n_classes, U).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy import special

_F = NDArray[np.float64]
_LOG_2PI = float(np.log(2.0 * np.pi))

#: Above this many distinct values per column, the kernel's leave-one-out
#: score is computed on the values binned onto this many cells (of the
#: column's own range, so the same at every scale).
MAX_PAIRS = 1024


def _cell(z_hi: _F, z_lo: _F) -> _F:
    """``Phi(z_hi) - Phi(z_lo)``, accurate in both tails."""
    return np.where(
        z_lo > 0, special.ndtr(-z_lo) - special.ndtr(-z_hi), special.ndtr(z_hi) - special.ndtr(z_lo)
    )


def _log(x: _F) -> _F:
    return np.log(np.maximum(x, 1e-300))


def _gaussian_loo(v: _F, W: _F, eps: float, step: float) -> _F:
    """Per class and value, log of the leave-one-out normal predictive density (or cell probability).

    The class's mean and variance without one unit of weight at the value
    (the Chan-Golub-LeVeque downdate), and the density that a normal model of
    unknown mean and variance predicts from the ``m`` rows kept: Student's t
    with ``m - 1`` degrees of freedom and scale ``s * sqrt(1 + 1/m)`` (``s``
    the unbiased standard deviation, its square raised by ``eps`` as
    MixedNB's gaussian columns are). The plug-in normal of 8 rows is too
    narrow (its variance by a factor near 1.8 on average): its held-out
    score measures that noise rather than the column's shape, and a kernel
    density, wider by its bandwidth, beat it on normal columns of under 10
    rows a class. The t tends to the plug-in normal as ``m`` grows.
    """
    V = W.sum(axis=1, keepdims=True)
    mean = (W @ v)[:, None] / np.maximum(V, 1e-300)
    M2 = (W * (v[None, :] - mean) ** 2).sum(axis=1, keepdims=True)
    n1 = np.maximum(V - 1.0, 1e-300)
    m1 = (V * mean - v[None, :]) / n1
    M2_1 = np.maximum(M2 - (v[None, :] - mean) ** 2 * V / n1, 0.0)
    dof = np.maximum(n1 - 1.0, 1.0)
    scale2 = np.maximum(M2_1 / dof * (1.0 + 1.0 / np.maximum(n1, 1.0)) + eps, 1e-300)
    return _student(v, m1, scale2, dof, step)


def _student(v: _F, m: _F, scale2: _F, dof: _F, step: float) -> _F:
    """Log of Student's t density at ``v`` (or of its cell of width ``step``), both tails accurate."""
    sd = np.sqrt(scale2)
    dof = np.broadcast_to(dof, m.shape)
    if step > 0:
        hi, lo = (v[None, :] + 0.5 * step - m) / sd, (v[None, :] - 0.5 * step - m) / sd
        upper = special.stdtr(dof, -lo) - special.stdtr(dof, -hi)
        return _log(np.where(lo > 0, upper, special.stdtr(dof, hi) - special.stdtr(dof, lo)))
    z2 = (v[None, :] - m) ** 2 / scale2
    return (
        special.gammaln((dof + 1.0) / 2.0)
        - special.gammaln(dof / 2.0)
        - 0.5 * np.log(dof * np.pi * scale2)
        - (dof + 1.0) / 2.0 * np.log1p(z2 / dof)
    )


def _normal(v: _F, m: _F, var: _F, step: float) -> _F:
    if step > 0:
        sd = np.sqrt(var)
        return _log(_cell((v + 0.5 * step - m) / sd, (v - 0.5 * step - m) / sd))
    return -0.5 * (_LOG_2PI + np.log(var) + (v[None, :] - m) ** 2 / var)


def _kernel_loo(v: _F, W: _F, h: _F, step: float, loo: bool = True, h_rows: _F | None = None) -> _F:
    """Per class and value, log of the leave-one-out kernel density (or cell probability).

    ``h`` holds the bandwidth of each class; ``h_rows`` (n_classes, U), if
    given, the bandwidth of each class without one row at each value (the
    rule's bandwidth of the rows kept, so that a held-out row does not widen
    the kernel that scores it), used up to ``MAX_PAIRS`` distinct values.
    Beyond ``MAX_PAIRS`` values the other values are binned (the held-out one
    is not) and the class's bandwidth is used. With ``loo=False``, the density
    of the class's whole model (no row held out).
    """
    held = 1.0 if loo else 0.0
    V = W.sum(axis=1)
    src, Ws = v, W
    if v.size > MAX_PAIRS:
        lo, hi = v[0], v[-1]
        width = (hi - lo) / MAX_PAIRS
        idx = np.minimum(((v - lo) / width).astype(np.intp), MAX_PAIRS - 1)
        Ws = np.zeros((W.shape[0], MAX_PAIRS))
        for k in range(W.shape[0]):
            Ws[k] = np.bincount(idx, weights=W[k], minlength=MAX_PAIRS)
        sums = np.bincount(idx, weights=v * W.sum(axis=0), minlength=MAX_PAIRS)
        tot = np.bincount(idx, weights=W.sum(axis=0), minlength=MAX_PAIRS)
        src = np.where(
            tot > 0, sums / np.maximum(tot, 1e-300), lo + (np.arange(MAX_PAIRS) + 0.5) * width
        )
    out = np.empty(W.shape)
    cells = int(np.round((v[-1] - v[0]) / step)) + 1 if step > 0 else 0
    rows = h_rows is not None and v.size <= MAX_PAIRS
    if 0 < cells <= 4 * MAX_PAIRS and not rows:
        # on a lattice the kernel's cell mass depends only on the offset between
        # cells: one convolution per class instead of a (U, U) table
        idx = np.round((v - v[0]) / step).astype(np.intp)
        offsets = np.arange(-(cells - 1), cells) * step
        for k in range(W.shape[0]):
            hk = h[k]
            mass = _cell((offsets + 0.5 * step) / hk, (offsets - 0.5 * step) / hk)
            lattice = np.bincount(idx, weights=W[k], minlength=cells)
            total = np.convolve(lattice, mass)[cells - 1 : 2 * cells - 1][idx]
            self_mass = mass[cells - 1]
            out[k] = _log((total - held * self_mass) / max(V[k] - held, 1e-300))
        return out
    D = v[:, None] - src[None, :]  # (U, S)
    # the row held out of its own value's weight (exact where the values are
    # not binned), summed in logs: a far value keeps its tiny density
    own = held * np.eye(v.size) if src is v else 0.0
    for k in range(W.shape[0]):
        hk = (h_rows[k] if rows and h_rows is not None else np.full(v.size, h[k]))[:, None]
        # a density (times the cell, a fine lattice: the cell's mass to 0.1 %)
        cell = step if step > 0 else 1.0
        logm = -0.5 * (D / hk) ** 2 + np.log(cell / (hk * np.sqrt(2.0 * np.pi)))
        self_mass = cell / (hk[:, 0] * np.sqrt(2.0 * np.pi))
        coarse = step > 0.1 * hk[:, 0]  # a coarse lattice: each value's cell mass
        if np.any(coarse):
            hc = hk[coarse]
            logm[coarse] = _log(_cell((D[coarse] + 0.5 * step) / hc, (D[coarse] - 0.5 * step) / hc))
            self_mass[coarse] = _cell(0.5 * step / hc[:, 0], -0.5 * step / hc[:, 0])
        if src is v:
            wk = np.maximum(Ws[k][None, :] - own, 0.0)
            out[k] = np.maximum(special.logsumexp(logm, b=wk, axis=1), -690.0)
            out[k] -= np.log(max(V[k] - held, 1e-300))
        else:
            total = np.exp(logm) @ Ws[k]
            out[k] = _log((total - held * self_mass) / max(V[k] - held, 1e-300))
    return out

"""Mixture discriminant analysis' EM passes on the device: responsibilities and their moments.

A mixture fit (:mod:`bayesrule.estimators._mda_em`) is a sequence of passes
through ``reduce(task)``. The two passes a fit repeats, the seeding's hard
assignment and every EM iteration's E-step, are per-row work: the rows
projected onto the model's ``d`` directions, the log density of each row
under each of its class's components (one product with all the
components' whitenings at once), the responsibilities, and their weighted
moments (one product per component). Here they run in the input's
namespace on its device, in float64: the projected rows are computed once
per fit (sorted by class, as the NumPy pass sorts them), each pass's
component model (a few ``d x d`` matrices) goes to the device, and only the
moments (``C x d x d`` numbers a class), the log-likelihoods and the
``C`` worst-explained rows of each class come back, to be merged and
derived on the host exactly as the NumPy passes' are
(the pass's ``summarise_classes``). The survey and the
sample (one pass each: a pooled scatter and a hash of each row, which must
be bit-exact on the host) read one host copy of the data.

The formulas are the NumPy pass's, block for block of the same rows, so a
device fit runs the same EM iterations to the same model, to rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...models.mixture import BLOCK_ROWS, merge_moments
from ...stats import encode
from .arrays import to_host

__all__ = ["DeviceRows", "is_em_pass", "summarise"]

#: responsibilities below this are left out of a component's scatter when most
#: rows are (the NumPy pass's rule, :func:`~bayesrule.models.mixture.component_moments`)
REACH = 1e-10
_LOG_2PI = float(np.log(2.0 * np.pi))


def is_em_pass(task: Any) -> bool:
    """Whether ``task`` is a pass this module runs on the device (its ``em_pass``)."""
    return getattr(task, "em_pass", "") in ("assign", "estep")


class DeviceRows:
    """One fit's rows on the device, projected (once per projection) and sorted by class."""

    def __init__(self, X: Any, y: Any, w: Any, xp: Any, acc: Any) -> None:
        self.X, self.y, self.w, self.xp, self.acc = X, y, np.asarray(w, dtype=np.float64), xp, acc
        self._cached: tuple[Any, Any] | None = None

    def projected(self, proj: Any, classes: Any) -> tuple[Any, Any, Any]:
        """``(Z, w, bounds)``: projected rows and weights in class order, each class's slice."""
        if self._cached is not None and self._cached[0] is proj:
            return self._cached[1]
        xp = self.xp
        yi = encode(self.y, classes)
        order = np.argsort(yi, kind="stable")
        dev = self.X.device
        Xs = xp.astype(xp.take(self.X, xp.asarray(order, device=dev), axis=0), self.acc)
        if not proj.identity:
            B = np.asarray(proj.basis) / np.asarray(proj.scale)[:, None]
            centre = xp.asarray(np.asarray(proj.centre, dtype=np.float64), device=dev)
            Xs = (Xs - centre) @ xp.asarray(B, dtype=self.acc, device=dev)
        value = (
            Xs,
            xp.asarray(self.w[order], dtype=self.acc, device=dev),
            np.searchsorted(yi[order], np.arange(classes.size + 1)),
        )
        self._cached = (proj, value)
        return value


def _moments(xp: Any, Z: Any, R: Any, w: Any) -> tuple[Any, Any, Any]:
    """Per-component weight, mean and centred scatter of a block (host values)."""
    n, C = int(R.shape[0]), int(R.shape[1])
    WR = R * w[:, None]
    W = xp.sum(WR, axis=0)
    safe = xp.where(W > 0, W, xp.ones_like(W))
    means = (WR.T @ Z) / safe[:, None]
    root = xp.sqrt(WR)
    reached = R > REACH
    counts = to_host(xp.sum(xp.astype(reached, xp.int64), axis=0))
    scatter = []
    for c in range(C):
        scale = (
            root[:, c] if counts[c] > 0.7 * n else root[:, c] * xp.astype(reached[:, c], Z.dtype)
        )
        A = (Z - means[c, :]) * scale[:, None]
        scatter.append(A.T @ A)
    return to_host(W), to_host(means), to_host(xp.stack(scatter))


def _log_prob_terms(xp: Any, comps: Any, which: Any, d: int, dt: Any, dev: Any) -> dict[str, Any]:
    """What the component log density of a class needs, on the device (made once a pass)."""

    def on(a: Any) -> Any:
        return xp.asarray(np.ascontiguousarray(a, dtype=np.float64), dtype=dt, device=dev)

    kind = comps.covariance_type
    mu = comps.means[which]
    Cn = which.size
    const = comps.log_weights[which] - 0.5 * (comps.log_det[which] + d * _LOG_2PI)
    terms: dict[str, Any] = {"kind": kind, "const": on(const), "Cn": Cn}
    if kind in ("full", "shared"):
        Wt = comps.whitening[which]
        terms["flat"] = on(Wt.transpose(1, 0, 2).reshape(d, Cn * d))
        terms["shift"] = on(np.einsum("cd,cde->ce", mu, Wt).reshape(1, Cn * d))
    elif kind in ("diag", "spherical"):
        prec = 1.0 / comps.factors[which]
        terms.update(
            prec_t=on(prec.T),
            lin=on((mu * prec).T),
            quad=on(np.einsum("cd,cd->c", mu * mu, prec)),
        )
    else:
        U = comps.factors[which]
        q = U.shape[2]
        terms.update(
            q=q,
            mu_t=on(mu.T),
            mm=on(np.einsum("cd,cd->c", mu, mu)),
            s2=on(comps.noise[which]),
            flat=on(U.transpose(1, 0, 2).reshape(d, Cn * q)),
            shift=on(np.einsum("cd,cdq->cq", mu, U).reshape(1, Cn * q)),
            damp=on(comps.whitening[which].reshape(1, Cn * q)),
        )
    return terms


def _log_prob(xp: Any, Z: Any, t: dict[str, Any]) -> Any:
    """``log w_c + log N(z; m_c, Sigma_c)`` of a block, (n, C): the NumPy formula's products."""
    n, d = int(Z.shape[0]), int(Z.shape[1])
    Cn, kind = t["Cn"], t["kind"]
    if kind in ("full", "shared"):
        Y = Z @ t["flat"] - t["shift"]
        out = xp.sum(xp.reshape(Y * Y, (n, Cn, d)), axis=2)
    elif kind in ("diag", "spherical"):
        out = (Z * Z) @ t["prec_t"] - 2.0 * (Z @ t["lin"]) + t["quad"]
    else:
        r2 = xp.sum(Z * Z, axis=1)[:, None] - 2.0 * (Z @ t["mu_t"]) + t["mm"]
        if t["q"]:
            P = Z @ t["flat"] - t["shift"]
            P = P * P * t["damp"]
            r2 = r2 - xp.sum(xp.reshape(P, (n, Cn, t["q"])), axis=2)
        out = xp.maximum(r2, xp.zeros_like(r2)) / t["s2"]
    out = xp.maximum(out, xp.zeros_like(out))
    return t["const"] - 0.5 * out


def _row_blocks(n: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of blocks of :data:`BLOCK_ROWS` rows, stops in bounds (the array
    API leaves a slice stop past the end unspecified)."""
    return [(s, min(s + BLOCK_ROWS, n)) for s in range(0, n, BLOCK_ROWS)]


def _assign_rows(xp: Any, task: Any, Z: Any, w: Any, which: Any) -> tuple[Any, ...]:
    """The seeding pass of one class: each row to its nearest seed (hard responsibilities)."""
    S = task.seeds[which]
    dev, dt = Z.device, Z.dtype
    St = xp.asarray(np.ascontiguousarray(S.T), dtype=dt, device=dev)
    ss = xp.asarray(np.einsum("cd,cd->c", S, S), dtype=dt, device=dev)
    ks = xp.arange(which.size, device=dev)
    out = None
    n = int(Z.shape[0])
    for s, e in _row_blocks(n):
        Zb, wb = Z[s:e, :], w[s:e]
        dist = xp.sum(Zb * Zb, axis=1)[:, None] - 2.0 * (Zb @ St) + ss
        nearest = xp.argmin(dist, axis=1)
        R = xp.astype(nearest[:, None] == ks[None, :], dt)
        part = _moments(xp, Zb, R, wb)
        out = part if out is None else merge_moments(out, part)
    return out, 0.0


def _estep_rows(xp: Any, task: Any, Z: Any, w: Any, k: int, which: Any) -> tuple[Any, ...]:
    """One EM iteration's pass over one class: responsibilities, moments, likelihood, worst rows."""
    d = int(Z.shape[1])
    t = _log_prob_terms(xp, task.comps, which, d, Z.dtype, Z.device)
    floor = np.finfo(np.float64).min
    out = None
    ll_total = 0.0
    ll_rows = []
    n = int(Z.shape[0])
    for s, e in _row_blocks(n):
        Zb, wb = Z[s:e, :], w[s:e]
        lp = _log_prob(xp, Zb, t)
        top = xp.max(lp, axis=1)
        finite = xp.isfinite(top)
        zero = xp.zeros_like(top)
        safe_top = xp.where(finite, top, zero)
        ll = safe_top + xp.log(xp.sum(xp.exp(lp - safe_top[:, None]), axis=1))
        ll = xp.where(finite, ll, zero)
        R = xp.exp(lp - ll[:, None])
        if not bool(xp.all(finite)):  # a row no component reaches: to all equally
            R = xp.where(finite[:, None], R, xp.full_like(R, 1.0 / int(lp.shape[1])))
            ll = xp.where(finite, ll, xp.full_like(ll, floor))
        part = _moments(xp, Zb, R, wb)
        out = part if out is None else merge_moments(out, part)
        ll_host = to_host(ll)
        ll_total += float(to_host(wb) @ ll_host)
        ll_rows.append(ll_host)
    rows = np.concatenate(ll_rows) if ll_rows else np.zeros(0)

    def rows_of(pos: Any) -> Any:
        return to_host(xp.take(Z, xp.asarray(pos, device=Z.device), axis=0))

    worst = task.worst_of_class(rows, to_host(w), k, which.size, rows_of)
    return (out, ll_total, *worst)


def summarise(task: Any, rows: DeviceRows) -> Any:
    """The pass's :class:`~bayesrule.models.mixture.PassMoments`, computed on the device."""
    xp = rows.xp
    Zs, ws, bounds = rows.projected(task.ctx.proj, task.ctx.classes)

    def class_rows(k: int, a: int, b: int, which: Any) -> tuple[Any, ...]:
        Z, w = Zs[a:b, :], ws[a:b]
        if task.em_pass == "assign":
            return _assign_rows(xp, task, Z, w, which)
        return _estep_rows(xp, task, Z, w, k, which)

    return task.summarise_classes(bounds, class_rows)

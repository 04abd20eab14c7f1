"""The projection of a mixture discriminant analysis, fitted on the survey's moments.

The features are divided by their ranges in the training data before PCA or
Fisher's directions, so the projected rows do not depend on the features'
units (see :class:`~bayesrule.models.mixture.Projection`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import eigh

from ..models.mixture import Projection

__all__ = ["feature_scale", "fit_projection", "residual_floor"]

_F = NDArray[np.float64]


def fit_projection(moments: Any, projection: str | None, n_dims: int | None) -> Projection:
    """The projection of ``MixtureDiscriminantAnalysis``, from the survey's class means and
    pooled within-class scatter (see its ``projection`` and ``n_dims``).

    'pca' and 'fisher' work in the features divided by their ranges in
    the training data (rows of positive weight): a feature in grams and
    the same feature in kilograms give the same projected rows.
    """
    p = int(moments.n_features)
    check_overflow(moments)
    if projection is None:
        return Projection(np.zeros(p), np.eye(p), 0.0)
    scale = feature_scale(moments.lower, moments.upper)
    K = int(moments.n_classes)
    centre, within, between = _scaled_moments(moments, scale)
    total = within + between
    total = 0.5 * (total + total.T)
    if projection == "pca":
        d = min(n_dims or 60, p)
        if d >= p:
            return Projection(centre, np.eye(p), 0.0, scale)
        vals, vecs = eigh(total, subset_by_index=[p - d, p - 1])
        basis = vecs[:, ::-1]
        captured = float(np.maximum(vals, 0.0).sum())
    else:
        d = min(n_dims or (K - 1), p)
        within = 0.5 * (within + within.T)
        ridge = 1e-6 * max(float(np.trace(within)) / p, 1e-300)
        vals, vecs = eigh(between, within + ridge * np.eye(p))
        basis, _ = np.linalg.qr(vecs[:, ::-1][:, :d])
        captured = float(np.einsum("pd,pq,qd->", basis, total, basis))
    # each axis points to where its largest coordinate is positive: the
    # same axes from moments that differ by rounding (blocks merged in
    # another order)
    top = np.argmax(np.abs(basis), axis=0)
    basis = basis * np.where(basis[top, np.arange(basis.shape[1])] < 0, -1.0, 1.0)
    rest = max(float(np.trace(total)) - captured, 0.0) / max(p - d, 1)
    floor = 1e-12 * max(float(np.trace(total)) / p, 1e-300)
    return Projection(centre, np.ascontiguousarray(basis), max(rest, floor), scale)


def residual_floor(moments: Any, proj: Projection, ridge: float) -> Projection:
    """``proj`` with its residual variance floored where the training rows cannot show it.

    ``n`` rows span at most ``n - 1`` dimensions, so of the ``p - d``
    dimensions the projection leaves out at most ``max(n - 1 - d, 0)`` hold
    any variation of the training rows; in the others their residual is 0
    whatever a new row's is (more features than rows: ``-|r|^2 / (2 * 0)``
    nats). The residual variance is at least ``ridge`` (``reg_covar_``, the
    relative ridge of the components) times the mean variance of a scaled
    feature, times the share of those dimensions the rows cannot reach,
    ``1 - max(n - 1 - d, 0) / (p - d)``: no floor at all where the rows
    span every feature (``n > p``), the whole floor where ``n - 1 <= d``.
    Unit-free, as the scaled features are.
    """
    p, d = proj.basis.shape
    if d >= p or ridge <= 0:
        return proj
    n = int(np.asarray(moments.counts).sum())
    unseen = 1.0 - max(n - 1 - d, 0) / (p - d)
    if unseen <= 0:
        return proj
    _, within, between = _scaled_moments(moments, np.asarray(proj.scale))
    mean_var = float(np.trace(within) + np.trace(between)) / p
    floor = float(ridge) * mean_var * unseen
    if not (np.isfinite(floor) and floor > proj.residual_var):
        return proj
    return Projection(proj.centre, proj.basis, floor, proj.scale)


def _scaled_moments(moments: Any, scale: _F) -> tuple[_F, _F, _F]:
    """The weighted centre, and the within- and between-class covariances of the scaled features."""
    cw = np.asarray(moments.weights, dtype=np.float64)
    W = float(cw.sum())
    centre = (cw @ moments.means) / W
    cm = (moments.means - centre) / scale
    between = (cm * cw[:, None]).T @ cm / W
    within = moments.scatter / W / np.outer(scale, scale)
    return centre, within, between


def feature_scale(lower: ArrayLike, upper: ArrayLike) -> _F:
    """Each feature's range ``upper - lower``; 1 where it is zero or unknown (a constant feature).

    The range is equivariant (a feature times ``a`` has ``a`` times the
    range), so features divided by it do not depend on their units; unlike
    the standard deviation it does not blow up a feature that is almost
    always one value (an image's border pixel).
    """
    with np.errstate(invalid="ignore", over="ignore"):
        r = np.asarray(upper, dtype=np.float64) - np.asarray(lower, dtype=np.float64)
    return np.where(np.isfinite(r) & (r > 0), r, 1.0)


def check_overflow(moments: Any) -> None:
    """Refuse data whose squares overflow float64 (the survey's scatter is not finite)."""
    spread = moments.scatter if hasattr(moments, "scatter") else moments.m2
    if not (np.all(np.isfinite(moments.means)) and np.all(np.isfinite(spread))):
        raise ValueError(
            "the within-class covariance is not finite: X holds values so large that their "
            "squares overflow float64; rescale X."
        )

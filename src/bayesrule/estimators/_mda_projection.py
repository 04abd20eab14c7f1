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

__all__ = ["feature_scale", "fit_projection"]

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
    cw = np.asarray(moments.weights, dtype=np.float64)
    W = float(cw.sum())
    centre = (cw @ moments.means) / W
    cm = (moments.means - centre) / scale
    between = (cm * cw[:, None]).T @ cm / W
    within = moments.scatter / W / np.outer(scale, scale)
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

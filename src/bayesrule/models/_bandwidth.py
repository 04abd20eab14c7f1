"""The bandwidths of the kernel densities: rules of thumb, checks, and the options.

Scott's and Silverman's rules from each class's weighted moments, with a
floor relative to the feature's spread over all classes, the checks of a
``bandwidth`` given by the user and of one too small for float64 to resolve,
and the checked options of a kernel ``from_stats``
(:class:`~bayesrule.models.KernelDensity`,
:class:`~bayesrule.models.PointMassKernelDensity`).
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._checks import check_nonnegative_float, feature_name
from ._types import Floats as _F
from .diagonal import total_variance

__all__ = [
    "bandwidths",
    "check_bandwidth",
    "check_bandwidth_resolution",
    "kde_options",
    "weighted_moments",
]

_RULES = ("scott", "silverman", "cv")


def check_bandwidth(bandwidth: Any, n_features: int, names: Any) -> Any:
    """A rule name, or the bandwidth as a positive float or (n_features,) array."""
    if isinstance(bandwidth, str):
        if bandwidth not in _RULES:
            raise ValueError(
                f"bandwidth must be 'scott', 'silverman', 'cv', a float or one float per "
                f"feature; got {bandwidth!r}."
            )
        return bandwidth
    try:
        b = np.asarray(bandwidth, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"bandwidth must be 'scott', 'silverman', 'cv', a float or one float per feature; "
            f"got {bandwidth!r}."
        ) from None
    if b.ndim > 1 or (b.ndim == 1 and b.shape[0] != n_features):
        raise ValueError(
            f"bandwidth must be 'scott', 'silverman', 'cv', a float or one float per feature "
            f"({n_features}); got shape {b.shape}."
        )
    bad = ~(np.isfinite(np.atleast_1d(b)) & (np.atleast_1d(b) > 0))
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        where = f" for feature {feature_name(names, j)!r}" if b.ndim == 1 else ""
        raise ValueError(f"bandwidth must be positive{where}; got {np.atleast_1d(b)[j]}.")
    return b


#: a kernel narrower than this share of its feature's range of values gives
#: squared standardised distances between the values that overflow float64
#: (log densities of -inf between two training values)
_MIN_RELATIVE_BANDWIDTH = 1e-150


def check_bandwidth_resolution(h: _F, indptr: Any, values: _F, names: Any, bandwidth: Any) -> None:
    """Refuse bandwidths ``h`` (n_rows, n_features) so small that the densities underflow.

    Between two stored values of feature ``j`` the kernel's log is
    ``-(x - v)^2 / (2 h^2)``; a bandwidth below ``1e-150`` times the
    feature's range of values makes it overflow to ``-inf`` (a density that
    underflows to 0 between the training values). The message names the
    ``bandwidth`` parameter and the feature.
    """
    counts = np.diff(indptr)
    has = counts > 0
    if not has.any() or h.size == 0:
        return
    starts = np.asarray(indptr[:-1])[has]
    span = np.zeros(counts.size)
    span[has] = values[starts + counts[has] - 1] - values[starts]
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        ratio = span[None, :] / h
    bad = ratio > 1.0 / _MIN_RELATIVE_BANDWIDTH
    if bad.any():
        k, j = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(
            f"bandwidth={bandwidth!r} gives feature {feature_name(names, j)!r} a kernel of "
            f"width {h[k, j]:.3g}, against a range of values of {span[j]:.3g}: the kernel "
            "densities underflow to 0 between the training values (log density -inf). Give a "
            f"bandwidth of at least {_MIN_RELATIVE_BANDWIDTH:g} times the feature's range, or "
            "a rule ('scott', 'silverman', 'cv')."
        )


def weighted_moments(indptr: Any, values: _F, W: _F) -> tuple[_F, _F, _F]:
    """Per row of ``W`` (n_rows, n_values) and feature, ``(V, mean, M2)`` of the stored values.

    The moments of :meth:`bayesrule.stats.ValueCountStats.moments` for any
    weights over the same values (the continuous part of a feature, say).
    """
    p = len(indptr) - 1
    feature = np.repeat(np.arange(p), np.diff(indptr))
    F = sp.csr_matrix(
        (np.ones(values.size), (np.arange(values.size), feature)), shape=(values.size, p)
    )
    V = np.asarray(W @ F)
    safe = np.where(V > 0, V, 1.0)
    mean = np.asarray((W * values) @ F) / safe
    d = values[None, :] - mean[:, feature]
    return V, mean, np.asarray((W * d * d) @ F)


def bandwidths(moments: tuple[_F, _F, _F], b: Any, floor: float) -> tuple[_F, _F, _F, _F]:
    """Bandwidths of a checked ``b`` from ``(V, mean, M2)``: ``(h, V, h_scott, lower)``.
    Per-class, per-feature bandwidths for 'scott' / 'silverman' / a float / one per feature.

        ``stats`` is a :class:`bayesrule.stats.ValueCountStats`. Returns ``(h, V,
        h_scott)``, each (n_classes, n_features), with ``V`` the observed weight.
        The rule-of-thumb bandwidths are ``sd_kj * V_kj^(-1/5)`` (Scott) and
        ``sd_kj * (3 V_kj / 4)^(-1/5)`` (Silverman), with ``sd`` the unbiased
        weighted standard deviation, as ``scipy.stats.gaussian_kde`` in one
        dimension. They are raised to at least ``floor`` times the feature's
        Scott bandwidth over all classes, so that a feature constant within a
        class (MNIST's border pixels) keeps a density. ('cv' starts from Scott's.)
    """
    V, mean, m2 = moments
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sd = np.sqrt(np.where(V > 1, m2 / np.where(V > 1, V - 1, 1.0), 0.0))
        safe = np.where(V > 0, V, 1.0)
        h_scott = sd * safe ** (-0.2)
        Vt = V.sum(axis=0)
        var_t = total_variance(V, mean, m2) * Vt / np.where(Vt > 1, Vt - 1, 1.0)
        h_total = np.sqrt(var_t) * np.where(Vt > 0, Vt, 1.0) ** (-0.2)
        # a feature constant up to the rounding of its mean has no spread to be relative
        # to; every class then has its one value, and any common bandwidth cancels
        centre = (V * mean).sum(axis=0) / np.where(Vt > 0, Vt, 1.0)
        h_total = np.where(var_t <= (1e-12 * centre) ** 2, 0.0, h_total)
    h_total = np.where(h_total > 0, h_total, 1.0)
    lower = np.broadcast_to(floor * h_total, V.shape)
    if isinstance(b, str):
        h = h_scott if b in ("scott", "cv") else sd * (0.75 * safe) ** (-0.2)
        return np.maximum(h, lower), V, np.maximum(h_scott, lower), lower
    return np.broadcast_to(b, V.shape).copy(), V, np.maximum(h_scott, lower), lower


def kde_options(
    bandwidth: Any,
    bandwidth_floor: Any,
    method: Any,
    grid_size: Any,
    n_features: int,
    feature_names: Any = None,
) -> tuple[Any, float, dict[str, Any]]:
    """The checked kernel options of a ``from_stats``: ``(bandwidth, floor, kde keywords)``.

    ``kde keywords`` are the ``method`` and ``grid_size`` that
    :class:`KernelDensity` takes; a ValueError names the option that is wrong.
    """
    floor = check_nonnegative_float(bandwidth_floor, "bandwidth_floor")
    if isinstance(grid_size, (bool, np.bool_)) or not isinstance(grid_size, Integral):
        raise ValueError(f"grid_size must be an int >= 16; got {grid_size!r}.")
    if grid_size < 16:
        raise ValueError(f"grid_size must be an int >= 16; got {grid_size!r}.")
    if method not in ("auto", "exact", "grid"):
        raise ValueError(f"method must be 'auto', 'exact' or 'grid'; got {method!r}.")
    b = check_bandwidth(bandwidth, n_features, feature_names)
    return b, floor, {"method": method, "grid_size": int(grid_size)}

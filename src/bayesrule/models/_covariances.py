"""The covariance estimates of a family of Gaussians, before regularisation.

Each class's covariance from its scatter (blended with the pooled one,
shrunk), the checks that its weight and the statistics allow it, the
unit-free scale of the features, and the test for a covariance singular on
the scale of its correlations. :class:`~bayesrule.models.gaussian.GaussianFamily`
and :class:`~bayesrule.models.tied.TiedGaussian` derive from them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import eigvalsh

from .._util.validation import TooFewRows
from ._types import Floats as _F
from .covariance import (
    NEEDS_FOURTH,
    constant_features,
    shrink,
    shrink_to_diagonal,
    standardised_intensity,
    target_diagonal,
)

__all__ = [
    "blended_covariance",
    "check_own_weight",
    "class_covariances",
    "correlation_singular",
    "mean_pooled_variance",
    "needs_statistics",
    "pooled_scale",
    "range_scale",
    "shrinkage_scale",
    "SHRINKAGE_TARGETS",
]

#: RDA's ``target`` values: the coordinates its ``gamma`` and ``ridge`` shrink in
SHRINKAGE_TARGETS = ("pooled", "range", "identity")


def needs_statistics(stats: Any, shrinkage: Any) -> None:
    """ValueError unless ``stats`` hold what an estimated ``shrinkage`` needs.

    Every estimated intensity needs the per-class scatter; Ledoit-Wolf also
    the fourth moments of :class:`~bayesrule.stats.FourthMomentStats`.
    """
    if not isinstance(shrinkage, str):
        return
    if np.ndim(getattr(stats, "scatter", 0.0)) != 3:
        raise ValueError(
            f"shrinkage={shrinkage!r} is estimated from each class's scatter, which "
            f"{type(stats).__name__} does not hold; collect ScatterStats or "
            "FourthMomentStats, or use a float shrinkage."
        )
    if shrinkage in NEEDS_FOURTH and getattr(stats, "q", None) is None:
        raise ValueError(
            f"shrinkage={shrinkage!r} (Ledoit-Wolf in the correlation scale) needs the "
            f"fourth moments of FourthMomentStats, and these statistics are "
            f"{type(stats).__name__}: fit with moments='fourth' (or with this shrinkage "
            "set, moments='auto'), or use shrinkage='oas' or a float, which need none."
        )


def _label(classes: NDArray[Any], k: Any) -> str:
    """A class label as the user wrote it (``3`` or ``'cat'``, not ``np.int64(3)``)."""
    return repr(classes[k : k + 1].tolist()[0])


def _weight_text(stats: Any, k: Any) -> str:
    n, w = int(stats.counts[k]), float(stats.weights[k])
    return f"{n} sample" + ("s" if n != 1 else "") + (f" of total weight {w:g}" if w != n else "")


def correlation_singular(cov: _F, tol: float, *, lower: float = 0.0) -> tuple[bool, str]:
    r"""Whether a covariance is singular on the scale of its correlation matrix.

    ``cov`` is singular when a feature has no variance, or when the smallest
    eigenvalue of its correlation matrix ``C = D^-1/2 cov D^-1/2`` (``D`` the
    variances) is at most ``tol``: scikit-learn QDA's test (eigenvalues of
    the covariance, variances, at most ``tol``) made on standardised
    features. Rescaling the features leaves ``C``, and so the answer,
    unchanged: ``tol`` has no units.

    ``lower`` is a known lower bound on the eigenvalues of ``cov`` itself
    (from ``reg_param`` or shrinkage). When it proves ``cov`` regular — with
    ``lmin(C) >= lower / max(D)`` — the eigenvalues of ``C`` are not computed.

    Returns
    -------
    singular : bool
    reason : str
        For a singular ``cov``, the eigenvalue (or feature) that makes it so.
    """
    var = np.diag(cov)
    if var.min() <= 0:
        return True, f"feature {int(np.argmin(var))} has no variance"
    if lower > 0 and lower / float(var.max()) > tol:
        return False, ""
    s = np.sqrt(var)
    lam = eigvalsh(cov / np.outer(s, s), driver="evd")
    if lam[0] > tol:
        return False, ""
    return True, f"its correlation matrix has smallest eigenvalue {lam[0]:.3g} <= tol={tol:g}"


def range_scale(stats: Any) -> _F:
    """Each feature's range ``upper - lower`` in the statistics' bounds: the unit of RDA's targets.

    A feature with range 0 (constant in the data) takes its value's
    magnitude instead. The units are returned relative to the largest (a
    factor common to every feature changes no target), and 1 (the largest)
    where no unit can be read from the data (a constant 0, unknown bounds). The unit of the coordinates ``z_j = x_j / r_j`` in which RDA's shrinkage
    targets are scaled identities (see :meth:`GaussianFamily.from_stats`'s
    ``target_scale``): a feature's range carries its unit, so targets built
    there do not depend on the features' units. Merged statistics have the
    merged range, so ``merge``/``partial_fit`` give the model of one fit.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        r = np.asarray(stats.upper, dtype=np.float64) - np.asarray(stats.lower, dtype=np.float64)
        size = np.abs(np.asarray(stats.upper, dtype=np.float64))
    ok = np.isfinite(r) & (r > 0)
    constant = np.isfinite(size) & (size > 0) & (r == 0)
    unit = np.where(ok, r, np.where(constant, size, np.nan))
    # one common factor changes no target (each is relative to the data's own
    # variance), so the units are taken relative to the largest: data of
    # range 1e-300 would otherwise underflow in cov / (r r')
    top = np.nanmax(unit) if np.any(np.isfinite(unit)) else 1.0
    return np.where(np.isfinite(unit), unit / top, 1.0)


def pooled_scale(stats: Any) -> _F:
    """Each feature's pooled within-class standard deviation: the default unit of RDA's targets.

    ``sqrt(sum_k S_k[j, j])`` from the class scatters (a ddof or a factor
    common to every feature changes no target, each being relative to the
    data's own variance, so the units are returned relative to the largest).
    In the coordinates ``z_j = x_j / s_j`` the pooled covariance has equal
    variances, so a scaled identity there is ``diag(pooled variances)`` in
    the features' units: a target that follows each feature's unit. A
    feature without pooled variance (or constant in the statistics' bounds,
    whatever rounding a subtraction left in its scatter) takes the magnitude
    of its mean (its value, for a feature constant in the data) and, when that is 0 too
    (a pixel that is 0 in every row), the largest unit (1): no unit can be
    read from such a feature, which is the only case where rescaling one
    feature alone can change the model. A function of the statistics, so
    ``merge``, ``partial_fit`` and ``forget`` give the model of one fit.
    """
    present = stats.weights > 0
    with np.errstate(invalid="ignore", over="ignore"):
        var = np.einsum("kii->i", stats.scatter[present])
        s = np.sqrt(var)
        total = float(stats.weights[present].sum())
        centre = (
            stats.weights[present] @ stats.means[present] / total
            if total > 0
            else np.zeros(stats.n_features)
        )
        # the size of a constant feature: its bounds (a subtraction of
        # statistics leaves rounding in its mean), or its mean where unknown
        bound = np.maximum(np.abs(stats.upper), np.abs(stats.lower))
        size = np.where(np.isfinite(bound), bound, np.abs(centre))
        # a feature constant in the rows seen (its bounds equal) has no variance,
        # whatever rounding a subtraction of statistics left in its scatter
        constant = np.asarray(stats.upper, dtype=np.float64) == np.asarray(
            stats.lower, dtype=np.float64
        )
    ok = np.isfinite(s) & (s > 0) & ~constant
    unit = np.where(ok, s, np.where(np.isfinite(size) & (size > 0), size, np.nan))
    top = np.nanmax(unit) if np.any(np.isfinite(unit)) else 1.0
    return np.where(np.isfinite(unit), unit / top, 1.0)


def shrinkage_scale(stats: Any, target: str) -> _F | None:
    """The ``target_scale`` of RDA's ``target``: pooled, range or None (the features' units)."""
    if target == "pooled":
        return pooled_scale(stats)
    if target == "range":
        return range_scale(stats)
    if target == "identity":
        return None
    raise ValueError(f"target must be one of {SHRINKAGE_TARGETS}; got {target!r}.")


def mean_pooled_variance(stats: Any, ddof: float, scale: _F | None = None) -> float:
    """``tr(Sigma_pooled) / p``, the average within-class variance: the scale of ``ridge``.

    From the traces of the class scatters, without forming the pooled matrix;
    the divisor is :meth:`~bayesrule.stats.ScatterStats.pooled_covariance`'s.
    With ``scale`` (shape (p,)), the average variance of ``x_j / scale_j``.
    """
    present = stats.weights > 0
    denom = float(stats.weights.sum()) - ddof * int(np.count_nonzero(present))
    if denom <= 0:
        raise TooFewRows(
            f"the pooled covariance needs more weight than classes: total weight "
            f"{float(stats.weights.sum()):g} with {int(np.count_nonzero(present))} classes (the unbiased estimate divides by weight - classes); give rows more weight (sample_weight) or use bias=True."
        )
    if scale is None:
        traces = np.einsum("kii->k", stats.scatter[present])
    else:
        traces = np.einsum("kii,i->k", stats.scatter[present], 1.0 / np.square(scale))
    return float(traces.sum()) / denom / stats.n_features


def check_own_weight(stats: Any, k: int, ddof: float, alpha: float) -> None:
    """Raise the ValueError of a class ``k`` too light for its own covariance (``alpha > 0``)."""
    if alpha > 0 and stats.weights[k] - ddof <= 0:
        pooled = (
            "the pooled covariance, which the classes share (LinearDiscriminantAnalysis, or "
            "RegularizedDiscriminantAnalysis with alpha=0)"
        )
        if stats.counts[k] > ddof:
            # rows enough, weight too little: the weights are the cause, not the rows
            raise TooFewRows(
                f"class {_label(stats.classes, k)} has {_weight_text(stats, k)}: its "
                f"covariance divides the class's scatter by its total weight less {ddof:g}, "
                "which leaves nothing (weights count as rows). Give the class's rows larger "
                f"weights, or use {pooled}."
            )
        blend = f", which enters the blend with weight alpha={alpha:g}" if alpha < 1 else ""
        raise TooFewRows(
            f"class {_label(stats.classes, k)} has {_weight_text(stats, k)}; at least "
            f"{ddof + 1:g} samples are needed to estimate its covariance{blend}. Use "
            f"{pooled}, or more rows of the class."
        )


def blended_covariance(stats: Any, k: int, *, ddof: float, alpha: float, pooled: _F | None) -> _F:
    r"""Friedman's blend of class ``k``, ``alpha S_k / (W_k - ddof) + (1 - alpha) Sigma_pooled``.

    ``pooled`` is ``stats.pooled_covariance(ddof)`` (unused, may be None, when
    ``alpha == 1``). The one expression both :func:`class_covariances` and
    RDA-CV's held-out scoring use, so that both see the same matrix to the bit.
    """
    if alpha <= 0:
        assert pooled is not None
        return pooled.copy()
    own = stats.scatter[k] / (stats.weights[k] - ddof)
    return own if pooled is None or alpha >= 1.0 else alpha * own + (1.0 - alpha) * pooled


def class_covariances(
    stats: Any,
    *,
    ddof: float = 1.0,
    alpha: float = 1.0,
    shrinkage: Any = None,
    covariances: _F | None = None,
    constant_unit_scale: bool = False,
) -> tuple[_F, _F, _F]:
    r"""Per-class covariances of the classes with weight, before ``reg_param``.

    ``Sigma_k(alpha) = alpha S_k / (W_k - ddof) + (1 - alpha) Sigma_pooled``
    (``covariances[k]`` instead of the empirical estimate when given), then
    shrunk: a float ``a`` towards ``(tr/p) I``; 'auto' / 'ledoit-wolf' /
    'oas' (which need ``alpha=1``) in the class's correlation scale,
    ``(1 - a_k) Sigma_k + a_k mu_k diag(Sigma_k)`` with ``a_k`` and ``mu_k``
    from :func:`~bayesrule.covariance.standardised_intensity` (free of the
    features' units). With ``constant_unit_scale`` a feature constant within
    the class gets scikit-learn's ``StandardScaler`` scale 1 instead: its
    entry of ``diag(Sigma_k)`` in the target becomes 1, a variance of
    ``a_k mu_k`` in its own units (scikit-learn's model, which depends on
    them; see :func:`~bayesrule.covariance.shrink_to_diagonal`).

    Returns
    -------
    covs : ndarray of shape (n_present, p, p)
    intensity : ndarray of shape (n_present,)
        The shrinkage intensity used for each class.
    lower : ndarray of shape (n_present,)
        A lower bound on the eigenvalues of each shrunk covariance (0 when
        there is no shrinkage).
    """
    present = np.flatnonzero(stats.weights > 0)
    if isinstance(shrinkage, str) and alpha != 1.0:
        raise ValueError(
            f"shrinkage={shrinkage!r} is estimated from each class's own covariance; "
            f"it needs alpha=1, got alpha={alpha:g}. Use a float shrinkage."
        )
    if covariances is not None and alpha != 1.0:
        raise ValueError("given class covariances need alpha=1.")
    if isinstance(shrinkage, str) and covariances is None:
        needs_statistics(stats, shrinkage)
    q = getattr(stats, "q", None) if shrinkage in NEEDS_FOURTH else None
    pooled = stats.pooled_covariance(ddof) if alpha < 1.0 else None
    p = stats.n_features
    covs = np.empty((present.size, p, p))
    intensity = np.zeros(present.size)
    lower = np.zeros(present.size)
    for i, k in enumerate(present):
        if covariances is not None:
            covs[i] = covariances[k]
            continue
        check_own_weight(stats, int(k), ddof, alpha)
        covs[i] = blended_covariance(stats, int(k), ddof=ddof, alpha=alpha, pooled=pooled)
        if isinstance(shrinkage, str):
            W = float(stats.weights[k])
            a, mu = standardised_intensity(
                shrinkage, stats.scatter[k], W, stats.means[k], None if q is None else q[k]
            )
            intensity[i] = a
            if a and constant_unit_scale:
                constant = constant_features(np.diag(stats.scatter[k]) / W, stats.means[k], W)
                # (1 - a) Sigma + a mu D with Sigma >= 0: eigenvalues at least a mu min(D)
                lower[i] = a * mu * float(target_diagonal(covs[i], constant).min())
                covs[i] = shrink_to_diagonal(covs[i], a, mu, constant)
            elif a:
                covs[i] = shrink_to_diagonal(covs[i], a, mu)
                lower[i] = a * mu * float(np.diag(covs[i]).min()) / (1.0 - a + a * mu)
        elif shrinkage is not None and float(shrinkage) > 0:
            intensity[i] = float(shrinkage)
            lower[i] = intensity[i] * float(np.trace(covs[i])) / p
            covs[i] = shrink(covs[i], intensity[i])
    return covs, intensity, lower

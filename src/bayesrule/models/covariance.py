"""Covariance shrinkage computed from sufficient statistics alone.

These pure functions work on the maximum-likelihood covariance of centred
data and, for Ledoit-Wolf, fourth moments of the residuals — held by
:class:`bayesrule.stats.ScatterStats` and
:class:`bayesrule.stats.FourthMomentStats` — so the shrinkage intensity is
the same whether the data were seen at once, in chunks or on a cluster.

The estimated intensities of the discriminant analyses ('auto',
'ledoit-wolf', 'oas') are those of the *standardised* features
(:func:`standardised_intensity`, :func:`shrink_to_diagonal`): the estimate
and the shrunk covariance then do not depend on the features' units, as in
scikit-learn's ``LinearDiscriminantAnalysis(solver="eigen", shrinkage='auto')``
for every feature that varies within the class. A feature constant within a
class is shrunk there towards 0 (free of units), or, as scikit-learn does
(its ``StandardScaler`` gives it the scale 1), towards a variance of
``a mu`` in its own units (``constant`` in :func:`shrink_to_diagonal`),
which depends on the units.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "ESTIMATED",
    "constant_features",
    "shrink",
    "shrink_to_diagonal",
    "standardised_intensity",
    "target_diagonal",
]

#: The ``shrinkage`` values whose intensity is estimated from the data.
ESTIMATED = ("auto", "ledoit-wolf", "oas")
#: Those among them that need the fourth moments of ``FourthMomentStats``.
NEEDS_FOURTH = ("auto", "ledoit-wolf")

_F = NDArray[np.float64]


def shrink(cov: _F, intensity: float) -> _F:
    """``(1 - a) C + a (tr(C) / p) I``: a convex blend towards a scaled identity."""
    p = cov.shape[0]
    out = (1.0 - intensity) * cov
    out[np.diag_indices(p)] += intensity * np.trace(cov) / p
    return out


def constant_features(var: _F, mean: _F, weight: float) -> NDArray[np.bool_]:
    """Features without variance, up to the rounding of their mean.

    scikit-learn's test (``StandardScaler``'s): ``var <= n eps var + (n eps mean)^2``
    with ``n`` the weight; it has no units.
    """
    eps = float(np.finfo(np.float64).eps)
    return np.asarray(var <= weight * eps * var + (weight * eps * mean) ** 2)


def standardised_intensity(
    shrinkage: str, scatter: _F, weight: float, mean: _F, fourth: _F | None = None
) -> tuple[float, float]:
    r"""Ledoit-Wolf or OAS intensity of one class, in the correlation scale.

    The class's residuals are standardised by their own standard deviations
    (``z_ij = r_ij / s_j``; a constant feature, see
    :func:`constant_features`, gives a zero column), and the intensity is
    that of scikit-learn's ``ledoit_wolf`` or ``oas`` on ``z``: with
    ``R = D^-1/2 C D^-1/2`` the correlation matrix (zero rows for constant
    features), ``mu = tr(R)/p``, ``delta = |R - mu I|_F^2 / p`` and, for
    Ledoit-Wolf, ``beta = (sum_i w_i |z_i|^4 / n - |R|_F^2) / (n p)``, where
    ``sum_i w_i |z_i|^4 = v' Q v`` with ``v_j = 1 / s_j^2`` and ``Q`` the
    class's ``FourthMomentStats.q``.

    Parameters
    ----------
    shrinkage : {'auto', 'ledoit-wolf', 'oas'}
    scatter : ndarray of shape (p, p)
        The class's centred scatter ``S`` (``C = S / n``).
    weight : float
        The class's weight ``n``.
    mean : ndarray of shape (p,)
        The class mean (only for the constant-feature test).
    fourth : ndarray of shape (p, p), optional
        ``Q``; needed for Ledoit-Wolf.

    Returns
    -------
    intensity : float
        ``a`` in ``[0, 1]``.
    mu : float
        ``tr(R)/p``, the share of features that are not constant: the
        shrunk covariance is ``(1 - a) C + a mu diag(C)``
        (:func:`shrink_to_diagonal`).

    References
    ----------
    O. Ledoit and M. Wolf, "A well-conditioned estimator for large-dimensional
    covariance matrices", Journal of Multivariate Analysis 88(2), 2004.
    Y. Chen, A. Wiesel, Y. C. Eldar and A. O. Hero, "Shrinkage algorithms for
    MMSE covariance estimation", IEEE Trans. Signal Processing 58(10), 2010.
    """
    p = scatter.shape[0]
    if weight <= 0:
        return 0.0, 0.0
    var = np.diag(scatter) / weight
    live = np.flatnonzero(~constant_features(var, mean, weight))
    if live.size == 0:
        return 0.0, 0.0
    s = np.sqrt(var[live])
    R = scatter[np.ix_(live, live)] / weight / np.outer(s, s)
    tr = float(np.trace(R))
    mu = tr / p
    fro2 = float(np.sum(R * R))
    if p == 1:
        return 0.0, mu
    if shrinkage == "oas":
        alpha = fro2 / (p * p)
        den = (weight + 1.0) * (alpha - mu * mu / p)
        return (1.0 if den == 0 else float(min((alpha + mu * mu) / den, 1.0))), mu
    if fourth is None:
        raise ValueError(f"shrinkage={shrinkage!r} (Ledoit-Wolf) needs the fourth moments Q.")
    v = 1.0 / var[live]
    Q = fourth[np.ix_(live, live)]
    if not np.all(np.isfinite(Q)):
        # the squares were finite (the scatter is), their squares are not: X's spread
        # beyond about 1e77
        raise ValueError(
            f"shrinkage={shrinkage!r} (Ledoit-Wolf) needs the fourth powers of the "
            "residuals, which overflow float64 for this X (a feature's standard deviation "
            f"reaches {float(s.max()):.3g}): rescale X (the model does not depend on the "
            "features' units), or use shrinkage='oas', which needs only their squares."
        )
    z4 = float(v @ Q @ v)
    delta = (fro2 - 2.0 * mu * tr + p * mu * mu) / p
    beta = min((z4 / weight - fro2) / (p * weight), delta)
    return (0.0 if beta <= 0 or delta <= 0 else float(beta / delta)), mu


def shrink_to_diagonal(
    cov: _F,
    intensity: float,
    mu: float,
    constant: NDArray[np.bool_] | None = None,
    unit: float = 1.0,
) -> _F:
    """``(1 - a) C + a mu D``: the standardised shrinkage, back in ``C``'s units.

    ``D = diag(C)`` (the unit-free form). With ``constant`` (the features
    constant in the class, :func:`constant_features`), their entries of ``D``
    are ``unit`` instead: the standardisation of scikit-learn's
    ``StandardScaler``, which gives such a feature the scale 1, so that it is
    shrunk towards a variance of ``a mu`` in its own units (``unit`` is that
    variance of 1 in ``C``'s scale, e.g. the weight ``n`` for a scatter
    ``S = n C``). That target depends on the feature's units.
    """
    out = (1.0 - intensity) * cov
    idx = np.diag_indices(cov.shape[0])
    out[idx] += intensity * mu * target_diagonal(cov, constant, unit)
    return out


def target_diagonal(cov: _F, constant: NDArray[np.bool_] | None = None, unit: float = 1.0) -> _F:
    """``D`` of :func:`shrink_to_diagonal`: ``diag(C)``, with ``unit`` for the ``constant`` features."""
    d = np.diag(cov).copy()
    if constant is not None:
        d[constant] = unit
    return d

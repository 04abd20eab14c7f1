"""Covariance shrinkage computed from sufficient statistics alone.

These pure functions work on the maximum-likelihood covariance of centred
data and, for Ledoit-Wolf, the sum of fourth powers of residual norms — both
held by :class:`bayesrule.stats.ScatterStats` — so the shrinkage intensity is
the same whether the data were seen at once, in chunks or on a cluster.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["ledoit_wolf_intensity", "oas_intensity", "shrink", "shrinkage_intensity"]

_F = NDArray[np.float64]


def shrink(cov: _F, intensity: float) -> _F:
    """``(1 - a) C + a (tr(C) / p) I``: a convex blend towards a scaled identity."""
    p = cov.shape[0]
    out = (1.0 - intensity) * cov
    out[np.diag_indices(p)] += intensity * np.trace(cov) / p
    return out


def ledoit_wolf_intensity(cov_mle: _F, sum_r4: float, n: float) -> float:
    r"""Ledoit-Wolf shrinkage intensity towards ``(tr(C)/p) I``.

    Parameters
    ----------
    cov_mle : ndarray of shape (p, p)
        ``C = (1/n) sum_i w_i r_i r_i'`` of residuals ``r_i``.
    sum_r4 : float
        ``sum_i w_i |r_i|^4``.
    n : float
        Total weight.

    Notes
    -----
    With ``mu = tr(C)/p``, ``d^2 = |C - mu I|_F^2 / p`` and
    ``b^2 = (sum_i |r_i r_i' - C|_F^2) / (n^2 p) = (sum_r4 / n - |C|_F^2) / (n p)``,
    the intensity is ``min(b^2, d^2) / d^2``. This equals
    ``sklearn.covariance.ledoit_wolf_shrinkage(R, assume_centered=True)``.

    References
    ----------
    O. Ledoit and M. Wolf, "A well-conditioned estimator for large-dimensional
    covariance matrices", Journal of Multivariate Analysis 88(2), 2004.
    """
    p = cov_mle.shape[0]
    if p == 1 or n <= 0:
        return 0.0
    fro2 = float(np.sum(cov_mle * cov_mle))
    mu = float(np.trace(cov_mle)) / p
    delta = (fro2 - p * mu * mu) / p
    beta = (sum_r4 / n - fro2) / (n * p)
    beta = min(beta, delta)
    return 0.0 if beta <= 0 or delta <= 0 else float(beta / delta)


def oas_intensity(cov_mle: _F, n: float) -> float:
    r"""Oracle-approximating shrinkage intensity towards ``(tr(C)/p) I``.

    Uses the form of scikit-learn's ``oas``: with ``a = mean(C^2)`` and
    ``mu = tr(C)/p``, ``min((a + mu^2) / ((n + 1)(a - mu^2/p)), 1)``.

    References
    ----------
    Y. Chen, A. Wiesel, Y. C. Eldar and A. O. Hero, "Shrinkage algorithms for
    MMSE covariance estimation", IEEE Trans. Signal Processing 58(10), 2010.
    """
    p = cov_mle.shape[0]
    if p == 1:
        return 0.0
    a = float(np.mean(cov_mle * cov_mle))
    mu = float(np.trace(cov_mle)) / p
    den = (n + 1.0) * (a - mu * mu / p)
    return 1.0 if den == 0 else float(min((a + mu * mu) / den, 1.0))


def shrinkage_intensity(shrinkage: Any, cov_mle: _F, sum_r4: float, n: float) -> float:
    """Resolve a ``shrinkage`` parameter (None, float, 'auto'/'ledoit-wolf', 'oas')."""
    if shrinkage is None:
        return 0.0
    if isinstance(shrinkage, str):
        if shrinkage in ("auto", "ledoit-wolf"):
            return ledoit_wolf_intensity(cov_mle, sum_r4, n)
        if shrinkage == "oas":
            return oas_intensity(cov_mle, n)
        raise ValueError(
            f"shrinkage must be None, a float in [0, 1], 'auto', 'ledoit-wolf' or 'oas'; got {shrinkage!r}."
        )
    return float(shrinkage)

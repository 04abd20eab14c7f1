"""What every display shares: matplotlib on demand, axes, colours, density levels."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

_HINT = "matplotlib is required for plots: pip install 'bayesrule[plot]'"


def require_matplotlib() -> Any:
    """Import matplotlib, or raise ImportError with the install hint."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(_HINT) from None
    return matplotlib


def _axes(ax: Any, figsize: tuple[float, float]) -> Any:
    require_matplotlib()
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _colours(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def image_shape_for(n_features: int, minimum: int = 64) -> tuple[int, int] | None:
    """``(s, s)`` when ``n_features`` is a square of at least ``minimum``, else None.

    Small squares (4 features, 9 features) are almost never images, hence the minimum.
    """
    s = math.isqrt(int(n_features))
    return (s, s) if s * s == n_features and n_features >= minimum else None


# --------------------------------------------------------------------- decision regions
def _gaussian_moments(class_model: Any) -> tuple[NDArray[Any], NDArray[Any]] | None:
    """The public ``mean`` and ``covariance`` of a Gaussian class model, else None.

    The covariance is the model's own (after shrinkage, ``reg_param``, RDA's
    blend; pooled for LDA). A diagonal model may give it as its variances.
    """
    mean = getattr(class_model, "mean", None)
    cov = getattr(class_model, "covariance", None)
    if mean is None or cov is None:
        return None
    m = np.asarray(mean, dtype=float).reshape(-1)
    c = np.asarray(cov, dtype=float)
    if c.size == m.size:  # variances of a diagonal model
        c = np.diag(c.reshape(-1))
    return m, c.reshape(m.size, m.size)


def gaussian_mass(n_std: float) -> float:
    """Probability inside the ``n_std``-sigma ellipse of a 2-D Gaussian: ``1 - exp(-n_std²/2)``."""
    return float(-np.expm1(-0.5 * n_std * n_std))


def density_level(log_density: ArrayLike, mass: float) -> float:
    """The log-density level whose super-level set holds ``mass`` of the density on a grid.

    Parameters
    ----------
    log_density : array-like
        Log density on a regular grid (every cell has the same area, which
        therefore cancels); ``-inf`` and NaN carry no mass.
    mass : float in (0, 1)
        Share of the density on the grid inside the level set (a highest
        density region, restricted to the grid).

    Returns
    -------
    float
        The level, or NaN when the density has no finite value on the grid.
    """
    values = np.asarray(log_density, dtype=float).ravel()
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan")
    top = float(values.max())
    density = np.sort(np.exp(values - top))[::-1]
    share = np.cumsum(density)
    share /= share[-1]
    i = min(int(np.searchsorted(share, mass)), density.size - 1)
    return float(np.log(density[i]) + top)

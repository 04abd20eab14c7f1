"""Kernel-density naive Bayes."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval, StrOptions

from ..models.point_mass import PointMassKernelDensity
from ..stats import ValueCountStats
from ._kernel_binning import KernelBinning
from ._nb import _F, _BaseNB, per_class
from ._priors import PRIORS_CONSTRAINT
from .registry import register
from .seam import Summariser

_BANDWIDTH = [
    StrOptions({"scott", "silverman", "cv"}),
    Interval(Real, None, None, closed="neither"),
    "array-like",
]


@register("knb")
class KernelNB(_BaseNB):
    r"""Kernel naive Bayes: per class and feature, point masses and a Gaussian kernel density.

    Values that carry a large share of a class's weight of a feature (exactly
    0 for MNIST's background, counts, clipped sensors) are point masses with
    their own probabilities; the other values get a Gaussian kernel density
    (Parzen), and each class's distribution is shrunk by ``alpha`` towards
    the feature's pooled one, so that a class that never had a value still
    gives it a small probability (see
    :class:`bayesrule.models.PointMassKernelDensity`). Continuous data have
    no point masses, and with ``alpha=0`` the model is the plain kernel density.

    Fitted from :class:`bayesrule.stats.ValueCountStats` (the weighted
    distinct values of each feature in each class), so ``partial_fit`` and
    ``merge`` are exact. Densities are exact sums over the stored values when
    every feature has few distinct values; otherwise each feature is binned
    onto a grid, convolved with the kernel by FFT and the log density is
    interpolated (see :class:`bayesrule.models.KernelDensity`), which makes
    MNIST (60000 x 784) take seconds.

    Parameters
    ----------
    bandwidth : {'scott', 'silverman', 'cv'}, float or array-like of shape (n_features,), default='scott'
        The kernel standard deviation. 'scott' and 'silverman' are the rules
        of thumb per class and feature (as ``scipy.stats.gaussian_kde``); 'cv'
        picks, per class and feature, the multiple of Scott's bandwidth
        (from 0.25 to 4) of largest leave-one-out likelihood. A float (or one
        per feature) is used as is, for every class, in the units of the
        data; one below 1e-150 times a feature's range of values, whose
        densities would underflow between the training values, is refused.
    priors : array-like of shape (n_classes,), default=None
    bandwidth_floor : float, default=0.1
        The rule-of-thumb and 'cv' bandwidths are at least this multiple of
        the feature's Scott bandwidth over all classes, so that a feature
        constant within a class still has a usable density. The floor is
        relative to each feature's spread, as are the rules, the point
        masses (the data's own values) and the grid (each feature's range):
        rescaling a feature by any factor changes no prediction.
    point_mass : float, default=0.2
        A value that holds at least this share of some class's weight of a
        feature, and a weight above 1, is a point mass of the feature (for
        every class); above 1, there are none.
    alpha : float, default=0.1
        The weight (in unweighted rows) of the feature's pooled distribution
        mixed into each class's, atoms and kernel density alike.
    method : {'auto', 'exact', 'grid'}, default='auto'
        'auto' is 'exact' when the features hold at most ``grid_size / 2``
        distinct values on average and the classes at most ``64 * grid_size``
        in all, 'grid' otherwise: the cheaper path to predict with, chosen
        once for the model (see :func:`bayesrule.models.kernel.auto_method`).
    grid_size : int, default=1024

    Attributes
    ----------
    classes_, class_count_, priors_ : as for :class:`GaussianNB`
    bandwidth_ : ndarray of shape (n_classes, n_features)
        NaN for a class without data.
    stats_ : ValueCountStats

    References
    ----------
    G. H. John and P. Langley, "Estimating continuous distributions in
    Bayesian classifiers", UAI 1995. E. Parzen, "On estimation of a
    probability density function and mode", Annals of Mathematical
    Statistics 33(3), 1962.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from bayesrule import KernelNB
    >>> X, y = load_iris(return_X_y=True)
    >>> knb = KernelNB().fit(X, y)
    >>> knb.predict(X[[0, 50, 100]])
    array([0, 1, 2])
    >>> print(f"{knb.score(X, y):.2f}")
    0.97

    One bandwidth per class and feature, by Scott's rule (here) or fixed:

    >>> knb.bandwidth_.shape
    (3, 4)
    >>> KernelNB(bandwidth=0.3).fit(X, y).bandwidth_[0]
    array([0.3, 0.3, 0.3, 0.3])
    """

    spec = _BaseNB.spec.replace(statistic=ValueCountStats, inf_reaches_results=False)
    squares_deviations = True

    _parameter_constraints: dict = {
        "bandwidth": _BANDWIDTH,
        "priors": PRIORS_CONSTRAINT,
        "bandwidth_floor": [Interval(Real, 0, None, closed="left")],
        "point_mass": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "method": [StrOptions({"auto", "exact", "grid"})],
        "grid_size": [Interval(Integral, 16, None, closed="left")],
    }

    def __init__(
        self,
        *,
        bandwidth: Any = "scott",
        priors: ArrayLike | None = None,
        bandwidth_floor: float = 0.1,
        point_mass: float = 0.2,
        alpha: float = 0.1,
        method: str = "auto",
        grid_size: int = 1024,
    ) -> None:
        self.bandwidth = bandwidth
        self.priors = priors
        self.bandwidth_floor = bandwidth_floor
        self.point_mass = point_mass
        self.alpha = alpha
        self.method = method
        self.grid_size = grid_size

    def summariser(
        self, first_block: Any = None, max_values: int | None = None, **options: Any
    ) -> Summariser:
        """A task summarising blocks as ``fit`` does, the values binned to at most ``max_values``.

        With ``max_values`` (an int >= 2), a feature that holds more distinct
        values is binned onto a power-of-two grid of at most ``max_values``
        cells over its range, each value moved to its cell's centre (as
        :func:`bayesrule.fit_stream` describes); the combined statistics
        do not depend on the order of the blocks nor on how the rows are
        split into blocks. ``None``: every value is kept (exact).
        """
        if max_values is None:
            return super().summariser(first_block, **options)
        return KernelBinning(self._block_summariser(first_block), max_values)

    def _derive(self, stats: ValueCountStats, priors: _F, **extra: Any) -> dict[str, Any]:
        model = PointMassKernelDensity.from_stats(
            stats,
            bandwidth=self.bandwidth,
            bandwidth_floor=self.bandwidth_floor,
            point_mass=self.point_mass,
            alpha=self.alpha,
            method=self.method,
            grid_size=self.grid_size,
            feature_names=self._feature_names(),
        )
        return {
            "bandwidth_": per_class(model.bandwidth, np.asarray(stats.weights > 0)),
            "_model": model,
        }

"""Families of class densities, built from statistics: ``log_prob``, ``len``, ``model[k].sample``.

Each family holds the parameters of several classes; ``Family.from_stats(stats,
**hyper)`` derives them (smoothing, variances, bandwidths) for the classes
with positive weight, validating every hyperparameter it uses.
"""

from ._bandwidth import bandwidths
from ._checks import check_alpha, feature_name
from ._covariances import SHRINKAGE_TARGETS, shrinkage_scale
from ._terms import combine_terms
from .bernoulli import Bernoulli
from .categorical import Categorical
from .diagonal import DiagonalGaussian, check_class_variances
from .gaussian import Gaussian, stacked_log_prob
from .kernel import KernelDensity
from .multinomial import ComplementWeights, Multinomial
from .point_mass import PointMassKernelDensity
from .poisson import Poisson

__all__ = [
    "bandwidths",
    "Bernoulli",
    "Categorical",
    "ComplementWeights",
    "DiagonalGaussian",
    "Gaussian",
    "KernelDensity",
    "Multinomial",
    "PointMassKernelDensity",
    "Poisson",
    "SHRINKAGE_TARGETS",
    "check_alpha",
    "check_class_variances",
    "combine_terms",
    "feature_name",
    "shrinkage_scale",
    "stacked_log_prob",
]

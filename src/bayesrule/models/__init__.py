"""Models of one class, built from statistics: each offers ``log_prob`` and ``sample``."""

from .bernoulli import Bernoulli
from .categorical import Categorical
from .diagonal import DiagonalGaussian
from .gaussian import Gaussian, stacked_log_prob
from .kernel import KernelDensity
from .multinomial import Multinomial
from .poisson import Poisson

__all__ = [
    "Bernoulli",
    "Categorical",
    "DiagonalGaussian",
    "Gaussian",
    "KernelDensity",
    "Multinomial",
    "Poisson",
    "stacked_log_prob",
]

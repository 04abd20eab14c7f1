"""bayesrule: generative classifiers fitted from mergeable sufficient statistics."""

from importlib.metadata import PackageNotFoundError, version

from .discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
    RegularizedDiscriminantAnalysis,
)
from .io import load, save
from .stats import DiagonalStats, ScatterStats

try:
    __version__ = version("bayesrule")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

__all__ = [
    "DiagonalStats",
    "LinearDiscriminantAnalysis",
    "QuadraticDiscriminantAnalysis",
    "RegularizedDiscriminantAnalysis",
    "ScatterStats",
    "__version__",
    "load",
    "save",
]

"""bayesrule: generative classifiers fitted from mergeable sufficient statistics."""

from importlib.metadata import PackageNotFoundError, version

from ._util.config import config_context, get_config, set_config
from .backends import dask as _dask_backend  # noqa: F401  (registers the Dask engine)
from .backends.stream import fit_stream, iter_predict, predict_stream, read_blocks
from .estimators import (
    BernoulliNB,
    CategoricalNB,
    ClassWarning,
    ComplementNB,
    DiagonalLDA,
    GaussianNB,
    KernelNB,
    LinearDiscriminantAnalysis,
    MixedNB,
    MixtureDiscriminantAnalysis,
    MultinomialNB,
    OutOfRangeWarning,
    PoissonNB,
    QuadraticDiscriminantAnalysis,
    RegularizedDiscriminantAnalysis,
    RegularizedDiscriminantAnalysisCV,
    UnitsWarning,
)
from .io import load, save
from .stats import DiagonalStats, PooledScatterStats, ScatterStats

try:
    __version__ = version("bayesrule")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

__all__ = [
    "BernoulliNB",
    "CategoricalNB",
    "ComplementNB",
    "DiagonalLDA",
    "DiagonalStats",
    "GaussianNB",
    "KernelNB",
    "MixedNB",
    "MixtureDiscriminantAnalysis",
    "MultinomialNB",
    "OutOfRangeWarning",
    "UnitsWarning",
    "ClassWarning",
    "PoissonNB",
    "LinearDiscriminantAnalysis",
    "QuadraticDiscriminantAnalysis",
    "PooledScatterStats",
    "RegularizedDiscriminantAnalysis",
    "RegularizedDiscriminantAnalysisCV",
    "ScatterStats",
    "__version__",
    "config_context",
    "fit_stream",
    "iter_predict",
    "predict_stream",
    "read_blocks",
    "get_config",
    "set_config",
    "load",
    "save",
]

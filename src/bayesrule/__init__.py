"""bayesrule: generative classifiers fitted from mergeable sufficient statistics."""

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from ._util.config import config_context, get_config, set_config
from .backends import dask as _dask_backend  # noqa: F401  (registers the Dask engine)
from .backends.array_api import move_to  # registers the array API engine (PyTorch, CuPy)
from .backends.stream import fit_stream, iter_predict, predict_stream, read_blocks
from .estimators import ESTIMATORS, ClassWarning, OutOfRangeWarning, UnitsWarning
from .estimators.registry import available as _registered
from .io import load, save
from .stats import DiagonalStats, PooledScatterStats, ScatterStats

if TYPE_CHECKING:  # the names type checkers see; at run time they come from the registry
    from .estimators import (
        BernoulliNB as BernoulliNB,
    )
    from .estimators import (
        CategoricalNB as CategoricalNB,
    )
    from .estimators import (
        ComplementNB as ComplementNB,
    )
    from .estimators import (
        DiagonalLDA as DiagonalLDA,
    )
    from .estimators import (
        GaussianNB as GaussianNB,
    )
    from .estimators import (
        KernelNB as KernelNB,
    )
    from .estimators import (
        LinearDiscriminantAnalysis as LinearDiscriminantAnalysis,
    )
    from .estimators import (
        MixedNB as MixedNB,
    )
    from .estimators import (
        MixtureDiscriminantAnalysis as MixtureDiscriminantAnalysis,
    )
    from .estimators import (
        MultinomialNB as MultinomialNB,
    )
    from .estimators import (
        PoissonNB as PoissonNB,
    )
    from .estimators import (
        QuadraticDiscriminantAnalysis as QuadraticDiscriminantAnalysis,
    )
    from .estimators import (
        RegularizedDiscriminantAnalysis as RegularizedDiscriminantAnalysis,
    )
    from .estimators import (
        RegularizedDiscriminantAnalysisCV as RegularizedDiscriminantAnalysisCV,
    )

# every registered estimator (a new estimator file is exported with no edit here)
globals().update({cls.__name__: cls for cls in _registered().values()})

try:
    __version__ = version("bayesrule")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

__all__ = [
    *ESTIMATORS,
    "DiagonalStats",
    "OutOfRangeWarning",
    "UnitsWarning",
    "ClassWarning",
    "PooledScatterStats",
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
    "move_to",
    "save",
]

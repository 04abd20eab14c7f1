"""Layer 3: the estimators, with the scikit-learn API.

Each estimator is a parameter table, a declared input specification
(:class:`~bayesrule.estimators.seam.InputSpec`: its statistic from
:mod:`bayesrule.stats`, what its input may hold) and a family of class models
(:mod:`bayesrule.models`); fitting, Bayes' rule and sampling are written once,
in :class:`GenerativeClassifier`, and streaming, merging and forgetting in
:class:`UpdatableMixin`.

Every public module of this package is imported here
(:func:`~bayesrule.estimators.registry.discover`), and every estimator it
registers (``@register("short")``) is exported: a new estimator is one new file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._base import (
    EstimatorSummariser,
    GenerativeClassifier,
    OutOfRangeWarning,
    UnitsWarning,
    as_generator,
)
from ._classes import ClassWarning
from ._cv_stats import CrossValidatedStats
from ._cv_stats import Rows as SearchRows
from ._priors import present_log_mass
from ._updatable import UpdatableMixin
from .registry import available, discover
from .seam import InputSpec, Schema, schema_of

if TYPE_CHECKING:  # the names type checkers see; at run time they come from the registry
    from .bernoulli_nb import BernoulliNB as BernoulliNB
    from .categorical_nb import CategoricalNB as CategoricalNB
    from .complement_nb import ComplementNB as ComplementNB
    from .diagonal_lda import DiagonalLDA as DiagonalLDA
    from .gaussian_nb import GaussianNB as GaussianNB
    from .kernel_nb import KernelNB as KernelNB
    from .lda import LinearDiscriminantAnalysis as LinearDiscriminantAnalysis
    from .mda import MixtureDiscriminantAnalysis as MixtureDiscriminantAnalysis
    from .mixed_nb import MixedNB as MixedNB
    from .multinomial_nb import MultinomialNB as MultinomialNB
    from .poisson_nb import PoissonNB as PoissonNB
    from .qda import QuadraticDiscriminantAnalysis as QuadraticDiscriminantAnalysis
    from .rda import RegularizedDiscriminantAnalysis as RegularizedDiscriminantAnalysis
    from .rda_cv import RegularizedDiscriminantAnalysisCV as RegularizedDiscriminantAnalysisCV

discover(__name__, __path__)

#: the registered estimators' class names, exported from here and from ``bayesrule``
ESTIMATORS: tuple[str, ...] = tuple(sorted(cls.__name__ for cls in available().values()))
globals().update({cls.__name__: cls for cls in available().values()})

__all__ = [
    *ESTIMATORS,
    "ClassWarning",
    "CrossValidatedStats",
    "EstimatorSummariser",
    "GenerativeClassifier",
    "InputSpec",
    "OutOfRangeWarning",
    "Schema",
    "SearchRows",
    "UnitsWarning",
    "UpdatableMixin",
    "as_generator",
    "present_log_mass",
    "schema_of",
]

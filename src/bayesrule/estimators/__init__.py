"""Layer 3: the estimators, with the scikit-learn API.

Each estimator is a parameter table, a choice of statistic
(:mod:`bayesrule.stats`) and a family of class models
(:mod:`bayesrule.models`); fitting, streaming, merging, forgetting, Bayes'
rule and sampling are written once, in :mod:`bayesrule.estimators._base`.
"""

from ._base import GenerativeClassifier, OutOfRangeWarning, UnitsWarning, as_generator
from ._classes import ClassWarning
from .bernoulli_nb import BernoulliNB
from .categorical_nb import CategoricalNB
from .complement_nb import ComplementNB
from .diagonal_lda import DiagonalLDA
from .gaussian_nb import GaussianNB
from .kernel_nb import KernelNB
from .lda import LinearDiscriminantAnalysis
from .mda import MixtureDiscriminantAnalysis
from .mixed_nb import MixedNB
from .multinomial_nb import MultinomialNB
from .poisson_nb import PoissonNB
from .qda import QuadraticDiscriminantAnalysis
from .rda import RegularizedDiscriminantAnalysis
from .rda_cv import RegularizedDiscriminantAnalysisCV

__all__ = [
    "BernoulliNB",
    "ClassWarning",
    "OutOfRangeWarning",
    "UnitsWarning",
    "CategoricalNB",
    "ComplementNB",
    "DiagonalLDA",
    "GaussianNB",
    "GenerativeClassifier",
    "KernelNB",
    "LinearDiscriminantAnalysis",
    "MixedNB",
    "MixtureDiscriminantAnalysis",
    "MultinomialNB",
    "PoissonNB",
    "QuadraticDiscriminantAnalysis",
    "RegularizedDiscriminantAnalysis",
    "RegularizedDiscriminantAnalysisCV",
    "as_generator",
]

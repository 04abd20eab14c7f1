"""Gaussian discriminant analysis (LDA, QDA, RDA) under scikit-learn's module name.

The estimators live in :mod:`bayesrule.estimators`; this module re-exports
them so that ``from bayesrule.discriminant_analysis import ...`` mirrors
``sklearn.discriminant_analysis``.
"""

from .estimators import (
    LinearDiscriminantAnalysis,
    MixtureDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
    RegularizedDiscriminantAnalysis,
    RegularizedDiscriminantAnalysisCV,
)

__all__ = [
    "LinearDiscriminantAnalysis",
    "MixtureDiscriminantAnalysis",
    "QuadraticDiscriminantAnalysis",
    "RegularizedDiscriminantAnalysis",
    "RegularizedDiscriminantAnalysisCV",
]

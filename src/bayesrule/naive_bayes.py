"""The naive Bayes family under scikit-learn's module name.

The estimators live in :mod:`bayesrule.estimators`; this module re-exports
them so that ``from bayesrule.naive_bayes import ...`` mirrors
``sklearn.naive_bayes``.
"""

from .estimators import (
    BernoulliNB,
    CategoricalNB,
    ComplementNB,
    DiagonalLDA,
    GaussianNB,
    KernelNB,
    MixedNB,
    MultinomialNB,
    PoissonNB,
)

__all__ = [
    "BernoulliNB",
    "CategoricalNB",
    "ComplementNB",
    "DiagonalLDA",
    "GaussianNB",
    "KernelNB",
    "MixedNB",
    "MultinomialNB",
    "PoissonNB",
]

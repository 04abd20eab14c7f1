"""scikit-learn's estimator checks for the discriminant analysis estimators."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from bayesrule import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
    RegularizedDiscriminantAnalysis,
)

# The checks' tiny random data sets have classes with fewer rows than features;
# regularised settings keep every class covariance invertible there.
ESTIMATORS = [
    LinearDiscriminantAnalysis(),
    LinearDiscriminantAnalysis(shrinkage="auto"),
    QuadraticDiscriminantAnalysis(reg_param=0.5),
    RegularizedDiscriminantAnalysis(alpha=0.5, gamma=0.5),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)

"""scikit-learn's estimator checks for the discriminant analysis estimators."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from bayesrule import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
    RegularizedDiscriminantAnalysis,
    RegularizedDiscriminantAnalysisCV,
)

# The checks' tiny random data sets have classes with fewer rows than features;
# regularised settings keep every class covariance invertible there.
ESTIMATORS = [
    LinearDiscriminantAnalysis(),
    LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto"),
    LinearDiscriminantAnalysis(n_components=1, reduced_rank=True),
    QuadraticDiscriminantAnalysis(),
    QuadraticDiscriminantAnalysis(reg_param=0.5),
    RegularizedDiscriminantAnalysis(alpha=0.5, gamma=0.5),
    # the default's ridge keeps even the weighted checks' singular classes regular
    RegularizedDiscriminantAnalysis(),
    RegularizedDiscriminantAnalysisCV(alphas=(0.0, 1.0), gammas=(0.1, 0.5), cv=2),
]


def _expected_failures(estimator):
    if getattr(estimator, "reduced_rank", False):
        # one discriminant direction cannot separate the check's three classes
        # (MASS's dimen=1 gives the same training accuracy): a rank-1 model is
        # poor on them by design, every other check applies
        return {"check_classifiers_train": "one direction for three classes scores below 0.83"}
    if isinstance(estimator, QuadraticDiscriminantAnalysis) and estimator.reg_param == 0:
        # scikit-learn's QDA takes no sample_weight, so these checks skip it; their
        # data give a class a constant feature (or fewer rows than features), a
        # singular covariance that scikit-learn's QDA refuses just the same
        why = "the checks' weighted data have a singular class covariance (LinAlgError)"
        return {
            "check_sample_weights_shape": why,
            "check_sample_weights_not_overwritten": why,
            "check_sample_weight_equivalence_on_dense_data": why,
        }
    return {}


def _without_array_api_checks(marker):
    """The checks, less the array-API ones: those skip unless SCIPY_ARRAY_API=1 was set
    before SciPy was imported, so test_array_api_checks.py runs them in a process of
    their own instead of skipping them here on every run."""
    names, params = marker.args[:2]
    kept = [p for p in params if "array_api" not in _check_name(p)]
    return pytest.mark.parametrize(names, kept, **marker.kwargs)


def _check_name(param) -> str:
    check = (param.values if hasattr(param, "values") else param)[1]
    return getattr(check, "func", check).__name__


@_without_array_api_checks(
    parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
)
def test_sklearn_compatible(estimator, check):
    check(estimator)

"""The variance check shared by the diagonal Gaussian families (GaussianNB, MixedNB)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayesrule.models import DiagonalGaussian, check_class_variances
from bayesrule.stats import DiagonalStats

CLASSES = np.array(["a", "b"])


@settings(max_examples=40, deadline=None)
@given(
    k=st.integers(1, 4),
    p=st.integers(1, 5),
    seed=st.integers(0, 2**16),
)
def test_positive_finite_variances_pass(k, p, seed):
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(k, p)) * 1e3
    var = rng.uniform(1e-12, 1e6, size=(k, p))
    check_class_variances(means, var, np.arange(k), var_smoothing=0.0)


@pytest.mark.parametrize("bad", [0.0, np.nan, -1.0])
def test_zero_variance_names_feature_and_class(bad):
    var = np.ones((2, 3))
    var[1, 2] = bad
    with pytest.raises(
        ValueError, match=r"feature 'z' has zero variance in class 'b'.*var_smoothing=0"
    ):
        check_class_variances(
            np.zeros((2, 3)), var, CLASSES, var_smoothing=0, names=["x", "y", "z"]
        )


def test_zero_variance_says_the_rows_and_the_noun():
    var = np.ones((2, 2))
    var[0, 1] = 0.0
    with pytest.raises(
        ValueError, match=r"column 1 has zero variance \(or too few rows: 1 sample\) in class 'a'"
    ):
        check_class_variances(
            np.zeros((2, 2)), var, CLASSES, var_smoothing=0.0, noun="column", rows=np.array([1, 5])
        )


@pytest.mark.parametrize("where", ["mean", "variance"])
def test_overflow_is_named(where):
    means, var = np.zeros((2, 2)), np.ones((2, 2))
    if where == "mean":
        means[1, 0] = np.inf
    else:
        var[1, 0] = np.inf
    with pytest.raises(
        ValueError, match=r"feature 0 has a mean or variance that is not finite in class 'b'"
    ):
        check_class_variances(means, var, CLASSES, var_smoothing=1e-9)


def test_diagonal_gaussian_uses_it():
    X = np.array([[0.0, 1.0], [0.0, 2.0], [1.0, 3.0], [2.0, 5.0]])
    stats = DiagonalStats.from_data(X, ["a", "a", "b", "b"])
    with pytest.raises(
        ValueError,
        match=r"feature 'f0' has zero variance \(or too few rows: 2 samples\) in class 'a'",
    ):
        DiagonalGaussian.from_stats(stats, var_smoothing=0.0, feature_names=["f0", "f1"])

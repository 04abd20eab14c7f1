"""``OutOfRangeWarning``: the warning is raised before anything is said about it.

Replaces two tests of ``test_feature_ranges.py`` that could pass without the
feature: the filter test passed if no warning was ever raised, and the
every-estimator test had a BernoulliNB parametrisation that always skipped.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits

import bayesrule
from bayesrule import OutOfRangeWarning
from bayesrule.estimators.registry import available

PARAMS: dict[str, dict] = {
    "qda": {"reg_param": 0.1},
    "rda": {"alpha": 0.5, "gamma": 0.1},
    "rdacv": {"alphas": (0.0, 1.0), "gammas": (0.1,), "cv": 3},
}

# BernoulliNB binarizes its input, so data of another scale is the same 0/1
# data to it: it has no scale to warn about and is left out on purpose.
ESTIMATORS = [(s, c) for s, c in sorted(available().items()) if s != "bnb"]


def _estimator_data(seed: int = 0, n: int = 150, p: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Small integer data every estimator accepts (counts, codes and numbers at once)."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.array(["a", "b", "c"]), n // 3)
    k = np.searchsorted(["a", "b", "c"], y)
    X = ((rng.integers(0, 3, size=(n, p)) + k[:, None]) % 4).astype(float)
    X[:, 0] += rng.integers(0, 3, size=n)  # feature 0 ranges over 0 .. 5
    order = rng.permutation(n)
    return X[order], y[order]


@pytest.mark.parametrize("short,cls", ESTIMATORS, ids=[s for s, _ in ESTIMATORS])
def test_every_scaled_estimator_warns_on_data_of_another_scale(short, cls):
    X, y = _estimator_data()
    est = cls(**PARAMS.get(short, {})).fit(X, y)
    far = X + 40.0 if short == "catnb" else X * 255.0  # codes far beyond those seen
    with warnings.catch_warnings():
        warnings.simplefilter("error", OutOfRangeWarning)
        est.predict(X)  # the training data itself never warns
    with pytest.warns(OutOfRangeWarning, match="far outside the range of the training data"):
        est.predict(far)


def test_bernoulli_nb_sees_the_same_data_at_every_scale():
    """Why BernoulliNB is left out above: its binarized input does not change with the scale."""
    X, y = _estimator_data()
    est = bayesrule.BernoulliNB().fit(X, y)
    np.testing.assert_array_equal(est.predict_proba(X * 255.0), est.predict_proba(X))


def test_the_warning_can_be_silenced_with_a_filter():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    est = bayesrule.GaussianNB().fit(X, y)
    # the effect first: without a filter the call warns
    with pytest.warns(OutOfRangeWarning):
        warned = est.predict_proba(X * 255.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=OutOfRangeWarning)
        silenced = est.predict_proba(X * 255.0)
    np.testing.assert_array_equal(silenced, warned)  # a filter changes nothing but the warning

"""Using a fitted model never changes it: its pickle is the same bytes before and after
every prediction method and ``sample`` (scikit-learn's check_dict_unchanged asks this of
predict, transform, decision_function and predict_proba; a model's bytes ask it of all).

The class models build some constants on first use (the pseudo-determinant of LDA's
shared covariance, a whitening from a Cholesky factor, QDA's triangular stack); they
are caches, left out of a pickle.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris

import bayesrule
from bayesrule.estimators import available

METHODS = (
    "predict",
    "predict_proba",
    "predict_log_proba",
    "predict_joint_log_proba",
    "decision_function",
    "score_samples",
    "class_log_density",
    "transform",
    "sample",
)

DATA = {"iris": load_iris(return_X_y=True), "digits": load_digits(return_X_y=True)}
# CategoricalNB takes category codes: the digits' pixels (0..16) are such codes
CASES = [
    (short, data)
    for short in sorted(available())
    for data in DATA
    if not (short == "catnb" and data == "iris")
]


def _fitted(short: str, data: str):
    X, y = DATA[data]
    params = {"reg_param": 0.1} if short in ("qda",) else {}
    if short == "rda" and data == "digits":
        params = {"alpha": 0.5, "gamma": 0.1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return available()[short](**params).fit(X, y), X


@pytest.mark.parametrize(("short", "data"), CASES)
def test_no_method_changes_the_model_bytes(short, data):
    est, X = _fitted(short, data)
    tried = 0
    for method in METHODS:
        if not hasattr(est, method):
            continue
        before = pickle.dumps(est)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if method == "sample":
                est.sample(7, random_state=0)
            else:
                getattr(est, method)(X[:50])
        tried += 1
        assert pickle.dumps(est) == before, f"{type(est).__name__}.{method} changed the model"
    assert tried >= 5
    # and a model pickled after use predicts as the one in use
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))
    if hasattr(est, "score_samples"):
        np.testing.assert_array_equal(again.score_samples(X), est.score_samples(X))


def test_the_cases_cover_lda_and_qda_lazy_constants():
    names = {type(_fitted(s, d)[0]).__name__ for s, d in CASES}
    assert {"LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"} <= names
    assert len(names) == len(bayesrule.estimators.ESTIMATORS)

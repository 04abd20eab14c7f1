"""``partial_fit`` keeps a block that ``fit`` on all the rows would take, whatever the split.

Cases where an early block alone cannot give a model, but later rows mend it:
a first row with a missing value (naive Bayes), a class of at most ``p`` rows
under a ``reg_param`` too small for its variances (QDA), a class of one row
in data of tiny scale (GaussianNB). The update keeps the statistics, every
prediction says why it waits, and the model ends equal to ``fit``. Also the
refusal of Ledoit-Wolf shrinkage where the fourth powers overflow.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris

import bayesrule
from bayesrule._util.validation import TooFewRows

pytestmark = pytest.mark.filterwarnings("error::bayesrule.OutOfRangeWarning")


def _iris(seed=0):
    X, y = load_iris(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(y))
    return X[order], y[order]


def _blocks(model, X, y, cuts, classes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a class of one row, on the way
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            model.partial_fit(X[a:b], y[a:b], classes=classes)
    return model


NAN_MODELS = [
    bayesrule.GaussianNB,
    bayesrule.DiagonalLDA,
    bayesrule.PoissonNB,
    bayesrule.MultinomialNB,
    bayesrule.ComplementNB,
    bayesrule.KernelNB,
]


@pytest.mark.parametrize("make", NAN_MODELS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("first", [1, 3])
def test_first_rows_with_a_missing_value_wait_for_later_rows(make, first):
    X, y = _iris()
    # one row of each class first; the first row's class has not observed feature 1
    heads = [int(np.flatnonzero(y == k)[0]) for k in (0, 1, 2)]
    order = np.concatenate([heads, np.setdiff1d(np.arange(len(y)), heads)])
    X, y = np.round(X[order] * 10), y[order]  # counts, for the count models
    X[0, 1] = np.nan
    model = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.partial_fit(X[:first], y[:first], classes=[0, 1, 2])
    assert model.n_samples_seen_ == first
    with pytest.raises(ValueError, match=r"feature 1.*missing \(NaN\) in every row") as info:
        model.predict_proba(X)
    assert "later rows" in str(info.value) and "class 0" in str(info.value)
    _blocks(model, X, y, [first, first + 1, 60, len(y)], [0, 1, 2])
    whole = make().fit(X, y)
    np.testing.assert_array_equal(model.predict(X[1:]), whole.predict(X[1:]))
    np.testing.assert_allclose(model.predict_proba(X), whole.predict_proba(X), atol=1e-10)


@pytest.mark.parametrize("make", NAN_MODELS, ids=lambda c: c.__name__)
def test_fit_still_refuses_a_class_that_never_observes_a_feature(make):
    X, y = _iris()
    X = np.round(X * 10)
    X[y == 2, 3] = np.nan
    with pytest.raises(TooFewRows, match=r"feature 3.*missing \(NaN\) in every row of class 2"):
        make().fit(X, y)


def _sorted_by_class(p=4, n=60, seed=1, scale=1.0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    X = (rng.standard_normal((n, p)) + 2.0 * y[:, None]) * scale
    return X, y


@pytest.mark.parametrize(("reg_param", "scale"), [(1e-12, 1.0), (0.1, 1e100), (0.1, 1e150)])
def test_qda_class_of_at_most_p_rows_waits_under_a_small_reg_param(reg_param, scale):
    # a reg_param too small for the class's variances leaves 2 rows of 4 features
    # singular: the block is kept (as with reg_param=0), not refused and lost
    X, y = _sorted_by_class(scale=scale)
    model = bayesrule.QuadraticDiscriminantAnalysis(reg_param=reg_param)
    _blocks(model, X, y, [0, 20, 22], [0, 1, 2])
    assert model.n_samples_seen_ == 22
    with pytest.raises(ValueError, match=r"class 1 has 2 rows.*at least 5 rows"):
        model.predict(X)
    _blocks(model, X, y, [22, 60], [0, 1, 2])
    whole = bayesrule.QuadraticDiscriminantAnalysis(reg_param=reg_param).fit(X, y)
    np.testing.assert_array_equal(model.predict(X), whole.predict(X))
    np.testing.assert_allclose(model.predict_proba(X), whole.predict_proba(X), atol=1e-10)


def test_qda_collinear_class_with_rows_enough_is_still_refused():
    # more than p rows and still singular: no later row is waited for
    X, y = _sorted_by_class()
    X[20:40, 3] = X[20:40, 2]  # class 1 collinear in all its 20 rows
    model = bayesrule.QuadraticDiscriminantAnalysis(reg_param=1e-12)
    _blocks(model, X, y, [0, 20], [0, 1, 2])
    with pytest.raises(ValueError, match="collinear|singular"):
        model.partial_fit(X[20:40], y[20:40])
    assert model.n_samples_seen_ == 20  # rolled back


@pytest.mark.parametrize("scale", [1.0, 1e-100, 1e-150])
def test_gaussian_nb_one_row_classes_of_tiny_scale_wait(scale):
    # one row per class: variances are the smoothing alone, var_smoothing times the
    # data's variance, whose reciprocal overflows at 1e-150 (a subnormal variance)
    X, y = _iris(3)
    X = X * scale
    first = [int(np.flatnonzero(y == k)[0]) for k in (0, 1)]
    rest = np.setdiff1d(np.arange(len(y)), first)
    order = np.concatenate([first, rest])
    X, y = X[order], y[order]
    model = _blocks(bayesrule.GaussianNB(), X, y, [0, 1, 2, 3, len(y)], [0, 1, 2])
    whole = bayesrule.GaussianNB().fit(X, y)
    np.testing.assert_array_equal(model.predict(X), whole.predict(X))
    np.testing.assert_allclose(model.predict_proba(X), whole.predict_proba(X), atol=1e-10)


def test_gaussian_nb_two_rows_of_tiny_scale_say_why_they_wait():
    X, y = _iris(3)
    X = X * 1e-150
    rows = [int(np.flatnonzero(y == k)[0]) for k in (0, 1)]
    model = bayesrule.GaussianNB()
    model.partial_fit(X[rows], y[rows], classes=[0, 1, 2])
    with pytest.raises(ValueError, match=r"class 0 has 1 sample.*reciprocal overflows"):
        model.predict(X)


@pytest.mark.parametrize("scale", [1e100, 1e150])
def test_ledoit_wolf_refuses_fourth_powers_that_overflow_and_names_the_remedies(scale):
    X, y = load_iris(return_X_y=True)
    lw = bayesrule.LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto")
    with pytest.raises(ValueError, match=r"fourth powers.*overflow.*shrinkage='oas'"):
        lw.fit(X * scale, y)
    # the remedies work: OAS on the same data, Ledoit-Wolf on rescaled data
    oas = bayesrule.LinearDiscriminantAnalysis(solver="lsqr", shrinkage="oas")
    ref = bayesrule.LinearDiscriminantAnalysis(solver="lsqr", shrinkage="oas").fit(X, y)
    np.testing.assert_array_equal(oas.fit(X * scale, y).predict(X * scale), ref.predict(X))
    assert lw.fit(X, y).shrinkage_ is not None

"""Bad input to the discriminant analyses: a clear ValueError, and no half-updated model."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris

from bayesrule import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
    RegularizedDiscriminantAnalysis,
)
from reference_models import reference_proba

X, y = load_iris(return_X_y=True)
ALL = [LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis, RegularizedDiscriminantAnalysis]


@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("bad, word", [(np.nan, "NaN"), (np.inf, "infinity")])
def test_non_finite_x_names_row_and_column(cls, bad, word):
    Xb = X.copy()
    Xb[7, 2] = bad
    with pytest.raises(ValueError, match=rf"contains {word} at row 7, column 2"):
        cls().fit(Xb, y)
    m = cls().fit(X, y)
    with pytest.raises(ValueError, match=rf"contains {word} at row 7, column 2"):
        m.predict(Xb)


@pytest.mark.parametrize("cls", ALL)
def test_values_whose_squares_overflow_say_so(cls):
    # finite X, but the scatter overflows float64: the error says why, not "singular", and
    # names the first feature whose squared deviations overflow, with no warning of NumPy's
    model = cls(reg_param=0.5) if cls is QuadraticDiscriminantAnalysis else cls()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(
            ValueError, match=r"feature 0 holds values so far apart.*overflow.*rescale X"
        ):
            model.fit(X * 1e160, y)
        Xb = X.copy()
        Xb[60, 2] = 1e200  # one value: its feature, not the first, is named
        with pytest.raises(ValueError, match=r"feature 2 holds values so far apart .*to 1e\+200"):
            model.fit(Xb, y)


@pytest.mark.parametrize("cls", ALL)
def test_single_class(cls):
    with pytest.raises(ValueError, match=r"needs at least 2 classes.*1 class"):
        cls().fit(X[:50], y[:50])


@pytest.mark.oracle
def test_class_with_one_sample_names_the_class():
    Xs = np.vstack([X[:50], X[50:51], X[100:]])
    ys = np.concatenate([y[:50], y[50:51], y[100:]])
    with pytest.raises(ValueError, match=r"class 1 has 1 sample; at least 2"):
        QuadraticDiscriminantAnalysis().fit(Xs, ys)
    with pytest.raises(
        ValueError,
        match=r"class 1 has 1 sample.*alpha=0.5.*RegularizedDiscriminantAnalysis with alpha=0",
    ):
        RegularizedDiscriminantAnalysis(alpha=0.5).fit(Xs, ys)
    # what both messages advise works: alpha=0 is the pooled covariance, which the class shares
    with pytest.raises(ValueError, match=r"RegularizedDiscriminantAnalysis\(alpha=0\)"):
        QuadraticDiscriminantAnalysis().fit(Xs, ys)
    rda = RegularizedDiscriminantAnalysis(alpha=0.0).fit(Xs, ys)
    proba = rda.predict_proba(X)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    # LDA pools the covariance: a one-sample class is fine, and its model is
    # scikit-learn's (bias=True: scikit-learn's pooled covariance S_w / n)
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA

    ours = LinearDiscriminantAnalysis(bias=True, solver="lsqr").fit(Xs, ys)
    theirs = SkLDA(solver="lsqr").fit(Xs, ys)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-8)


def test_singular_class_covariance_suggests_reg_param():
    Xs = X.copy()
    Xs[y == 2, 3] = 1.0  # constant feature within class 2
    with pytest.raises(ValueError, match=r"class 2 is singular.*reg_param"):
        QuadraticDiscriminantAnalysis().fit(Xs, y)
    assert QuadraticDiscriminantAnalysis(reg_param=0.1).fit(Xs, y).score(Xs, y) > 0.9
    with pytest.raises(ValueError, match=r"class 2 is singular.*gamma"):
        RegularizedDiscriminantAnalysis(alpha=1.0, ridge=0.0).fit(Xs, y)


@pytest.mark.parametrize("cls", ALL)
def test_feature_count_mismatch(cls):
    m = cls().fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but .* is expecting 4 features"):
        m.predict(X[:, :3])
    with pytest.raises(ValueError, match="X has 3 features, but .* is expecting 4 features"):
        m.partial_fit(X[:, :3], y)


@pytest.mark.parametrize("cls", ALL)
def test_non_numeric_x(cls):
    Xs = X.astype(str).astype(object)
    Xs[0, 0] = "five"
    with pytest.raises(ValueError, match="X must be numeric"):
        cls().fit(Xs, y)


@pytest.mark.parametrize("cls", ALL)
def test_mismatched_lengths(cls):
    with pytest.raises(ValueError, match="X has 150 rows but y has 149 entries"):
        cls().fit(X, y[:-1])
    with pytest.raises(ValueError, match="X has 150 rows but sample_weight has 10 entries"):
        cls().fit(X, y, sample_weight=np.ones(10))


@pytest.mark.parametrize("cls", ALL)
def test_negative_weights_name_the_row(cls):
    w = np.ones(150)
    w[4] = -1.0
    with pytest.raises(ValueError, match=r"sample_weight must be non-negative; got -1.0 at row 4"):
        cls().fit(X, y, sample_weight=w)


def test_unseen_label_in_partial_fit():
    m = LinearDiscriminantAnalysis().partial_fit(X[y < 2], y[y < 2], classes=[0, 1])
    with pytest.raises(ValueError, match=r"labels \[2\] that are not among the classes \[0, 1\]"):
        m.partial_fit(X, y)


@pytest.mark.oracle
@pytest.mark.parametrize("cls", ALL)
def test_failed_partial_fit_leaves_model_unchanged(cls):
    m = cls().partial_fit(X[::2], y[::2], classes=[0, 1, 2])
    before = copy.deepcopy(m.__dict__)
    proba = m.predict_proba(X)
    bad_batches = [
        (X[:5, :3], y[:5]),  # wrong number of features
        (np.full((5, 4), np.nan), y[:5]),  # NaN
        (X[:5], np.array([0, 1, 9, 1, 0])),  # unseen label
    ]
    for Xb, yb in bad_batches:
        with pytest.raises(ValueError):
            m.partial_fit(Xb, yb)
    assert m.__dict__.keys() == before.keys()
    np.testing.assert_array_equal(m.predict_proba(X), proba)
    assert m.stats_ is before["stats_"] or m.stats_.allclose(before["stats_"], rtol=0)
    # still the model of the rows it holds: a NumPy transcription fitted on them
    short = {ALL[0]: "lda", ALL[1]: "qda", ALL[2]: "rda"}[cls]
    np.testing.assert_allclose(
        proba, reference_proba(short, {}, X[::2], y[::2], X), rtol=0, atol=1e-9
    )


def test_failed_first_partial_fit_leaves_model_unfitted():
    m = QuadraticDiscriminantAnalysis()
    Xs = np.vstack([X[:50], X[50:51]])
    with pytest.raises(ValueError, match="classes"):
        m.partial_fit(Xs, np.r_[y[:50], 7], classes=[0, 1])
    assert not hasattr(m, "n_features_in_") and not hasattr(m, "stats_")
    # a class of one row is accepted (a stream sorted by class): the model waits for rows
    m.partial_fit(Xs, np.r_[y[:50], 1], classes=[0, 1])
    with pytest.raises(ValueError, match="class 1 has 1 sample"):
        m.predict(Xs)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"priors": [0.5, 0.6, -0.1]}, "priors must be non-negative"),
        ({"priors": [0.5, 0.5]}, r"priors must have one entry per class \(3 classes\)"),
        ({"shrinkage": 1.5}, "'shrinkage' parameter"),
        ({"shrinkage": "ledoit"}, "'shrinkage' parameter"),
        ({"n_components": 5}, r"n_components cannot be larger than .* = 2; got 5"),
    ],
)
def test_lda_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        LinearDiscriminantAnalysis(**params).fit(X, y)


@pytest.mark.oracle
def test_priors_are_renormalised_with_a_warning():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        m = LinearDiscriminantAnalysis(priors=[1, 1, 2]).fit(X, y)
    assert any("Renormalizing" in str(w.message) for w in rec)
    np.testing.assert_allclose(m.priors_, [0.25, 0.25, 0.5])
    # the model is the one given the cleaned priors
    clean = LinearDiscriminantAnalysis(priors=[0.25, 0.25, 0.5]).fit(X, y)
    np.testing.assert_array_equal(m.predict_proba(X), clean.predict_proba(X))


@pytest.mark.parametrize("reg", [-0.1, 1.5])
def test_qda_reg_param_out_of_range(reg):
    with pytest.raises(
        ValueError, match=r"'reg_param' parameter .* must be a float in the range \[0.0, 1.0\]"
    ):
        QuadraticDiscriminantAnalysis(reg_param=reg).fit(X, y)


def test_rda_alpha_out_of_range():
    with pytest.raises(ValueError, match=r"'alpha' parameter"):
        RegularizedDiscriminantAnalysis(alpha=2.0).fit(X, y)

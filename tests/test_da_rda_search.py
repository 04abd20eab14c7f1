"""RDA-CV's search (ridge, alpha sweep), its ``cv`` parameter and files, and DA refusals."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.discriminant_analysis as skda
from sklearn.datasets import load_iris, load_wine
from sklearn.model_selection import KFold, ShuffleSplit, StratifiedKFold

import bayesrule
from bayesrule import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
    RegularizedDiscriminantAnalysis,
    RegularizedDiscriminantAnalysisCV,
)

# a small explicit grid where a test is about ``cv`` or the file, not the default search
_GRID = {"alphas": (0.0, 0.5, 1.0), "gammas": (0.0, 0.2), "ridges": (0.0, 0.1)}


def _blend_case(seed, n=14, p=8, K=3):
    """Few rows per class, class covariances a shared one plus a perturbation.

    The classes' own covariances are poorly estimated and the shared one is
    not quite right: the best blend lies strictly between LDA and QDA.
    """
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(p, p))
    y = np.repeat(np.arange(K), n)
    X = np.empty((n * K, p))
    for k in range(K):
        A = base + 0.35 * rng.normal(size=(p, p))
        X[y == k] = rng.normal(size=(n, p)) @ A.T + rng.normal(size=p)
    return X, y


@pytest.mark.parametrize("seed", range(4))
def test_the_alpha_sweep_finds_an_optimum_between_the_grid_points(seed):
    X, y = _blend_case(seed)
    # the coarse grid (0, 1) given explicitly: alphas='auto' scores the whole lattice below 100 features
    kw = {"alphas": (0.0, 1.0), "gammas": (0.0,), "ridges": (0.0,), "cv": 5}
    kw["scoring"] = "log_likelihood"
    coarse = RegularizedDiscriminantAnalysisCV(refine=False, **kw).fit(X, y)
    refined = RegularizedDiscriminantAnalysisCV(**kw).fit(X, y)
    dense = RegularizedDiscriminantAnalysisCV(
        **{**kw, "alphas": np.linspace(0, 1, 101)}, refine=False
    ).fit(X, y)
    assert refined.alpha_ not in (0.0, 0.5, 1.0)
    assert refined.cv_scores_.max() > coarse.cv_scores_.max()
    # within a step of 0.02 of the dense grid's best
    assert refined.cv_scores_.max() >= dense.cv_scores_.max() - 0.01 * abs(dense.cv_scores_.max())
    assert abs(refined.alpha_ - dense.alpha_) <= 0.04


@pytest.mark.parametrize("ridge", [0.01, 0.2, 0.7])
def test_ridge_is_sklearn_reg_param_in_the_data_scale(ridge):
    # on features standardised by their pooled variances (target='pooled''s
    # coordinates; the maximum-likelihood ones with bias=True) the ridge's
    # target t I is I, and (1 - ridge) Sigma + ridge I is scikit-learn's
    # (1 - reg_param) Sigma + reg_param I
    X, y = load_wine(return_X_y=True)
    classes, g = np.unique(y, return_inverse=True)
    means = np.stack([X[g == k].mean(axis=0) for k in range(classes.size)])
    Xs = X / np.sqrt(np.mean((X - means[g]) ** 2, axis=0))
    kw = dict(alpha=1.0, ridge=ridge, bias=True, target="pooled")
    ours = RegularizedDiscriminantAnalysis(**kw).fit(Xs, y)
    ref = skda.QuadraticDiscriminantAnalysis(reg_param=ridge).fit(Xs, y)
    np.testing.assert_array_equal(ours.predict(Xs), ref.predict(Xs))
    np.testing.assert_allclose(ours.predict_proba(Xs), ref.predict_proba(Xs), atol=1e-8)
    # and in any units, the same model
    s = 10.0 ** np.random.default_rng(0).uniform(-3, 3, X.shape[1])
    again = RegularizedDiscriminantAnalysis(**kw).fit(X * s, y)
    np.testing.assert_allclose(again.predict_proba(X * s), ref.predict_proba(Xs), atol=1e-8)


@pytest.mark.parametrize("factor", [1e-3, 1e3])
def test_rdacv_does_not_depend_on_a_common_unit(factor):
    X, y = load_wine(return_X_y=True)
    a = RegularizedDiscriminantAnalysisCV(cv=3).fit(X, y)
    b = RegularizedDiscriminantAnalysisCV(cv=3).fit(X * factor, y)
    assert (a.alpha_, a.gamma_, a.ridge_) == (b.alpha_, b.gamma_, b.ridge_)
    np.testing.assert_allclose(a.cv_scores_, b.cv_scores_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X * factor), atol=1e-9)


def test_rdacv_with_the_grid_of_features_rescaled_one_by_one():
    # alpha alone (no gamma, no ridge) has no units at all
    X, y = load_wine(return_X_y=True)
    scale = 10.0 ** np.random.default_rng(0).uniform(-3, 3, X.shape[1])
    kw = {"gammas": (0.0,), "ridges": (0.0,), "cv": 3}
    a = RegularizedDiscriminantAnalysisCV(**kw).fit(X, y)
    b = RegularizedDiscriminantAnalysisCV(**kw).fit(X * scale, y)
    assert a.alpha_ == b.alpha_
    np.testing.assert_array_equal(a.predict(X), b.predict(X * scale))


def test_the_search_contains_lda_and_qda_and_their_scores_are_theirs():
    X, y = load_iris(return_X_y=True)
    m = RegularizedDiscriminantAnalysisCV(cv=4, random_state=3).fit(X, y)
    folds = list(StratifiedKFold(4, shuffle=True, random_state=3).split(X, y))
    for alpha, model in (
        (0.0, LinearDiscriminantAnalysis()),
        (1.0, QuadraticDiscriminantAnalysis()),
    ):
        hit = np.flatnonzero(np.all(m.cv_points_ == [alpha, 0.0, 0.0], axis=1))
        acc = [(model.fit(X[tr], y[tr]).predict(X[te]) == y[te]).mean() for tr, te in folds]
        assert m.cv_scores_[hit[0]] == pytest.approx(np.mean(acc), abs=1e-12)
    assert m.cv_scores_.max() >= m.cv_scores_[hit[0]]


# ------------------------------------------------------------ cv
@pytest.mark.parametrize("cv", ["x", "5", 2.5, True, object(), b"ab"])
def test_a_bad_cv_is_refused_with_what_is_accepted(cv):
    X, y = load_iris(return_X_y=True)
    # scikit-learn's parameter check or bayesrule's (strings and bytes pass the former)
    with pytest.raises(ValueError, match=r"cv.* must be .*an int .*[Gg]ot"):
        RegularizedDiscriminantAnalysisCV(cv=cv).fit(X, y)


@pytest.mark.parametrize("cv", [0, 1, -3])
def test_a_cv_below_two_is_refused(cv):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="cv"):
        RegularizedDiscriminantAnalysisCV(cv=cv).fit(X, y)


def test_cv_none_is_five_folds():
    X, y = load_iris(return_X_y=True)
    a = RegularizedDiscriminantAnalysisCV(cv=None, **_GRID).fit(X, y)
    b = RegularizedDiscriminantAnalysisCV(cv=5, **_GRID).fit(X, y)
    np.testing.assert_array_equal(a.cv_scores_, b.cv_scores_)


@pytest.mark.parametrize(
    "cv",
    [
        StratifiedKFold(3, shuffle=True, random_state=1),
        KFold(4),
        ShuffleSplit(3, test_size=0.3, random_state=0),
        "list",
    ],
    ids=["StratifiedKFold", "KFold", "ShuffleSplit", "list"],
)
def test_a_model_fitted_with_a_splitter_saves_and_loads(cv, tmp_path):
    X, y = load_wine(return_X_y=True)
    if cv == "list":
        cv = list(StratifiedKFold(3).split(X, y))
    m = RegularizedDiscriminantAnalysisCV(cv=cv, **_GRID).fit(X, y)
    path = bayesrule.save(m, tmp_path / "m.bayesrule")
    loaded = bayesrule.load(path)
    assert loaded.cv is None  # the splitter is not kept ...
    assert loaded.stats_.cv == m.stats_.cv and m.stats_.cv.startswith(
        repr(cv)[:10]
    )  # ... its description is
    assert (loaded.alpha_, loaded.gamma_, loaded.ridge_) == (m.alpha_, m.gamma_, m.ridge_)
    np.testing.assert_array_equal(loaded.predict_proba(X), m.predict_proba(X))
    assert m.cv is cv  # the fitted estimator keeps its parameter


def test_an_int_cv_is_saved_as_it_is(tmp_path):
    X, y = load_iris(return_X_y=True)
    m = RegularizedDiscriminantAnalysisCV(cv=3, **_GRID).fit(X, y)
    loaded = bayesrule.load(bayesrule.save(m, tmp_path / "m.bayesrule"))
    assert loaded.cv == 3 and loaded.stats_.cv == "3"


# ------------------------------------------------------------ refusals and dtypes
def _singular_class(seed):
    """Two classes; in class 0 the last feature is the sum of the first two."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 4))
    y = np.repeat([0, 1], 30)
    X[y == 0, 3] = X[y == 0, 0] + X[y == 0, 1]
    return X, y


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    ("how", "param"),
    [("fit-svd", "reg_param"), ("fit-eigen", "shrinkage"), ("partial_fit", "reg_param"),
     ("from_stats", "reg_param")],
)  # fmt: skip
def test_qda_singular_class_is_sklearns_linalgerror(seed, how, param):
    X, y = _singular_class(seed)
    est = QuadraticDiscriminantAnalysis(solver="eigen" if how == "fit-eigen" else "svd")
    with pytest.raises(np.linalg.LinAlgError) as info:
        if how.startswith("fit"):
            est.fit(X, y)
        elif how == "partial_fit":
            est.partial_fit(X, y, classes=[0, 1])
        else:
            QuadraticDiscriminantAnalysis.from_stats(bayesrule.stats.ScatterStats.from_data(X, y))
    assert isinstance(info.value, ValueError)
    msg = str(info.value)
    assert "The covariance matrix of class 0 is not full rank." in msg
    assert f"Increase the value of `{param}` to reduce the collinearity." in msg
    with pytest.raises(np.linalg.LinAlgError, match="class 0 is not full rank"):
        skda.QuadraticDiscriminantAnalysis().fit(X, y)


@pytest.mark.parametrize("solver", ["svd", "lsqr", "eigen"])
@pytest.mark.parametrize("shrinkage", [None, 0.2])
def test_lda_coefficients_keep_float32(solver, shrinkage):
    if solver == "svd" and shrinkage is not None:
        pytest.skip("svd refuses shrinkage")
    X, y = load_wine(return_X_y=True)
    m = LinearDiscriminantAnalysis(solver=solver, shrinkage=shrinkage).fit(X.astype(np.float32), y)
    assert m.coef_.dtype == np.float32 and m.intercept_.dtype == np.float32
    ref = LinearDiscriminantAnalysis(solver=solver, shrinkage=shrinkage).fit(X, y)
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=1e-4, atol=1e-4 * np.abs(ref.coef_).max())


def test_cv_auto_is_ten_folds_up_to_1000_rows_and_100_features_and_five_above():
    from bayesrule.estimators._rda_lattice import auto_folds

    assert [auto_folds("auto", 1000, p) for p in (1, 100, 101, 784)] == [10, 10, 5, 5]
    assert [auto_folds("auto", n, 64) for n in (150, 1000, 1001, 60000)] == [10, 10, 5, 5]
    assert auto_folds(3, 60, 4) == 3 and auto_folds(None, 60, 4) is None
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 30)
    X = rng.normal(size=(60, 4)) + y[:, None] * 0.3
    kw = {**_GRID, "refine": False}
    a = RegularizedDiscriminantAnalysisCV(**kw).fit(X, y)
    b = RegularizedDiscriminantAnalysisCV(cv=10, **kw).fit(X, y)
    c = RegularizedDiscriminantAnalysisCV(cv=5, **kw).fit(X, y)
    np.testing.assert_array_equal(a.cv_scores_, b.cv_scores_)
    assert not np.array_equal(a.stats_.cv_log_likelihoods, c.stats_.cv_log_likelihoods)
    assert a.cv == "auto" and a.file_params()["cv"] == "auto"

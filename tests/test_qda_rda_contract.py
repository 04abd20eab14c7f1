"""QDA, RDA and RDA-CV under the statistics contract.

The per-class Gaussians are derived in the models layer
(``GaussianFamily.from_stats``), ``tol`` has no units, RDA-CV goes through
the common validation, takes any scikit-learn ``cv``, saves and loads, and
has a short name.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.datasets import load_iris, load_wine
from sklearn.model_selection import KFold, ShuffleSplit, StratifiedKFold

import bayesrule
from bayesrule import (
    QuadraticDiscriminantAnalysis,
    RegularizedDiscriminantAnalysis,
    RegularizedDiscriminantAnalysisCV,
)
from bayesrule.models.gaussian import GaussianFamily
from bayesrule.stats import ScatterStats

X, y = load_iris(return_X_y=True)
XW, YW = load_wine(return_X_y=True)
ALPHAS = (0.0, 0.5, 1.0)
GAMMAS = (0.0, 0.05, 0.3)


def _grid_search(splits, scoring="accuracy"):
    """Mean held-out score of each (alpha, gamma), by fitting plain RDAs."""
    out = np.zeros((len(ALPHAS), len(GAMMAS)))
    for i, a in enumerate(ALPHAS):
        for j, g in enumerate(GAMMAS):
            scores = []
            for train, test in splits:
                rda = RegularizedDiscriminantAnalysis(
                    target="range", alpha=a, gamma=g, ridge=0.0
                ).fit(XW[train], YW[train])
                scores.append((rda.predict(XW[test]) == YW[test]).mean())
            out[i, j] = np.mean(scores)
    return out


# ---------------------------------------------------------------- models layer
def test_family_from_stats_matches_scipy_for_the_classes_with_data():
    stats = ScatterStats.from_data(X, y, classes=[0, 1, 2, 7])  # class 7: declared, no rows
    family = GaussianFamily.from_stats(stats, ddof=1.0)
    assert len(family) == 3
    ref = np.column_stack(
        [multivariate_normal(X[y == c].mean(0), np.cov(X[y == c].T)).logpdf(X) for c in range(3)]
    )
    np.testing.assert_allclose(family.log_prob(X), ref, rtol=1e-10)


def test_family_member_samples_its_gaussian():
    family = GaussianFamily.from_stats(ScatterStats.from_data(X, y), reg_param=0.1)
    g = family[2]
    draws = g.sample(20000, np.random.default_rng(0))
    assert draws.shape == (20000, 4)
    np.testing.assert_allclose(draws.mean(0), g.mean, atol=0.05)
    np.testing.assert_allclose(np.cov(draws.T), g.covariance, atol=0.05)


@pytest.mark.parametrize("reg_param", [0.0, 0.05, 0.5, 1.0])
@pytest.mark.parametrize("data", [(X, y), (XW, YW)])
def test_rda_with_alpha_1_gamma_0_is_qda_with_the_same_reg_param(reg_param, data):
    Xd, yd = data
    rda = RegularizedDiscriminantAnalysis(alpha=1.0, gamma=0.0, ridge=0.0, reg_param=reg_param).fit(
        Xd, yd
    )
    qda = QuadraticDiscriminantAnalysis(reg_param=reg_param).fit(Xd, yd)
    np.testing.assert_allclose(rda.predict_proba(Xd), qda.predict_proba(Xd), rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(rda.predict(Xd), qda.predict(Xd))


def test_rda_reg_param_is_applied_after_the_blend_and_the_shrinkage():
    from bayesrule.covariance import shrink

    a, g, r = 0.5, 0.1, 0.2
    stats = ScatterStats.from_data(XW, YW)
    pooled = stats.pooled_covariance(1.0)
    p = XW.shape[1]
    units = np.ptp(XW, axis=0) / np.ptp(XW, axis=0).max()
    targets = {"identity": np.ones((p, p)), "range": np.outer(units, units)}
    for target, D in targets.items():  # gamma shrinks in the features' units or range units
        m = RegularizedDiscriminantAnalysis(
            alpha=a, gamma=g, ridge=0.0, reg_param=r, store_covariance=True, target=target
        )
        m.fit(XW, YW)
        for k in range(3):
            own = stats.scatter[k] / (stats.weights[k] - 1.0)
            blend = a * own + (1 - a) * pooled
            expected = (1 - r) * shrink(blend / D, g) * D + r * np.eye(p)
            np.testing.assert_allclose(m.covariance_[k], expected, rtol=1e-12)


def test_reg_param_makes_a_degenerate_class_regular_in_rda():
    collinear = X.copy()
    collinear[y == 2, 3] = 2.0 * collinear[y == 2, 2]
    with pytest.raises(ValueError, match=r"class 2 is singular.*reg_param > 0"):
        RegularizedDiscriminantAnalysis(alpha=1.0, ridge=0.0).fit(collinear, y)
    m = RegularizedDiscriminantAnalysis(alpha=1.0, ridge=0.0, reg_param=0.01).fit(collinear, y)
    assert np.isfinite(m.predict_proba(collinear)).all()


def test_rda_and_rda_cv_save_load_keep_reg_param(tmp_path):
    rda = RegularizedDiscriminantAnalysis(alpha=0.5, gamma=0.1, reg_param=0.05).fit(XW, YW)
    back = bayesrule.load(bayesrule.save(rda, tmp_path / "rda.bayesrule"))
    assert back.reg_param == 0.05
    np.testing.assert_array_equal(back.predict_proba(XW), rda.predict_proba(XW))
    cv = RegularizedDiscriminantAnalysisCV(alphas=ALPHAS, gammas=GAMMAS, reg_param=0.05, cv=3).fit(
        XW, YW
    )
    back = bayesrule.load(bayesrule.save(cv, tmp_path / "rdacv.bayesrule"))
    assert back.reg_param == 0.05
    np.testing.assert_array_equal(back.predict_proba(XW), cv.predict_proba(XW))


def test_family_blend_at_its_limits_is_qda():
    stats = ScatterStats.from_data(XW, YW)
    qda = GaussianFamily.from_stats(stats)
    rda = GaussianFamily.from_stats(stats, alpha=1.0, shrinkage=0.0)
    np.testing.assert_array_equal(qda.covariances, rda.covariances)


# ---------------------------------------------------------------- bug 5
@pytest.mark.parametrize("bad, word", [(np.nan, "NaN"), (np.inf, "infinity")])
def test_rda_cv_non_finite_x_names_row_and_column(bad, word):
    Xb = X.copy()
    Xb[7, 2] = bad
    with pytest.raises(ValueError, match=rf"contains {word} at row 7, column 2"):
        RegularizedDiscriminantAnalysisCV(cv=3).fit(Xb, y)


@pytest.mark.parametrize(
    "priors, message",
    [
        ([0.5, 0.5], r"priors must have one entry per class \(3 classes\)"),
        ([0.5, 0.6, -0.1], r"priors must be non-negative"),
    ],
)
def test_rda_cv_validates_priors_like_every_estimator(priors, message):
    with pytest.raises(ValueError, match=message):
        RegularizedDiscriminantAnalysisCV(cv=3, priors=priors).fit(X, y)


# ---------------------------------------------------------------- bug 6
@pytest.mark.parametrize("scale", [1e-2, 1e4])
@pytest.mark.parametrize(
    "make",
    [
        QuadraticDiscriminantAnalysis,
        lambda: RegularizedDiscriminantAnalysis(alpha=0.5, gamma=0.0, ridge=0.0),
        lambda: RegularizedDiscriminantAnalysis(alpha=1.0, gamma=0.1, ridge=0.0),
    ],
)
def test_tol_has_no_units(make, scale):
    ref = make().fit(X, y)
    scaled = make().fit(X * scale, y)
    np.testing.assert_array_equal(scaled.predict(X * scale), ref.predict(X))
    np.testing.assert_allclose(scaled.predict_proba(X * scale), ref.predict_proba(X), atol=1e-9)


@pytest.mark.parametrize("scale", [1.0, 1e-6, 1e6])
def test_degenerate_classes_still_raise_at_any_scale(scale):
    collinear = X.copy()
    collinear[y == 2, 3] = 2.0 * collinear[y == 2, 2]  # one feature a multiple of another
    with pytest.raises(ValueError, match=r"class 2 is singular.*reg_param"):
        QuadraticDiscriminantAnalysis().fit(collinear * scale, y)
    with pytest.raises(ValueError, match=r"class 2 is singular.*gamma"):
        RegularizedDiscriminantAnalysis(alpha=1.0, ridge=0.0).fit(collinear * scale, y)


# ---------------------------------------------------------------- task 5
@pytest.mark.parametrize("grid", [{"alphas": (0.5, 2.0)}, {"gammas": (0.1, -1.0)}, {"alphas": ()}])
def test_every_derivation_validates_the_grid(grid):
    m = RegularizedDiscriminantAnalysisCV(alphas=ALPHAS, gammas=GAMMAS, cv=3).fit(XW, YW)
    params = {**m.get_params(), **grid}
    with pytest.raises(ValueError, match=r"(alphas|gammas) must be a non-empty list"):
        RegularizedDiscriminantAnalysisCV.from_stats(m.stats_, **params)


# ---------------------------------------------------------------- RDA-CV's cv
def test_rda_cv_accepts_a_splitter_object():
    splitter = KFold(4, shuffle=True, random_state=3)
    m = RegularizedDiscriminantAnalysisCV(
        alphas=ALPHAS, gammas=GAMMAS, ridges=(0.0,), refine=False, cv=splitter
    ).fit(XW, YW)
    expected = _grid_search(list(splitter.split(XW, YW)))
    np.testing.assert_allclose(m.cv_scores_.reshape(expected.shape), expected, atol=1e-12)


def test_rda_cv_accepts_splits_that_are_not_folds():
    splits = list(ShuffleSplit(3, test_size=0.3, random_state=0).split(XW))
    m = RegularizedDiscriminantAnalysisCV(
        alphas=ALPHAS, gammas=GAMMAS, ridges=(0.0,), refine=False, cv=splits
    ).fit(XW, YW)
    expected = _grid_search(splits)
    np.testing.assert_allclose(m.cv_scores_.reshape(expected.shape), expected, atol=1e-12)


def test_rda_cv_index_pairs_equal_the_splitter_they_come_from():
    splitter = StratifiedKFold(3, shuffle=True, random_state=5)
    pairs = [(list(a), list(b)) for a, b in splitter.split(XW, YW)]
    by_object = RegularizedDiscriminantAnalysisCV(cv=splitter).fit(XW, YW)
    by_pairs = RegularizedDiscriminantAnalysisCV(cv=pairs).fit(XW, YW)
    by_generator = RegularizedDiscriminantAnalysisCV(cv=iter(pairs)).fit(XW, YW)
    np.testing.assert_array_equal(by_pairs.cv_scores_, by_object.cv_scores_)
    np.testing.assert_array_equal(by_generator.cv_scores_, by_object.cv_scores_)


def test_rda_cv_rejects_bad_splits():
    with pytest.raises(ValueError, match=r"split 0: test indices must be integers in \[0, 178\)"):
        RegularizedDiscriminantAnalysisCV(cv=[(np.arange(100), np.arange(150, 200))]).fit(XW, YW)
    with pytest.raises(ValueError, match=r"gave no \(train, test\) split"):
        RegularizedDiscriminantAnalysisCV(cv=[]).fit(XW, YW)


# ---------------------------------------------------------------- RDA-CV as a model
def test_rda_cv_save_load_round_trip_is_exact(tmp_path):
    m = RegularizedDiscriminantAnalysisCV(alphas=ALPHAS, gammas=GAMMAS, cv=3).fit(XW, YW)
    back = bayesrule.load(bayesrule.save(m, tmp_path / "rdacv.bayesrule"))
    assert (back.alpha_, back.gamma_) == (m.alpha_, m.gamma_)
    np.testing.assert_array_equal(back.cv_scores_, m.cv_scores_)
    np.testing.assert_array_equal(back.predict_proba(XW), m.predict_proba(XW))


def test_rda_cv_statistics_then_from_stats_equals_fit():
    est = RegularizedDiscriminantAnalysisCV(alphas=ALPHAS, gammas=GAMMAS, cv=3)
    built = RegularizedDiscriminantAnalysisCV.from_stats(est.statistics(XW, YW), **est.get_params())
    assert not hasattr(est, "stats_")  # statistics() leaves the estimator unfitted
    fitted = est.fit(XW, YW)
    np.testing.assert_array_equal(built.predict_proba(XW), fitted.predict_proba(XW))


@pytest.mark.parametrize("method", ["partial_fit", "merge", "forget"])
def test_rda_cv_refuses_streaming_clearly(method):
    m = RegularizedDiscriminantAnalysisCV(cv=3).fit(X, y)
    assert not hasattr(m, method)
    with pytest.raises(AttributeError, match=rf"no {method}: cross-validation"):
        getattr(m, method)


def test_rda_cv_short_name_resolves():
    from bayesrule.estimators.registry import get_estimator, short_name

    assert get_estimator("rdacv") is RegularizedDiscriminantAnalysisCV
    assert short_name(RegularizedDiscriminantAnalysisCV) == "rdacv"

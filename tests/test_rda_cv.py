"""RegularizedDiscriminantAnalysisCV: the fast search agrees with a plain one."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.model_selection import StratifiedKFold

from bayesrule import RegularizedDiscriminantAnalysis, RegularizedDiscriminantAnalysisCV

X, y = load_wine(return_X_y=True)
ALPHAS = (0.0, 0.5, 1.0)
GAMMAS = (0.0, 0.05, 0.3)


def grid_cv(**kw):
    """RDA-CV scoring a plain alphas x gammas grid (no ridge, no refinement)."""
    return RegularizedDiscriminantAnalysisCV(ridges=(0.0,), refine=False, **kw)


def score_of(m, alpha, gamma, ridge=0.0):
    """The held-out score ``m`` recorded for one candidate."""
    hit = np.flatnonzero(np.all(m.cv_points_ == [alpha, gamma, ridge], axis=1))
    assert hit.size == 1, (alpha, gamma, ridge)
    return m.cv_scores_[hit[0]]


@pytest.mark.parametrize("reg_param", [0.0, 0.05, 1.0])
def test_scores_equal_a_plain_grid_search(reg_param):
    m = grid_cv(alphas=ALPHAS, gammas=GAMMAS, reg_param=reg_param, cv=3, random_state=1).fit(X, y)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=1).split(X, y))
    for a in ALPHAS:
        for g in GAMMAS:
            accs = []
            for train, test in folds:
                rda = RegularizedDiscriminantAnalysis(
                    target="range", alpha=a, gamma=g, ridge=0.0, reg_param=reg_param
                )
                rda.fit(X[train], y[train])
                accs.append((rda.predict(X[test]) == y[test]).mean())
            assert score_of(m, a, g) == pytest.approx(np.mean(accs), abs=1e-12), (a, g)
    # the final model is the plain RDA of the chosen pair, with the same ridge
    ref = RegularizedDiscriminantAnalysis(
        target="range", alpha=m.alpha_, gamma=m.gamma_, ridge=0.0, reg_param=reg_param
    )
    ref.fit(X, y)
    np.testing.assert_allclose(m.predict_proba(X), ref.predict_proba(X), rtol=1e-10, atol=1e-12)


def test_log_likelihood_scores_with_reg_param_equal_a_plain_grid_search():
    m = grid_cv(
        alphas=(0.5, 1.0),
        gammas=(0.0, 0.1),
        reg_param=0.05,
        cv=3,
        scoring="log_likelihood",
        random_state=2,
    ).fit(X, y)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=2).split(X, y))
    for a in (0.5, 1.0):
        for g in (0.0, 0.1):
            ll = []
            for train, test in folds:
                rda = RegularizedDiscriminantAnalysis(
                    target="range", alpha=a, gamma=g, ridge=0.0, reg_param=0.05
                )
                rda.fit(X[train], y[train])
                ll.append(rda.predict_log_proba(X[test])[np.arange(len(test)), y[test]].mean())
            assert score_of(m, a, g) == pytest.approx(np.mean(ll), rel=1e-9), (a, g)


def test_log_likelihood_scores_equal_a_plain_grid_search():
    m = grid_cv(alphas=(0.5,), gammas=(0.1,), cv=3, scoring="log_likelihood", random_state=2).fit(
        X, y
    )
    ll = []
    for train, test in StratifiedKFold(3, shuffle=True, random_state=2).split(X, y):
        rda = RegularizedDiscriminantAnalysis(target="range", alpha=0.5, gamma=0.1, ridge=0.0).fit(
            X[train], y[train]
        )
        ll.append(rda.predict_log_proba(X[test])[np.arange(len(test)), y[test]].mean())
    assert score_of(m, 0.5, 0.1) == pytest.approx(np.mean(ll), rel=1e-9)


def test_refit_uses_the_best_pair_on_all_data():
    m = RegularizedDiscriminantAnalysisCV(cv=3).fit(X, y)
    assert score_of(m, m.alpha_, m.gamma_, m.ridge_) == m.cv_scores_.max()
    ref = RegularizedDiscriminantAnalysis(
        target="range", alpha=m.alpha_, gamma=m.gamma_, ridge=m.ridge_
    ).fit(X, y)
    np.testing.assert_allclose(m.predict_proba(X), ref.predict_proba(X), rtol=1e-10, atol=1e-12)


def test_no_partial_fit_or_merge():
    m = RegularizedDiscriminantAnalysisCV()
    assert not hasattr(m, "partial_fit") and not hasattr(m, "merge")


def test_bad_grid():
    with pytest.raises(ValueError, match=r"alphas must be a non-empty list of numbers in \[0, 1\]"):
        RegularizedDiscriminantAnalysisCV(alphas=(0.5, 2.0)).fit(X, y)


# ------------------------------------------------- the reformulated held-out scores
def _direct_terms(cov, means, X, gammas, reg_param=0.0):
    """Distances and log determinants from each shrunk (and ridged) covariance, one at a time."""
    from bayesrule.covariance import shrink

    maha = np.empty((X.shape[0], means.shape[0], len(gammas)))
    logdet = np.empty(len(gammas))
    for g_i, g in enumerate(gammas):
        S = (1.0 - reg_param) * shrink(cov, g) + reg_param * np.eye(cov.shape[0])
        logdet[g_i] = np.linalg.slogdet(S)[1]
        for j, m in enumerate(means):
            D = X - m
            maha[:, j, g_i] = np.einsum("ij,ij->i", D @ np.linalg.inv(S), D)
    return maha, logdet


@pytest.mark.parametrize("reg_param", [0.0, 0.05])
@pytest.mark.parametrize("dead", [0, 3])
def test_held_out_terms_equal_the_direct_formula(dead, reg_param):
    from bayesrule.estimators._rda_search import held_out_terms

    rng = np.random.default_rng(3)
    p = 8
    A = rng.standard_normal((40, p)) * np.linspace(0.2, 3.0, p)
    A[:, :dead] = 0.0  # features with no variance: the separate block
    cov = np.cov(A.T)
    means = rng.standard_normal((3, p))
    X = rng.standard_normal((25, p))
    # with a ridge, gamma = 0 is regular even with dead features
    gammas = (
        np.array([0.05, 0.3, 1.0]) if dead and not reg_param else np.array([0.0, 0.05, 0.3, 1.0])
    )
    maha, logdet, ok = held_out_terms(cov, means, X, gammas, 1e-4, reg_param)
    ref_maha, ref_logdet = _direct_terms(cov, means, X, gammas, reg_param)
    assert ok.all()
    np.testing.assert_allclose(maha, ref_maha, rtol=1e-10)
    np.testing.assert_allclose(logdet, ref_logdet, rtol=1e-10, atol=1e-10)


def test_held_out_terms_flag_a_singular_shrinkage():
    from bayesrule.estimators._rda_search import held_out_terms

    cov = np.diag([1.0, 2.0, 0.0])
    _, _, ok = held_out_terms(cov, np.zeros((1, 3)), np.ones((2, 3)), np.array([0.0, 0.1]), 1e-4)
    assert ok.tolist() == [False, True]
    # a ridge makes every gamma regular: the dead feature's eigenvalue is (1 - r) gamma t + r
    _, logdet, ok = held_out_terms(
        cov, np.zeros((1, 3)), np.ones((2, 3)), np.array([0.0, 0.1]), 1e-4, 0.05
    )
    assert ok.tolist() == [True, True]
    t = 1.0
    expected = [
        np.log(0.95 * ((1 - g) * lam + g * t) + 0.05).sum()
        for g in (0.0, 0.1)
        for lam in [np.array([1.0, 2.0, 0.0])]
    ]
    np.testing.assert_allclose(logdet, expected, rtol=1e-12)


def test_reg_param_makes_every_class_regular_in_the_grid():
    # a feature 0 everywhere: gamma = 0 is singular without a ridge, regular with one
    Xd = np.column_stack([X, np.zeros(len(y))])
    plain = grid_cv(alphas=(1.0,), gammas=(0.0, 0.1), cv=3).fit(Xd, y)
    assert score_of(plain, 1.0, 0.0) == -np.inf and np.isfinite(score_of(plain, 1.0, 0.1))
    ridged = grid_cv(alphas=(1.0,), gammas=(0.0,), reg_param=0.01, cv=3).fit(Xd, y)
    assert np.isfinite(ridged.cv_scores_).all()
    with pytest.raises(ValueError, match="add gammas > 0 or ridges > 0, or set reg_param > 0"):
        grid_cv(alphas=(1.0,), gammas=(0.0,), cv=3).fit(Xd, y)


def _plain_scores(X, y, alphas, gammas, folds, scoring="accuracy", reg_param=0.0, ridge=0.0):
    out = np.empty((len(alphas), len(gammas)))
    for i, a in enumerate(alphas):
        for j, g in enumerate(gammas):
            vals = []
            for train, test in folds:
                rda = RegularizedDiscriminantAnalysis(
                    target="range", alpha=a, gamma=g, reg_param=reg_param, ridge=ridge
                )
                rda.fit(X[train], y[train])
                if scoring == "accuracy":
                    vals.append((rda.predict(X[test]) == y[test]).mean())
                else:
                    lp = rda.predict_log_proba(X[test])
                    vals.append(
                        lp[np.arange(len(test)), np.searchsorted(rda.classes_, y[test])].mean()
                    )
            out[i, j] = np.mean(vals)
    return out


@pytest.mark.parametrize("reg_param", [0.0, 0.05])
@pytest.mark.parametrize("scoring", ["accuracy", "log_likelihood"])
def test_features_without_variance_equal_a_plain_grid_search(scoring, reg_param):
    # a feature 0 everywhere, one constant within each class, one 0 in one class
    Xd = np.column_stack([X, np.zeros(len(y)), y * 1.5, np.where(y == 0, 0.0, X[:, 0])])
    alphas = (0.0, 0.5, 1.0)
    gammas = (0.0, 0.05, 0.3) if reg_param else (0.05, 0.3)  # the ridge makes gamma = 0 regular
    m = grid_cv(
        alphas=alphas, gammas=gammas, reg_param=reg_param, cv=3, random_state=5, scoring=scoring
    ).fit(Xd, y)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=5).split(Xd, y))
    ref = _plain_scores(Xd, y, alphas, gammas, folds, scoring, reg_param)
    got = np.array([[score_of(m, a, g) for g in gammas] for a in alphas])
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)


# ------------------------------------------------- the ridge and the alpha sweep
@pytest.mark.parametrize("scoring", ["accuracy", "log_likelihood"])
def test_every_candidate_of_the_refined_search_equals_plain_rda(scoring):
    # every candidate the search scored (grid, alpha sweep, second grid) is the
    # mean held-out score of plain RDA fits with its (alpha, gamma, ridge)
    Xd = np.column_stack([X, np.zeros(len(y))])  # a dead feature: needs gamma or ridge
    m = RegularizedDiscriminantAnalysisCV(
        alphas=(0.0, 1.0), gammas=(0.0, 0.1), ridges=(0.0, 0.2), cv=3, random_state=4,
        scoring=scoring,
    ).fit(Xd, y)  # fmt: skip
    assert m.cv_points_.shape[0] > 8  # the sweep added alphas
    folds = list(StratifiedKFold(3, shuffle=True, random_state=4).split(Xd, y))
    rng = np.random.default_rng(0)
    finite = np.flatnonzero(np.isfinite(m.cv_scores_))
    for idx in rng.choice(finite, size=min(12, finite.size), replace=False).tolist():
        a, g, r = m.cv_points_[idx]
        ref = _plain_scores(Xd, y, [a], [g], folds, scoring, ridge=r)[0, 0]
        assert m.cv_scores_[idx] == pytest.approx(ref, rel=1e-9, abs=1e-12), (a, g, r)
    for idx in np.flatnonzero(~np.isfinite(m.cv_scores_)).tolist()[:4]:
        a, g, r = m.cv_points_[idx]
        with pytest.raises(ValueError, match="singular"):
            for train, _ in folds:
                RegularizedDiscriminantAnalysis(target="range", alpha=a, gamma=g, ridge=r).fit(
                    Xd[train], y[train]
                )


def test_a_class_of_one_row_is_named_in_the_refusal():
    from bayesrule._util.validation import TooFewRows

    X, y = load_wine(return_X_y=True)
    keep = np.r_[np.flatnonzero(y != 2), np.flatnonzero(y == 2)[:1]]
    labels = np.array(["barolo", "grignolino", "barbera"])[y[keep]]
    with pytest.raises(TooFewRows, match=r"class 'barbera' has 1 \(the fold"):
        RegularizedDiscriminantAnalysisCV().fit(X[keep], labels)

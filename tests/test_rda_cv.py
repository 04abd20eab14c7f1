"""RegularizedDiscriminantAnalysisCV: the fast grid search agrees with a plain one."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.model_selection import StratifiedKFold

from bayesrule import RegularizedDiscriminantAnalysis, RegularizedDiscriminantAnalysisCV

X, y = load_wine(return_X_y=True)
ALPHAS = (0.0, 0.5, 1.0)
GAMMAS = (0.0, 0.05, 0.3)


def test_scores_equal_a_plain_grid_search():
    m = RegularizedDiscriminantAnalysisCV(alphas=ALPHAS, gammas=GAMMAS, cv=3, random_state=1).fit(
        X, y
    )
    folds = list(StratifiedKFold(3, shuffle=True, random_state=1).split(X, y))
    for i, a in enumerate(ALPHAS):
        for j, g in enumerate(GAMMAS):
            accs = []
            for train, test in folds:
                rda = RegularizedDiscriminantAnalysis(alpha=a, gamma=g).fit(X[train], y[train])
                accs.append((rda.predict(X[test]) == y[test]).mean())
            assert m.cv_scores_[i, j] == pytest.approx(np.mean(accs), abs=1e-12), (a, g)


def test_log_likelihood_scores_equal_a_plain_grid_search():
    m = RegularizedDiscriminantAnalysisCV(
        alphas=(0.5,), gammas=(0.1,), cv=3, scoring="log_likelihood", random_state=2
    ).fit(X, y)
    ll = []
    for train, test in StratifiedKFold(3, shuffle=True, random_state=2).split(X, y):
        rda = RegularizedDiscriminantAnalysis(alpha=0.5, gamma=0.1).fit(X[train], y[train])
        ll.append(rda.predict_log_proba(X[test])[np.arange(len(test)), y[test]].mean())
    assert m.cv_scores_[0, 0] == pytest.approx(np.mean(ll), rel=1e-9)


def test_refit_uses_the_best_pair_on_all_data():
    m = RegularizedDiscriminantAnalysisCV(alphas=ALPHAS, gammas=GAMMAS, cv=3).fit(X, y)
    i, j = np.unravel_index(np.argmax(m.cv_scores_), m.cv_scores_.shape)
    assert m.cv_scores_[ALPHAS.index(m.alpha_), GAMMAS.index(m.gamma_)] == m.cv_scores_[i, j]
    ref = RegularizedDiscriminantAnalysis(alpha=m.alpha_, gamma=m.gamma_).fit(X, y)
    np.testing.assert_allclose(m.predict_proba(X), ref.predict_proba(X), rtol=1e-10, atol=1e-12)


def test_no_partial_fit_or_merge():
    m = RegularizedDiscriminantAnalysisCV()
    assert not hasattr(m, "partial_fit") and not hasattr(m, "merge")


def test_bad_grid():
    with pytest.raises(ValueError, match=r"alphas must be a non-empty list of numbers in \[0, 1\]"):
        RegularizedDiscriminantAnalysisCV(alphas=(0.5, 2.0)).fit(X, y)

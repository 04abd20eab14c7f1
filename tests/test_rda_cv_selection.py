"""RDA-CV's choice among near ties of held-out accuracy, and the sweep's isolated features."""
# the neighbourhood rule (the default) has its own tests in test_rda_cv_neighbourhood.py

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bayesrule import RegularizedDiscriminantAnalysisCV
from bayesrule.estimators._rda_search import alpha_sweep_terms, standardised_min_eigenvalue

# a small explicit grid where a test is about the rule or the file, not the default search
_GRID = {"alphas": (0.0, 0.4, 0.8, 1.0), "gammas": (0.0, 0.2), "ridges": (0.0, 0.05, 0.3)}


def _small_table(seed, structure, n=18, p=5, K=3):
    """Few rows per class, Gaussian classes whose covariances differ as ``structure`` says.

    'shared': one covariance; 'scaled': one shape, spreads differing by class;
    'own': a covariance of each class's own. Features in units from 1e-3 to 1e3.
    """
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(p, p))
    units = 10.0 ** rng.uniform(-3, 3, size=p)
    X, y = [], []
    for k in range(K):
        if structure == "shared":
            A = base
        elif structure == "scaled":
            A = base * (0.5 + k)
        else:
            A = rng.normal(size=(p, p))
        X.append((rng.normal(size=(n, p)) @ A.T + 1.2 * rng.normal(size=p)) * units)
        y.append(np.full(n, k))
    return np.vstack(X), np.concatenate(y)


@pytest.mark.parametrize("structure", ["shared", "scaled", "own"])
@pytest.mark.parametrize("seed", range(3))
def test_near_ties_of_accuracy_go_to_the_best_held_out_log_likelihood(seed, structure):
    # the rule of tie_break='log_likelihood' (the default before 'neighbourhood')
    X, y = _small_table(seed, structure)
    m = RegularizedDiscriminantAnalysisCV(tie_break="log_likelihood").fit(X, y)
    acc, ll = m.cv_scores_, m.stats_.cv_log_likelihoods
    assert ll.shape == acc.shape
    assert np.array_equal(np.isfinite(ll), np.isfinite(acc))
    best = acc[np.isfinite(acc)].max()
    band = np.sqrt(best * (1 - best) / len(y))
    near = np.isfinite(acc) & (acc >= best - band - 1e-12)
    chosen = np.flatnonzero(np.all(m.cv_points_ == [m.alpha_, m.gamma_, m.ridge_], axis=1))
    assert chosen.size == 1
    assert near[chosen[0]]
    assert ll[chosen[0]] == pytest.approx(ll[near].max(), abs=1e-12)
    proba = m.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_the_regularisation_tie_break_is_the_best_accuracy(seed):
    X, y = _small_table(seed, "own")
    m = RegularizedDiscriminantAnalysisCV(tie_break="regularisation").fit(X, y)
    chosen = np.flatnonzero(np.all(m.cv_points_ == [m.alpha_, m.gamma_, m.ridge_], axis=1))
    assert m.cv_scores_[chosen[0]] == m.cv_scores_.max()


def test_the_log_likelihood_is_the_score_of_scoring_log_likelihood():
    X, y = _small_table(0, "scaled")
    a = RegularizedDiscriminantAnalysisCV(refine=False, **_GRID).fit(X, y)
    b = RegularizedDiscriminantAnalysisCV(refine=False, scoring="log_likelihood", **_GRID).fit(X, y)
    np.testing.assert_array_equal(a.cv_points_, b.cv_points_)
    np.testing.assert_allclose(a.stats_.cv_log_likelihoods, b.cv_scores_, rtol=0, atol=1e-12)


def test_statistics_without_log_likelihoods_choose_by_score_alone():
    # a model file written before the log-likelihoods were kept
    X, y = _small_table(1, "own")
    m = RegularizedDiscriminantAnalysisCV(**_GRID).fit(X, y)
    old = dataclasses.replace(m.stats_, cv_log_likelihoods=None)
    again = RegularizedDiscriminantAnalysisCV.from_stats(old)
    ref = RegularizedDiscriminantAnalysisCV.from_stats(m.stats_, tie_break="regularisation")
    assert (again.alpha_, again.gamma_, again.ridge_) == (ref.alpha_, ref.gamma_, ref.ridge_)
    chosen = np.flatnonzero(
        np.all(again.cv_points_ == [again.alpha_, again.gamma_, again.ridge_], axis=1)
    )
    assert again.cv_scores_[chosen[0]] == again.cv_scores_.max()


def test_log_likelihoods_of_the_wrong_shape_are_refused():
    X, y = _small_table(2, "shared")
    m = RegularizedDiscriminantAnalysisCV(refine=False, **_GRID).fit(X, y)
    bad = dataclasses.replace(m.stats_, cv_log_likelihoods=m.stats_.cv_log_likelihoods[:-1])
    with pytest.raises(ValueError, match="cv_log_likelihoods must have the shape of cv_scores"):
        RegularizedDiscriminantAnalysisCV.from_stats(bad)


def test_a_tie_break_outside_the_options_is_refused():
    X, y = _small_table(0, "shared")
    with pytest.raises(ValueError, match="tie_break"):
        RegularizedDiscriminantAnalysisCV(tie_break="simplest").fit(X, y)


@pytest.mark.parametrize("n_alone", [0, 1, 4])
@pytest.mark.parametrize("seed", range(3))
def test_the_alpha_sweep_with_isolated_features_equals_the_direct_formula(seed, n_alone):
    # features with one variance and no covariance in both matrices (pixels
    # constant in every training row, given the ridge's variance) are split off
    rng = np.random.default_rng(seed)
    p, n = 7, 20
    G = rng.normal(size=(p, p))
    H = rng.normal(size=(p, p))
    A, B = G @ G.T + 0.1 * np.eye(p), H @ H.T + 0.1 * np.eye(p)
    alone = rng.choice(p, size=n_alone, replace=False)
    for j in alone:
        v = rng.uniform(0.5, 2.0)
        for M in (A, B):
            M[j, :] = M[:, j] = 0.0
            M[j, j] = v
    means = rng.normal(size=(2, p))
    Xh = rng.normal(size=(n, p))
    alphas = np.linspace(0.0, 1.0, 11)
    b_min = standardised_min_eigenvalue(B)
    maha, logdet, ok = alpha_sweep_terms(A, B, b_min, means, Xh, alphas, 1e-4)
    assert ok.all()
    for s, a in enumerate(alphas):
        S = a * A + (1 - a) * B
        inv = np.linalg.inv(S)
        for j, m in enumerate(means):
            d = Xh - m
            np.testing.assert_allclose(
                maha[:, j, s], np.einsum("ij,jk,ik->i", d, inv, d), rtol=1e-9
            )
        assert logdet[s] == pytest.approx(np.linalg.slogdet(S)[1], rel=1e-10, abs=1e-10)

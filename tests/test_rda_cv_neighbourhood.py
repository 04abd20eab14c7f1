"""RDA-CV's default choice: the near-tie rule on neighbourhood means (tie_break='neighbourhood')."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayesrule import RegularizedDiscriminantAnalysisCV
from bayesrule.estimators._cv_stats import auto_alphas, neighbourhood_means


def _table(seed, n=20, p=4, K=3, spread=1.0):
    """Gaussian classes, each with a covariance of its own, features in units 1e-3 to 1e3."""
    rng = np.random.default_rng(seed)
    units = 10.0 ** rng.uniform(-3, 3, size=p)
    X, y = [], []
    for k in range(K):
        A = rng.normal(size=(p, p)) * (0.5 + spread * k)
        X.append((rng.normal(size=(n, p)) @ A.T + 1.5 * rng.normal(size=p)) * units)
        y.append(np.full(n, k))
    return np.vstack(X), np.concatenate(y)


def _brute_means(points, values):
    """Neighbourhood means, point by point: adjacent alpha (at most 0.1 apart), gamma and ridge levels."""
    levels = [np.searchsorted(np.unique(points[:, j]), points[:, j]) for j in range(3)]
    finite = np.isfinite(values)
    out = np.full(len(values), -np.inf)
    for i in np.flatnonzero(finite):
        nb = finite & (np.abs(points[:, 0] - points[i, 0]) <= 0.1 + 1e-9)
        for lv in levels:
            nb &= np.abs(lv - lv[i]) <= 1
        out[i] = values[nb].mean()
    return out


@pytest.mark.parametrize("seed", range(3))
def test_the_choice_is_the_near_tie_rule_on_neighbourhood_means(seed):
    X, y = _table(seed)
    m = RegularizedDiscriminantAnalysisCV(cv=3).fit(X, y)
    points, acc, ll = m.cv_points_, m.cv_scores_, m.stats_.cv_log_likelihoods
    s_acc, s_ll = _brute_means(points, acc), _brute_means(points, ll)
    np.testing.assert_allclose(neighbourhood_means(points, acc), s_acc, rtol=0, atol=1e-12)
    best = s_acc[np.isfinite(s_acc)].max()
    band = 0.5 * np.sqrt(best * (1 - best) / len(y))  # half a standard error
    near = np.isfinite(s_acc) & (s_acc >= best - band - 1e-12)
    chosen = np.flatnonzero(np.all(points == [m.alpha_, m.gamma_, m.ridge_], axis=1))
    assert chosen.size == 1 and near[chosen[0]]
    assert s_ll[chosen[0]] == pytest.approx(s_ll[near].max(), abs=1e-12)
    proba = m.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def _constructed(spike_at, plateau_centre, rng):
    """Scores on the full lattice: a low floor, a broad plateau, and one isolated spike above it."""
    alphas = auto_alphas(4)
    g, r = np.array([0.0, 0.05, 0.2, 0.5]), np.array([0.0, 0.01, 0.1, 0.5])
    A, G, R = np.meshgrid(alphas, g, r, indexing="ij")
    points = np.column_stack([A.ravel(), G.ravel(), R.ravel()])
    gi = np.searchsorted(g, points[:, 1])
    ri = np.searchsorted(r, points[:, 2])
    ca, cg, cr = plateau_centre
    on_plateau = (
        (np.abs(points[:, 0] - ca) <= 0.1) & (np.abs(gi - cg) <= 1) & (np.abs(ri - cr) <= 1)
    )
    acc = np.where(on_plateau, 0.95, 0.80) + rng.uniform(0, 0.002, len(points))
    ll = np.where(on_plateau, -0.15, -0.50) + rng.uniform(0, 0.002, len(points))
    spike = np.flatnonzero(np.all(np.isclose(points, spike_at), axis=1))[0]
    acc[spike], ll[spike] = 0.99, -0.05  # alone above a floor of 0.80: luck on a few rows
    return points, acc, ll


@pytest.mark.parametrize("seed", range(4))
def test_a_plateau_is_preferred_to_an_isolated_spike(seed):
    rng = np.random.default_rng(seed)
    X, y = _table(seed)
    m = RegularizedDiscriminantAnalysisCV(cv=3).fit(X, y)
    centre = (float(rng.choice([0.3, 0.5, 0.7])), int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    spike = (float(rng.choice([0.0, 0.9, 1.0])), 0.5, 0.5)
    points, acc, ll = _constructed(spike, centre, rng)
    stats = dataclasses.replace(m.stats_, cv_points=points, cv_scores=acc, cv_log_likelihoods=ll)
    chosen = RegularizedDiscriminantAnalysisCV.from_stats(stats)
    assert abs(chosen.alpha_ - centre[0]) <= 0.1 + 1e-9
    assert (chosen.alpha_, chosen.gamma_, chosen.ridge_) != spike
    # the earlier rules take the spike
    for rule in ("log_likelihood", "regularisation"):
        other = RegularizedDiscriminantAnalysisCV.from_stats(stats, tie_break=rule)
        assert (other.alpha_, other.gamma_, other.ridge_) == spike


@settings(max_examples=5, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=4, max_size=4), st.integers(0, 50))
def test_the_choice_and_the_scores_do_not_depend_on_units(log_units, seed):
    X, y = _table(seed, n=15)
    a = RegularizedDiscriminantAnalysisCV(cv=3).fit(X, y)
    b = RegularizedDiscriminantAnalysisCV(cv=3).fit(X * 10.0 ** np.array(log_units), y)
    assert (a.alpha_, a.gamma_, a.ridge_) == (b.alpha_, b.gamma_, b.ridge_)
    np.testing.assert_array_equal(a.cv_points_, b.cv_points_)
    np.testing.assert_allclose(a.cv_scores_, b.cv_scores_, rtol=0, atol=1e-12)


def test_fits_are_deterministic():
    X, y = _table(5)
    a = RegularizedDiscriminantAnalysisCV(cv=3).fit(X, y)
    b = RegularizedDiscriminantAnalysisCV(cv=3).fit(X, y)
    assert (a.alpha_, a.gamma_, a.ridge_) == (b.alpha_, b.gamma_, b.ridge_)
    np.testing.assert_array_equal(a.cv_scores_, b.cv_scores_)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_auto_alphas_without_refine_score_every_alpha_of_the_lattice_up_to_100_features():
    X, y = _table(1)
    m = RegularizedDiscriminantAnalysisCV(refine=False, cv=3).fit(X, y)
    lattice = np.round(np.linspace(0, 1, 51), 12)
    assert set(np.unique(m.cv_points_[:, 0])) == set(lattice)
    # every candidate of the grid: 51 alphas x 4 gammas x 9 ridges, nothing else
    assert m.cv_points_.shape[0] == 51 * 4 * 9
    np.testing.assert_array_equal(auto_alphas(100), lattice)
    np.testing.assert_array_equal(auto_alphas(101), [0.0, 1.0])


@pytest.mark.parametrize("seed", range(4))
def test_the_refined_search_scores_the_coarse_alphas_and_the_window_of_its_choice(seed):
    X, y = _table(seed, spread=0.3 * seed)
    full = RegularizedDiscriminantAnalysisCV(refine=False, cv=3).fit(X, y)
    m = RegularizedDiscriminantAnalysisCV(cv=3).fit(X, y)
    alphas = np.unique(m.cv_points_[:, 0])
    coarse = np.round(np.linspace(0, 1, 11), 12)
    assert set(coarse) <= set(alphas) and alphas.size < 51
    window = np.round(np.linspace(0, 1, 51), 12)
    window = window[np.abs(window - m.alpha_) <= 0.06 + 1e-9]
    assert set(window) <= set(alphas)
    # every alpha scored is scored at every (gamma, ridge): the exhaustive lattice's rows
    assert m.cv_points_.shape[0] == alphas.size * 4 * 9
    index = {tuple(p): i for i, p in enumerate(full.cv_points_.tolist())}
    rows = [index[tuple(p)] for p in m.cv_points_.tolist()]
    np.testing.assert_array_equal(m.cv_scores_, full.cv_scores_[rows])
    ll = m.stats_.cv_log_likelihoods
    np.testing.assert_array_equal(ll, full.stats_.cv_log_likelihoods[rows])
    # the choice is the rule's among the candidates scored (redone from the statistics)
    again = RegularizedDiscriminantAnalysisCV.from_stats(m.stats_)
    assert (again.alpha_, again.gamma_, again.ridge_) == (m.alpha_, m.gamma_, m.ridge_)


def test_the_refinement_follows_the_choice_to_its_window():
    # scores peaked at alpha 0.46: the coarse round sees 0.4 and 0.5, the window finds 0.46
    from bayesrule.estimators._rda_lattice import coarse_alphas, refine_alphas

    scored = list(coarse_alphas())

    def choose():
        a = np.array(scored)
        return float(a[np.argmin(np.abs(a - 0.46))])

    refine_alphas(choose, lambda a: scored.extend(a.tolist()), np.array(scored))
    assert choose() == pytest.approx(0.46)
    assert {0.4, 0.42, 0.44, 0.46, 0.48, 0.5, 0.52} <= {round(a, 12) for a in scored}
    assert len(scored) < 51


def test_neighbourhood_means_leave_singular_candidates_out():
    points = np.array([[0.0, 0.0, 0.0], [0.02, 0.0, 0.0], [0.04, 0.0, 0.0], [0.5, 0.0, 0.0]])
    values = np.array([-np.inf, 0.8, 0.6, 0.9])
    out = neighbourhood_means(points, values)
    assert out[0] == -np.inf
    np.testing.assert_allclose(out[1:], [0.7, 0.7, 0.9])

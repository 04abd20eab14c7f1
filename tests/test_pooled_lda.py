"""LDA's pooled statistic through the fit seam: what the Spark backend asks for, checked in memory."""

from __future__ import annotations

import numpy as np
import pytest

import bayesrule
from bayesrule.estimators.seam import summarise
from bayesrule.stats import PooledScatterStats, ScatterStats, StatisticsError


def _data(seed: int, n: int = 240, p: int = 5, k: int = 4):
    rng = np.random.default_rng(seed)
    y = np.array(["u", "v", "w", "x"][:k])[rng.integers(0, k, n)]
    X = rng.normal(size=(n, p)) * rng.uniform(0.1, 100.0, p) + rng.uniform(-1e3, 1e3, p)
    w = rng.integers(0, 4, n).astype(float)
    return X, y, w


def _blocks(X, y, w, cuts):
    """Blocks of rows cut at ``cuts``: some empty, some of one class."""
    order = np.argsort(y, kind="stable")  # rows grouped by class: blocks missing classes
    X, y, w = X[order], y[order], w[order]
    edges = [0, *cuts, len(y)]
    return [(X[a:b], y[a:b], w[a:b]) for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]


@pytest.mark.parametrize("seed", range(4))
def test_a_pooled_task_gives_the_model_of_one_fit(seed):
    X, y, w = _data(seed)
    rng = np.random.default_rng(100 + seed)
    cuts = sorted(rng.choice(np.arange(1, len(y)), 5, replace=False).tolist())
    for params in ({}, {"solver": "eigen", "shrinkage": 0.4}, {"bias": True}):
        ref = bayesrule.LinearDiscriminantAnalysis(**params).fit(X, y, sample_weight=w)
        est = bayesrule.LinearDiscriminantAnalysis(**params)
        task = est.summariser(pooled_scatter=True)
        stats = summarise(task, _blocks(X, y, w, cuts))
        assert type(stats) is PooledScatterStats
        assert stats.allclose(PooledScatterStats.from_scatter(ref.stats_), rtol=1e-10)
        got = bayesrule.LinearDiscriminantAnalysis.from_stats(stats, **params)
        np.testing.assert_allclose(got.covariance_, ref.covariance_, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got.predict_proba(X), ref.predict_proba(X), atol=1e-10)


def test_the_option_is_ignored_where_a_class_scatter_is_needed():
    X, y, w = _data(0)
    for params, kind in (
        ({"solver": "eigen", "shrinkage": "oas"}, "ScatterStats"),
        ({"solver": "eigen", "shrinkage": "auto"}, "FourthMomentStats"),
        ({"moments": "second"}, "ScatterStats"),
        ({"moments": "fourth"}, "FourthMomentStats"),
    ):
        task = bayesrule.LinearDiscriminantAnalysis(**params).summariser(pooled_scatter=True)
        assert type(task.statistics(X, y, w)).__name__ == kind
    # a fitted model keeps its statistics' kind
    fitted = bayesrule.LinearDiscriminantAnalysis().fit(X, y)
    assert type(fitted.summariser(pooled_scatter=True).statistics(X, y)) is ScatterStats
    pooled = bayesrule.LinearDiscriminantAnalysis.from_stats(PooledScatterStats.from_data(X, y, w))
    assert type(pooled.summariser().statistics(X, y)) is PooledScatterStats
    # other estimators take the option and ignore it
    gnb = bayesrule.GaussianNB().summariser(pooled_scatter=True)
    assert type(gnb.statistics(X, y)).__name__ == "DiagonalStats"


def test_from_scatter_and_merge_with_per_class_statistics():
    X, y, w = _data(1)
    a, b = slice(0, 100), slice(100, None)
    whole = PooledScatterStats.from_data(X, y, w)
    assert PooledScatterStats.from_scatter(ScatterStats.from_data(X, y, w)).allclose(whole)
    left = PooledScatterStats.from_data(X[a], y[a], w[a])
    right = ScatterStats.from_data(X[b], y[b], w[b])
    assert left.merge(right).allclose(whole)
    with pytest.raises(StatisticsError, match="not PooledScatterStats"):
        right.merge(left)
    with pytest.raises(StatisticsError, match="takes ScatterStats; got DiagonalStats"):
        PooledScatterStats.from_scatter(bayesrule.GaussianNB().fit(X, y).stats_)

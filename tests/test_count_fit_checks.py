"""Count models read the sign of X from their statistics' own pass: every case still refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import bayesrule as br

COUNT_MODELS = [br.MultinomialNB, br.ComplementNB, br.PoissonNB]


def _counts(n: int = 400, p: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.poisson(3.0, size=(n, p)).astype(float), rng.integers(0, 3, size=n)


@pytest.mark.parametrize("cls", COUNT_MODELS)
@pytest.mark.parametrize("where", ["first", "last", "middle"])
def test_a_negative_count_anywhere_is_refused_naming_its_column(cls, where):
    X, y = _counts()
    r = {"first": 0, "last": X.shape[0] - 1, "middle": 200}[where]
    X[r, 4] = -1.0
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    with pytest.raises(ValueError, match=r"Negative values.*column (4|'f4') \(-1\.0\)"):
        cls().fit(frame, y)
    with pytest.raises(ValueError, match="Negative values"):
        cls().fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="Negative values"):
        cls().partial_fit(X, y, classes=[0, 1, 2])


@pytest.mark.parametrize("cls", COUNT_MODELS)
def test_a_negative_count_in_a_row_of_zero_weight_is_refused_too(cls):
    X, y = _counts()
    X[7, 2] = -3.0
    w = np.ones(X.shape[0])
    w[7] = 0.0
    with pytest.raises(ValueError, match="Negative values"):
        cls().fit(X, y, sample_weight=w)


@pytest.mark.parametrize("cls", COUNT_MODELS)
def test_negative_beside_missing_values_is_refused_and_missing_alone_is_not(cls):
    X, y = _counts()
    X[3, 1] = np.nan
    model = cls().fit(X, y)  # NaN is a missing entry
    P = model.predict_proba(X)
    assert np.all(np.isfinite(P)) and np.allclose(P.sum(axis=1), 1.0)
    X[5, 0] = -0.5
    with pytest.raises(ValueError, match="Negative values"):
        cls().fit(X, y)


@pytest.mark.parametrize("cls", COUNT_MODELS)
@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinity_is_refused_at_fit(cls, bad):
    X, y = _counts()
    X[11, 3] = bad
    with pytest.raises(ValueError, match="infinity|Negative values"):
        cls().fit(X, y)
    assert not hasattr(cls(), "stats_")


@pytest.mark.parametrize("cls", [br.MultinomialNB, br.ComplementNB])
def test_parallel_rows_give_the_statistics_of_one_pass(cls):
    """The count statistics are summed over row ranges on threads: equal to one thread's."""
    X, y = _counts(n=30000, p=50)
    with br.config_context(n_threads=1):
        one = cls().fit(X, y)
    with br.config_context(n_threads=2):
        two = cls().fit(X, y)
    np.testing.assert_allclose(two.stats_.sums, one.stats_.sums, rtol=1e-12)
    np.testing.assert_array_equal(two.stats_.lower, X.min(axis=0))
    np.testing.assert_array_equal(two.stats_.upper, X.max(axis=0))
    np.testing.assert_allclose(two.predict_proba(X[:50]), one.predict_proba(X[:50]), rtol=1e-10)


@pytest.mark.parametrize("norm", [False, True])
def test_complement_scores_equal_the_general_path_with_and_without_missing(norm):
    """Dense X takes one product, falling back on NaN; sparse X always splits out the missing."""
    X, y = _counts(seed=3)
    model = br.ComplementNB(norm=norm).fit(X, y)
    Xq = X[:30].copy()
    np.testing.assert_allclose(
        model.predict_log_proba(Xq), model.predict_log_proba(sp.csr_matrix(Xq)), rtol=1e-12
    )
    Xq[::3, 2] = np.nan
    got = model.predict_log_proba(Xq)
    np.testing.assert_allclose(got, model.predict_log_proba(sp.csr_matrix(Xq)), rtol=1e-12)
    assert np.all(np.isfinite(got))

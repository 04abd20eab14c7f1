"""The range check's sample of rows: evenly spaced runs of consecutive rows.

A large batch's out-of-range and units warnings are judged on 32 runs of 32
rows (:mod:`bayesrule._util.row_sample`). The sample is read as a view of the
rows (dense arrays of any layout), by index (sparse matrices), or block by
block with the count models' fused product; every way must read the same rows.
"""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import bayesrule as br
from _generated import runs_of
from bayesrule._util import products
from bayesrule._util.row_sample import (
    SAMPLE_ROWS,
    fold_runs_max,
    run_rows,
    runs_view,
    sample_runs,
)
from bayesrule.estimators._ranges import warn_out_of_range


@pytest.mark.parametrize("n", [0, 1, 5, 1023, 2047, 2048, 2049, 5000, 10_000, 10**6 + 7])
def test_the_sample_fits_the_batch(n):
    count, rows, spacing = sample_runs(n)
    assert rows <= spacing
    assert (count - 1) * spacing + rows <= max(n, 1)
    if n < 2 * SAMPLE_ROWS:
        assert (count, rows) == (1, n)  # a small batch is judged whole
    else:
        assert count * rows == SAMPLE_ROWS
        idx = run_rows((count, rows, spacing))
        assert np.all(np.diff(idx) > 0) and idx[-1] < n
        # spread over the batch: the last run starts in its last 1/count
        assert idx[-rows] >= n - n // count - rows


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 300),
    p=st.integers(1, 6),
    step=st.integers(1, 40),
    run=st.integers(1, 9),
    layout=st.sampled_from(["C", "F", "columns", "int"]),
)
def test_the_view_holds_the_samples_rows(n, p, step, run, layout):
    rng = np.random.default_rng(n * 7 + p)
    X = rng.normal(size=(n, 2 * p))
    X = {
        "C": X[:, :p],
        "F": np.asfortranarray(X[:, :p]),
        "columns": X[:, ::2],
        "int": (X[:, :p] * 100).astype(np.int32),
    }[layout]
    runs = runs_of(n, step, run)
    view = runs_view(X, runs)
    np.testing.assert_array_equal(view.reshape(-1, p), X[run_rows(runs)])
    assert not view.flags.writeable and np.shares_memory(view, X)


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 200),
    step=st.integers(1, 30),
    run=st.integers(1, 12),
    block=st.integers(1, 70),
    nan=st.booleans(),
)
def test_blocks_fold_the_samples_maxima(n, step, run, block, nan):
    """The maxima folded block by block are the sample's own, NaN where it has one."""
    rng = np.random.default_rng(n + 1000 * step + 7 * block)
    X = rng.normal(size=(n, 4))
    if nan:
        X[rng.integers(n), rng.integers(4)] = np.nan
    runs = runs_of(n, step, run)
    hi = np.full((-(-n // block), 4), -np.inf)
    for i, s in enumerate(range(0, n, block)):
        fold_runs_max(X, s, min(s + block, n), runs, hi[i])
        inside = [r for r in run_rows(runs) if s <= r < s + block]
        expected = X[inside].max(axis=0) if inside else np.full(4, -np.inf)
        np.testing.assert_array_equal(hi[i], expected)
    np.testing.assert_array_equal(hi.max(axis=0), X[run_rows(runs)].max(axis=0))


def test_runs_that_do_not_fit_are_refused():
    with pytest.raises(ValueError, match="do not fit"):
        runs_view(np.zeros((10, 2)), (3, 2, 5))
    with pytest.raises(ValueError, match="do not fit"):
        runs_view(np.zeros((10, 2)), (2, 4, 3))  # runs longer than their spacing


@pytest.mark.parametrize("n", [2048, 5000, 10_007])
@pytest.mark.parametrize("parts", [1, 3, 8])
def test_the_fused_products_read_the_same_sample(n, parts, monkeypatch):
    """The count models' product records the maxima of exactly the check's sample."""
    rng = np.random.default_rng(n)
    X = rng.poisson(3.0, size=(n, 70)).astype(np.float64)
    A = rng.normal(size=(4, 70))
    expected = X[run_rows(sample_runs(n))].max(axis=0)
    monkeypatch.setattr(products, "CHECK_PARTS", parts)
    products.track_low(X, sample=sample_runs(n))
    products._checked_rows_dot(X, A)
    _, bounds = products.tracked_low()
    np.testing.assert_array_equal(bounds[1], expected)
    monkeypatch.setattr(products, "FUSED_ROWS", 97 * parts)
    products.track_low(X, sample=sample_runs(n))
    products._fused_rows_dot(X, A)
    _, bounds = products.tracked_low()
    np.testing.assert_array_equal(bounds[1], expected)


def _warned(est, X):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        warn_out_of_range(est, X)
    return [(w.category, str(w.message)) for w in got]


@pytest.mark.parametrize("n", [500, 2048, 6000])
def test_every_layout_judges_the_same_rows(n):
    """A feature far out on the sample's rows alone warns; the same feature far out on every
    other row does not (in a large batch): for C- and F-ordered, strided and sparse X alike,
    with the same text."""
    rng = np.random.default_rng(3)
    lower, upper = np.zeros(5), np.ones(5)
    est = SimpleNamespace(stats_=SimpleNamespace(lower=lower, upper=upper))
    sampled = run_rows(sample_runs(n))
    X = rng.uniform(0, 1, size=(n, 5))
    on_sample = X.copy()
    on_sample[sampled, 1] = 50.0
    off_sample = X.copy()
    others = np.setdiff1d(np.arange(n), sampled)  # none in a batch judged whole
    off_sample[(others if others.size else np.arange(n))[: n // 2], 3] = 50.0
    for Y, warns in ((on_sample, True), (off_sample, n < 2 * SAMPLE_ROWS)):
        seen = [
            _warned(est, Z)
            for Z in (Y, np.asfortranarray(Y), np.repeat(Y, 2, axis=1)[:, ::2], sp.csr_matrix(Y))
        ]
        assert all(s == seen[0] for s in seen)
        assert bool(seen[0]) == warns
        if warns:
            assert seen[0][0][0] is br.OutOfRangeWarning


def test_a_model_warns_from_the_sample_of_a_large_batch():
    """Through an estimator: rows in other units on the sample's rows are reported; units
    change everything in practice, so the sample sees them wherever they are."""
    rng = np.random.default_rng(0)
    X = rng.normal(loc=70.0, scale=8.0, size=(3000, 3))
    y = (X[:, 0] > 70).astype(int)
    Xt = rng.normal(loc=70.0, scale=8.0, size=(5000, 3))
    Xt[:, 2] /= 1000.0  # kilograms against grams
    for est in (
        br.GaussianNB(),
        br.LinearDiscriminantAnalysis(),
        br.QuadraticDiscriminantAnalysis(),
    ):
        est.fit(X, y)
        with pytest.warns(br.UnitsWarning, match="feature 2"):
            est.predict_proba(Xt)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            est.predict_proba(rng.normal(loc=70.0, scale=8.0, size=(5000, 3)))

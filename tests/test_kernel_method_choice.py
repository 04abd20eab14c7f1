"""The path, exact sums or the FFT grid, that a kernel density's ``method='auto'`` takes.

'auto' weighs what predicting costs on each path (``auto_method``): a model of
many values per feature takes the grid even with few features (the few kernel
columns MixedNB infers, which summed over every training value for every row
predicted, 250 times slower than the grid), a small one stays exact. The
choice is the model's, so a row's prediction does not depend on the rows
predicted with it.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

import bayesrule as br
from bayesrule.models import KernelDensity
from bayesrule.models.kernel import auto_method
from bayesrule.stats import ValueCountStats


def _kernel_methods(est):
    """The paths of a fitted MixedNB's kernel densities."""
    return [m.method for _, m in est._model.parts if isinstance(m, KernelDensity)]


def _audit():
    X, y = make_classification(2000, 12, random_state=0)
    rng = np.random.default_rng(1)
    T = X[rng.integers(0, 2000, 300)] + rng.normal(0.0, 0.1, (300, 12))
    return X, y, T


def _data(seed, n, p, K, shape):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    if shape == "normal":
        X = rng.normal(y[:, None], 1.0, (n, p))
    elif shape == "gamma":
        X = rng.gamma(2.0 + y[:, None], 1.5, (n, p))
    else:  # two modes of different widths
        narrow = rng.normal(-2.0, 0.3, (n, p))
        X = np.where(rng.random((n, p)) < 0.5, narrow, rng.normal(2.0 + y[:, None], 1.0, (n, p)))
    return X, y


@pytest.mark.parametrize(
    ("n_classes", "n_values", "n_features", "grid_size", "expected"),
    [
        (2, 2 * 2000, 2, 1024, "grid"),  # the audit: MixedNB's 2 kernel columns of 2000 values
        (2, 4 * 2000, 4, 1024, "grid"),  # ... 4 columns (this library's inference)
        (2, 12 * 2000, 12, 1024, "grid"),  # ... every column declared 'kernel'
        (2, 2 * 400, 2, 1024, "exact"),  # tests/test_mixed_oracle.py's largest table
        (4, 300, 1, 1024, "exact"),
        (1, 50, 1, 1024, "exact"),  # tests/test_naive_bayes_models.py's scipy reference
        (2, 3 * 512, 3, 1024, "exact"),  # grid_size / 2 values per feature: the boundary
        (2, 3 * 513, 3, 1024, "grid"),
        (10, 64 * 400, 64, 1024, "grid"),  # few values per feature, but a row costs 256000 terms
        (2, 4 * 2000, 4, 4096, "exact"),  # a finer grid costs more to build
        (3, 0, 0, 1024, "exact"),  # no features
    ],
)
def test_auto_method_weighs_the_cost_of_both_paths(
    n_classes, n_values, n_features, grid_size, expected
):
    assert auto_method(n_classes, n_values, n_features, grid_size) == expected


def test_the_audits_mixed_model_takes_the_grid():
    X, y, _ = _audit()
    assert _kernel_methods(br.MixedNB().fit(X, y)) == ["grid"]


def test_the_audits_model_with_every_column_kernel_takes_the_grid():
    X, y, _ = _audit()
    assert _kernel_methods(br.MixedNB(columns=["kernel"] * 12).fit(X, y)) == ["grid"]


#: (seed, rows, features, classes, shape): a model 'auto' takes the grid for, and exact
GRID = [(0, 600, 1, 2, "normal"), (1, 2000, 4, 2, "gamma"), (2, 1500, 3, 3, "two modes")]
EXACT = [(3, 400, 2, 2, "normal"), (4, 300, 1, 4, "gamma"), (5, 120, 3, 3, "two modes")]


@pytest.mark.parametrize(
    ("case", "path"), [(c, "grid") for c in GRID] + [(c, "exact") for c in EXACT]
)
def test_auto_gives_what_the_path_it_takes_gives(case, path):
    X, y = _data(*case)
    s = ValueCountStats.from_data(X, y)
    T = np.linspace(X.min(axis=0) - 1.0, X.max(axis=0) + 1.0, 101)
    auto = KernelDensity.from_stats(s)
    assert auto.method == path
    np.testing.assert_array_equal(
        auto.log_prob(T), KernelDensity.from_stats(s, method=path).log_prob(T)
    )


@pytest.mark.parametrize("case", GRID)
def test_the_grid_it_takes_is_within_the_documented_accuracy_of_the_exact_sums(case):
    """Relative error about 1e-4 of the log density in the data's range (the tests allow 1e-3)."""
    X, y = _data(*case)
    s = ValueCountStats.from_data(X, y)
    T = np.quantile(X, np.linspace(0.01, 0.99, 99), axis=0)
    exact = KernelDensity.from_stats(s, method="exact").log_prob(T)
    np.testing.assert_allclose(KernelDensity.from_stats(s).log_prob(T), exact, rtol=1e-3)


@pytest.mark.parametrize("block", [1, 7])
def test_rows_predicted_in_blocks_equal_rows_predicted_at_once(block):
    X, y, T = _audit()
    m = br.MixedNB().fit(X, y)
    T = T[:70]
    blocks = [m.predict_proba(T[s : s + block]) for s in range(0, T.shape[0], block)]
    np.testing.assert_allclose(np.vstack(blocks), m.predict_proba(T), rtol=0, atol=1e-12)


def test_inferred_kernel_columns_predict_as_the_same_columns_declared():
    X, y, T = _audit()
    inferred = br.MixedNB().fit(X, y)
    declared = br.MixedNB(columns=list(inferred.kinds_)).fit(X, y)
    np.testing.assert_allclose(
        inferred.predict_proba(T), declared.predict_proba(T), rtol=1e-12, atol=1e-15
    )


def test_bandwidth_cross_validation_keeps_the_exact_sums():
    """Leave-one-out on the grid picks other bandwidths on these heavy tails; 'auto' does not.

    The model (700 values, one feature) takes the grid; its cross-validation
    sums exactly, as 'auto' did before, so the bandwidths are those of
    ``method='exact'``.
    """
    rng = np.random.default_rng(0)
    y = np.arange(700) % 2
    X = rng.standard_t(3, (700, 1)) + y[:, None]
    exact = br.KernelNB(bandwidth="cv", method="exact").fit(X, y).bandwidth_
    on_grid = br.KernelNB(bandwidth="cv", method="grid").fit(X, y).bandwidth_
    assert not np.array_equal(on_grid, exact)  # else this data tells nothing
    auto = br.KernelNB(bandwidth="cv").fit(X, y)
    assert auto._model.kde.method == "grid"
    np.testing.assert_array_equal(auto.bandwidth_, exact)

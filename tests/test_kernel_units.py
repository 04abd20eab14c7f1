"""KernelNB and MixedNB's continuous columns do not depend on units; tiny bandwidths are refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_iris, load_wine

import bayesrule as br

pd = pytest.importorskip("pandas")


def _sets() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    n = 150
    y = rng.integers(0, 3, n)
    # clipped and rounded values: point masses at 0 and at a few grey levels
    synthetic = np.c_[
        np.maximum(rng.normal(y, 1.0), 0.0),
        np.round(rng.normal(2 * y, 1.5)),
        rng.exponential(1 + y),
    ]
    out = {"synthetic": (synthetic, y)}
    for name, load in (("iris", load_iris), ("wine", load_wine), ("cancer", load_breast_cancer)):
        X, t = load(return_X_y=True)
        out[name] = (X[:, :8], t)
    return out


SETS = _sets()


@pytest.mark.parametrize("name", sorted(SETS))
@pytest.mark.parametrize("method", ["exact", "grid"])
@settings(max_examples=4, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16))
def test_kernel_nb_predictions_do_not_depend_on_units(name, method, seed):
    X, y = SETS[name]
    scale = 10.0 ** np.random.default_rng(seed).uniform(-3, 3, X.shape[1])
    a = br.KernelNB(method=method).fit(X, y)
    b = br.KernelNB(method=method).fit(X * scale, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X * scale))
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X * scale), atol=1e-8)
    # the bandwidths, floors included, scale with the feature
    np.testing.assert_allclose(b.bandwidth_, a.bandwidth_ * scale, rtol=1e-9)


def _mixed_table(seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 200
    y = rng.integers(0, 3, n)
    df = pd.DataFrame(
        {
            "length": rng.normal(180 + 5 * y, 10),
            "mass": rng.lognormal(7 + 0.2 * y, 0.3),
            "width": rng.normal(1.5 - 0.1 * y, 0.2),
            "doors": rng.poisson(1 + y),
            "colour": np.array(["red", "blue", "grey"], dtype=object)[
                (y + rng.integers(0, 2, n)) % 3
            ],
            "flat": np.full(n, 3.0),  # constant: no say in any unit
        }
    )
    return df, y


@pytest.mark.parametrize("kind", ["gaussian", "kernel"])
@settings(max_examples=6, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16))
def test_mixed_nb_continuous_columns_do_not_depend_on_units(kind, seed):
    df, y = _mixed_table(seed % 7)
    rng = np.random.default_rng(seed)
    continuous = ["length", "mass", "width", "flat"]
    scaled = df.copy()
    for c in continuous:
        scaled[c] = df[c] * 10.0 ** rng.uniform(-3, 3)
    columns = dict.fromkeys(continuous, kind)
    a = br.MixedNB(columns=columns).fit(df, y)
    b = br.MixedNB(columns=columns).fit(scaled, y)
    np.testing.assert_array_equal(a.predict(df), b.predict(scaled))
    np.testing.assert_allclose(a.predict_proba(df), b.predict_proba(scaled), atol=1e-8)


def test_mixed_nb_gaussian_smoothing_is_per_column_unlike_gaussian_nb():
    # a column in milligrams inflates GaussianNB's (scikit-learn's) epsilon for the others
    rng = np.random.default_rng(1)
    n = 300
    y = rng.integers(0, 2, n)
    X = np.c_[rng.normal(y * 1e-4, 1e-4), rng.normal(3000 + 500 * y, 800) * 1e6]
    mixed = br.MixedNB(columns=["gaussian", "gaussian"]).fit(X, y)
    per_column = np.c_[X[:, 0] * 1e3, X[:, 1] * 1e-9]
    again = br.MixedNB(columns=["gaussian", "gaussian"]).fit(per_column, y)
    np.testing.assert_allclose(mixed.predict_proba(X), again.predict_proba(per_column), atol=1e-9)
    gnb = br.GaussianNB().fit(X, y)
    assert np.mean(gnb.predict(X) != mixed.predict(X)) > 0.05  # GaussianNB keeps sklearn's rule


@pytest.mark.parametrize("bandwidth", [1e-300, 1e-200, np.array([1.0, 1e-290])])
@pytest.mark.parametrize("method", ["exact", "grid"])
def test_kernel_nb_refuses_a_bandwidth_whose_densities_underflow(bandwidth, method):
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(80, 2)), rng.integers(0, 2, 80)
    with pytest.raises(ValueError, match=r"bandwidth=.*feature \d .*underflow"):
        br.KernelNB(bandwidth=bandwidth, method=method).fit(X, y)


def test_mixed_nb_kernel_column_refuses_a_bandwidth_whose_densities_underflow():
    df, y = _mixed_table(3)
    with pytest.raises(ValueError, match=r"bandwidth=1e-300 .*feature 'mass'.*underflow"):
        br.MixedNB(columns={"mass": "kernel"}, bandwidth=1e-300).fit(df, y)


@pytest.mark.parametrize("bandwidth", [1e-120, 1e-6])
def test_small_but_representable_bandwidths_give_finite_probabilities(bandwidth):
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(80, 2)), rng.integers(0, 2, 80)
    m = br.KernelNB(bandwidth=bandwidth).fit(X, y)
    P = m.predict_proba(X + 0.01)
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


@pytest.mark.parametrize("bandwidth", ["silverman", "cv"])
@pytest.mark.parametrize("name", ["synthetic", "wine"])
def test_kernel_nb_bandwidth_rules_do_not_depend_on_units(bandwidth, name):
    X, y = SETS[name]
    scale = 10.0 ** np.random.default_rng(5).uniform(-3, 3, X.shape[1])
    a = br.KernelNB(bandwidth=bandwidth).fit(X, y)
    b = br.KernelNB(bandwidth=bandwidth).fit(X * scale, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X * scale))
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X * scale), atol=1e-8)

"""MixedNB equals the sum of the single-kind naive Bayes models fitted on its columns of each kind.

The columns are independent given the class, so the joint log likelihood of
MixedNB is the sum of the per-kind models' joint log likelihoods, less the
log prior counted once per extra model. The single-kind models are
bayesrule's GaussianNB, CategoricalNB, PoissonNB, BernoulliNB and KernelNB
(without point masses, alpha=0: the plain kernel density) and, where they
coincide, scikit-learn's GaussianNB, CategoricalNB and BernoulliNB.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn import naive_bayes as sk

import bayesrule as br

pd = pytest.importorskip("pandas")

WORDS = np.array(["ash", "birch", "cedar", "elm", "fir"], dtype=object)


def _table(
    seed: int, n: int, n_classes: int, n_gaussian: int
) -> tuple[pd.DataFrame, np.ndarray, dict]:
    """A table with columns of each kind and class signal in each; every category seen."""
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % n_classes)
    cols: dict[str, object] = {}
    kinds: dict[str, str] = {}
    for j in range(n_gaussian):
        cols[f"g{j}"] = rng.normal(
            rng.uniform(-5, 5) + y * rng.uniform(0.2, 2), rng.uniform(0.5, 3)
        )
        kinds[f"g{j}"] = "gaussian"
    for j in range(2):
        cols[f"c{j}"] = WORDS[(y + rng.integers(0, 3, n)) % 5]
        kinds[f"c{j}"] = "categorical"
    for j in range(2):
        cols[f"p{j}"] = rng.poisson(rng.uniform(0.5, 2) * (1 + y))
        kinds[f"p{j}"] = "poisson"
    for j in range(2):
        cols[f"b{j}"] = (rng.random(n) < rng.uniform(0.1, 0.4) + 0.15 * y).astype(np.int64)
        kinds[f"b{j}"] = "bernoulli"
    for j in range(2):
        cols[f"k{j}"] = rng.gamma(2 + y, rng.uniform(0.5, 4))
        kinds[f"k{j}"] = "kernel"
    return pd.DataFrame(cols), y, kinds


def _codes(df: pd.DataFrame, names: list[str]) -> np.ndarray:
    return np.column_stack(
        [np.unique(df[c].to_numpy(dtype=str), return_inverse=True)[1] for c in names]
    )


def _parts(df: pd.DataFrame, kinds: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for c, k in kinds.items():
        out.setdefault(k, []).append(c)
    return out


CASES = [(0, 200, 2, 1), (1, 150, 3, 1), (2, 300, 4, 1), (3, 120, 3, 3), (4, 400, 2, 2)]


@pytest.mark.parametrize(("seed", "n", "n_classes", "n_gaussian"), CASES)
def test_joint_log_likelihood_is_the_sum_of_the_single_kind_models(seed, n, n_classes, n_gaussian):
    df, y, kinds = _table(seed, n, n_classes, n_gaussian)
    # GaussianNB's smoothing is relative to its widest feature, MixedNB's to each column:
    # they agree for one gaussian column, and without smoothing for several
    vs = 1e-9 if n_gaussian == 1 else 0.0
    mixed = br.MixedNB(columns=kinds, var_smoothing=vs).fit(df, y)
    part = _parts(df, kinds)
    test = df.sample(frac=1.0, random_state=seed).iloc[: n // 2]
    models = [
        (br.GaussianNB(var_smoothing=vs), part["gaussian"], df.__getitem__),
        (br.CategoricalNB(), part["categorical"], lambda c: _codes(df, c)),
        (br.PoissonNB(), part["poisson"], df.__getitem__),
        (br.BernoulliNB(), part["bernoulli"], df.__getitem__),
        (
            br.KernelNB(point_mass=2.0, alpha=0.0, method="exact"),
            part["kernel"],
            df.__getitem__,
        ),
    ]
    total = 0.0
    for model, names, data in models:
        X = np.asarray(data(names), dtype=float)
        model.fit(X, y)
        Xt = X[df.index.get_indexer(test.index)]
        total = total + model.predict_joint_log_proba(Xt)
    log_prior = np.log(mixed.priors_)
    expected = total - (len(models) - 1) * log_prior
    jll = mixed.predict_joint_log_proba(test)
    np.testing.assert_allclose(jll, expected, rtol=1e-10)
    np.testing.assert_allclose(
        mixed.predict_log_proba(test),
        expected - logsumexp(expected, axis=1, keepdims=True),
        rtol=1e-10,
        atol=1e-10,
    )


@pytest.mark.parametrize(("seed", "n", "n_classes"), [(5, 200, 2), (6, 250, 3), (7, 180, 4)])
def test_joint_log_likelihood_equals_scikit_learns_models_where_they_coincide(seed, n, n_classes):
    df, y, kinds = _table(seed, n, n_classes, 1)
    kinds = {c: k for c, k in kinds.items() if k in ("gaussian", "categorical", "bernoulli")}
    df = df[list(kinds)]
    mixed = br.MixedNB(columns=kinds).fit(df, y)
    part = _parts(df, kinds)
    total = 0.0
    for model, X in (
        (sk.GaussianNB(), df[part["gaussian"]].to_numpy(dtype=float)),
        (sk.CategoricalNB(), _codes(df, part["categorical"])),
        (sk.BernoulliNB(), df[part["bernoulli"]].to_numpy(dtype=float)),
    ):
        total = total + model.fit(X, y).predict_joint_log_proba(X)
    expected = total - 2 * np.log(mixed.priors_)
    np.testing.assert_allclose(mixed.predict_joint_log_proba(df), expected, rtol=1e-10)
    np.testing.assert_array_equal(mixed.predict(df), mixed.classes_[np.argmax(expected, axis=1)])

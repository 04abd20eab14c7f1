"""MixtureDiscriminantAnalysis(covariance_type='auto'): one pooled covariance or one per component.

Where classes have fewer rows than dimensions, a covariance per component is
mostly ridge and LDA's pooled covariance classifies better (issue #19: MDA at
least LDA - 1.5 points on small tables, also with p > n a class). 'auto'
chooses between 'full' and 'shared' by the held-out errors of the folds that
choose the ridge; these tests hold it to that rule, to the units, and to the
model file.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.datasets import make_classification, make_gaussian_quantiles
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold, cross_val_predict

import bayesrule
from bayesrule import LinearDiscriminantAnalysis as LDA
from bayesrule import MixtureDiscriminantAnalysis as MDA
from bayesrule.estimators._mda_select import REG_GRID, Choice, _fold_densities


def wide(seed: int, n: int = 120, p: int = 60, k: int = 4):
    """p > n a class: ``k`` classes of ``n / k`` rows in ``p`` features, 10 informative."""
    return make_classification(
        n, p, n_informative=10, n_redundant=0, n_classes=k, n_clusters_per_class=1,
        class_sep=1.5, random_state=seed,
    )  # fmt: skip


def accuracy(est, X, y, seed=0):
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return float(np.mean(cross_val_predict(est, X, y, cv=cv) == y))


@pytest.mark.parametrize("seed", [7, 11, 23])
def test_classes_with_fewer_rows_than_dimensions_share_a_covariance(seed):
    X, y = wide(seed)
    m = MDA().fit(X, y)
    assert m.covariance_type_ == "shared"
    # a covariance the ridge makes: the heaviest ridge, so densities stay sensible
    assert m.reg_covar_ == REG_GRID[-1]
    assert accuracy(MDA(), X, y) >= accuracy(LDA(), X, y) - 0.015


@pytest.mark.parametrize("seed", [2, 3])
def test_classes_that_differ_in_spread_keep_their_own_covariances(seed):
    # nested classes (the same centre, growing radii): only class covariances separate them
    X, y = make_gaussian_quantiles(n_samples=400, n_features=5, n_classes=3, random_state=seed)
    m = MDA().fit(X, y)
    assert m.covariance_type_ == "full"
    assert accuracy(MDA(), X, y) > accuracy(LDA(), X, y) + 0.3


def test_the_choice_does_not_depend_on_units():
    X, y = wide(7)
    scales = 10.0 ** np.random.default_rng(0).uniform(-3, 3, X.shape[1])
    a, b = MDA().fit(X, y), MDA().fit(X * scales, y)
    assert a.covariance_type_ == b.covariance_type_ == "shared"
    assert a.reg_covar_ == b.reg_covar_
    np.testing.assert_array_equal(a.predict(X), b.predict(X * scales))
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X * scales), atol=1e-8)


def test_an_explicit_structure_is_kept():
    X, y = wide(7)
    assert MDA(covariance_type="full").fit(X, y).covariance_type_ == "full"
    X, y = make_gaussian_quantiles(n_samples=300, n_features=4, n_classes=3, random_state=1)
    assert MDA(covariance_type="shared").fit(X, y).covariance_type_ == "shared"
    assert MDA(covariance_type="diag").fit(X, y).covariance_type_ == "diag"


def test_auto_is_shared_with_a_dimension_and_full_with_bic():
    X, y = make_gaussian_quantiles(n_samples=300, n_features=4, n_classes=3, random_state=1)
    reduced = MDA(n_components=2, dimension=1).fit(X, y)
    assert reduced.covariance_type_ == "shared"
    ref = MDA(n_components=2, dimension=1, covariance_type="shared").fit(X, y)
    np.testing.assert_array_equal(reduced.predict_proba(X), ref.predict_proba(X))
    X, y = wide(7)
    assert MDA(n_components="bic", max_components=2).fit(X, y).covariance_type_ == "full"


def test_a_fixed_ridge_still_chooses_the_structure():
    X, y = wide(7)
    m = MDA(reg_covar=0.2).fit(X, y)
    assert (m.covariance_type_, m.reg_covar_) == ("shared", 0.2)


def test_large_data_keep_full_covariances(mnist_like=None):
    # more rows a class than the sample holds (2048): the folds are a subsample,
    # and the structure stays 'full', as the ridge stays at its default
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4400, 3)) * np.array([1.0, 2.0, 0.5])
    y = np.repeat([0, 1], 2200)
    X[y == 1] *= 1.5
    m = MDA(max_components=2).fit(X, y)
    assert m.covariance_type_ == "full" and m.reg_covar_ == 0.1


def test_the_fitted_model_is_the_explicit_one():
    X, y = wide(7)
    auto = MDA().fit(X, y)
    same = MDA(covariance_type="shared", reg_covar=auto.reg_covar_).fit(X, y)
    np.testing.assert_array_equal(auto.n_components_, same.n_components_)
    np.testing.assert_allclose(auto.predict_proba(X), same.predict_proba(X), rtol=0, atol=1e-12)
    np.testing.assert_allclose(auto.score_samples(X), same.score_samples(X), rtol=1e-12)


def test_model_file_keeps_the_choice_and_an_older_file_means_full(tmp_path):
    X, y = wide(7)
    m = MDA().fit(X, y)
    path = tmp_path / "mda.bayesrule"
    bayesrule.save(m, path)
    back = bayesrule.load(path)
    assert back.covariance_type_ == "shared"
    np.testing.assert_array_equal(back.predict_proba(X), m.predict_proba(X))
    # statistics written before the choice was recorded (shared = -1): full covariances
    old = dataclasses.replace(m.stats_, shared=np.array([-1]))
    built = MDA.from_stats(old, **m.get_params())
    full = MDA.from_stats(dataclasses.replace(m.stats_, shared=np.array([0])), **m.get_params())
    assert built.covariance_type_ == full.covariance_type_ == "full"
    np.testing.assert_array_equal(built.predict_proba(X), full.predict_proba(X))


def test_dask_and_memory_make_the_same_choice():
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    X, y = wide(7)
    a = MDA().fit(X, y)
    with dask.config.set(scheduler="sync"):
        b = MDA().fit(da.from_array(X, chunks=(37, -1)), da.from_array(y, chunks=37))
    assert a.covariance_type_ == b.covariance_type_ == "shared"
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=0, atol=1e-8)


# ------------------------------------------------------------------ the held-out densities
def _moments(Z, R):
    """(W, means, scatter) of components with responsibilities R (rows x components)."""
    W = R.sum(axis=0)
    means = (R.T @ Z) / W[:, None]
    scatter = np.stack(
        [(R[:, c, None] * (Z - means[c])).T @ (Z - means[c]) for c in range(R.shape[1])]
    )
    return W, means, scatter


@pytest.mark.parametrize("reg", [0.0, 0.1])
def test_shared_fold_densities_are_gaussians_of_the_pooled_covariance(reg):
    rng = np.random.default_rng(3)
    parts, data = [], []
    for k, C in enumerate([1, 2, 1]):
        Z = rng.normal(size=(40, 3)) * (k + 1) + 3 * k
        R = np.zeros((40, C))
        R[np.arange(40), np.arange(40) % C] = 1.0
        parts.append(_moments(Z, R))
        data.append(Z)
    choices = [Choice(int(m[0].size), {}, (), (m,)) for m in parts]
    B = rng.normal(size=(7, 3)) * 3
    got = _fold_densities(choices, 0, "shared", reg, 1)(B)
    W = np.concatenate([m[0] for m in parts])
    pooled = sum(m[2].sum(axis=0) for m in parts) / W.sum()
    pooled = pooled + reg * np.trace(pooled) / 3 * np.eye(3)
    for k, (Wk, means, _) in enumerate(parts):
        dens = sum(
            Wk[c] / Wk.sum() * multivariate_normal(means[c], pooled).pdf(B) for c in range(Wk.size)
        )
        np.testing.assert_allclose(got[:, k], np.log(dens), rtol=1e-10)
    # a class without folds has no density
    choices[1] = Choice(1, {})
    got = _fold_densities(choices, 0, "shared", reg, 1)(B)
    assert np.all(got[:, 1] == -np.inf) and np.all(np.isfinite(got[:, [0, 2]]))


def test_a_stray_row_of_its_own_label_does_not_force_the_heaviest_ridge():
    X, y = make_classification(
        600, 10, n_informative=6, n_classes=3, n_clusters_per_class=2, random_state=0
    )
    base = MDA().fit(X, y)
    stray = X[:1] + np.random.default_rng(0).normal(size=(1, 10)) * X.std(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the one-row class is named
        m = MDA().fit(np.vstack([X, stray]), np.r_[y, 3])
    assert (m.covariance_type_, m.reg_covar_) == (base.covariance_type_, base.reg_covar_)


def _classes(sizes, p, seed):
    rng = np.random.default_rng(seed)
    means = np.random.default_rng(123).normal(size=(len(sizes), p)) * 0.5
    X = np.vstack([rng.normal(size=(n, p)) + means[k] for k, n in enumerate(sizes)])
    return X, np.repeat(np.arange(len(sizes)), sizes)


def test_one_class_beyond_the_sample_does_not_leave_narrow_classes_a_covariance_each():
    # three classes of 40 rows in 60 dimensions and one of 2,100: the large
    # class is subsampled, the narrow ones still choose (full covariances of
    # their own put them at chance, 0.25)
    X, y = _classes([2100, 40, 40, 40], 60, 0)
    m = MDA(priors=[0.25] * 4).fit(X, y)
    assert m.covariance_type_ == "shared"
    Xt, yt = _classes([500] * 4, 60, 99)
    assert np.mean(m.predict(Xt) == yt) > 0.9
    P = m.predict_proba(Xt)
    assert np.all(np.isfinite(P)) and np.allclose(P.sum(axis=1), 1.0)


@pytest.mark.parametrize("value", [2, 7, -2])
def test_the_recorded_structure_is_one_of_three_values(value):
    from bayesrule.stats import StatisticsError

    X, y = wide(7)
    stats = MDA().fit(X, y).stats_
    with pytest.raises(StatisticsError, match="shared must be 1"):
        dataclasses.replace(stats, shared=np.array([value]))


@pytest.mark.parametrize("relabel", ["reversed", "strings"])
def test_relabelling_the_classes_changes_no_choice_and_no_probability(relabel):
    # each class's k-means++ draws follow its rows (their least sampled key), not its label
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = X[::2]
    y = np.where(np.arange(X.shape[0]) % 3 == 0, 2, y[::2])  # three classes
    a = MDA().fit(X, y)
    if relabel == "reversed":
        b = MDA().fit(X, y.max() - y)
        Pb = b.predict_proba(X)[:, ::-1]
        nb = b.n_components_[::-1]
    else:
        names = np.array(["zeta", "alpha", "mu"])  # sorted: alpha, mu, zeta
        b = MDA().fit(X, names[y])
        order = [int(np.flatnonzero(b.classes_ == n)[0]) for n in names]
        Pb = b.predict_proba(X)[:, order]
        nb = b.n_components_[order]
    assert (a.covariance_type_, a.reg_covar_) == (b.covariance_type_, b.reg_covar_)
    np.testing.assert_array_equal(a.n_components_, nb)
    np.testing.assert_allclose(a.predict_proba(X), Pb, rtol=0, atol=1e-10)


def test_the_command_line_info_shows_the_choices(tmp_path):
    import json
    import os
    import subprocess
    import sys

    import pandas as pd

    X, y = wide(7)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).assign(label=y)
    csv = tmp_path / "wide.csv"
    frame.to_csv(csv, index=False)
    model = tmp_path / "mda.bayesrule"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}

    def cli(*args):
        cmd = [sys.executable, "-m", "bayesrule.cli", *map(str, args)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    cli("fit", csv, "--target", "label", "--model", "mda", "-o", model)
    info = json.loads(cli("info", model, "--json"))
    direct = MDA().fit(frame.drop(columns="label"), y)
    assert info["chosen"] == {
        "n_components_": direct.n_components_.tolist(),
        "reg_covar_": direct.reg_covar_,
        "covariance_type_": "shared",
    }
    assert 'covariance_type_="shared"' in cli("info", model)


def test_the_choice_is_of_the_class_densities_which_priors_only_shift(monkeypatch):
    # the held-out errors weigh the classes by their weights, whatever ``priors`` says:
    # given priors shift the joint log likelihood and change nothing else
    import bayesrule.estimators._mda_select as select

    seen = []
    real = select.choose_reg_covar

    def spy(choices, log_priors, *args, **kwargs):
        seen.append(np.asarray(log_priors))
        return real(choices, log_priors, *args, **kwargs)

    monkeypatch.setattr(select, "choose_reg_covar", spy)
    X, y = wide(7)
    priors = np.array([0.1, 0.2, 0.3, 0.4])
    a = MDA().fit(X, y)
    b = MDA(priors=priors).fit(X, y)
    np.testing.assert_allclose(seen[0], seen[1])
    np.testing.assert_allclose(seen[1], np.log(np.bincount(y) / y.size))
    assert (a.covariance_type_, a.reg_covar_) == (b.covariance_type_, b.reg_covar_)
    diff = b.predict_joint_log_proba(X) - a.predict_joint_log_proba(X)
    np.testing.assert_allclose(
        diff, np.tile(np.log(priors) - np.log(a.priors_), (len(X), 1)), atol=1e-9
    )


@pytest.mark.parametrize(
    "full_errors, shared_errors, expected",
    [
        (10, 12, "shared"),  # 2 fewer errors: within sqrt(12) = 3.5, the simpler model
        (8, 12, "full"),  # 4 fewer: beyond it
        (0, 1, "shared"),  # 1 fewer: within sqrt(1)
        (0, 4, "full"),  # 4 fewer: beyond sqrt(4) = 2
        (12, 10, "shared"),
    ],
)
def test_full_covariances_must_beat_the_pooled_one_beyond_its_standard_error(
    full_errors, shared_errors, expected
):
    from bayesrule.estimators._mda_select import structure_of

    losses = {
        ("full", 0.03): (float(full_errors) + 3, 1.0),
        ("full", 0.1): (float(full_errors), 5.0),
        ("shared", 0.1): (float(shared_errors), 6.0),
        ("shared", 0.3): (float(shared_errors) + 1, 2.0),
    }
    assert structure_of(losses, ("full", "shared")) == expected
    # a single structure is that structure; without 'shared', the fewest errors
    assert structure_of(losses, ("full",)) == "full"
    assert (
        structure_of({("full", 0.1): (3.0, 1.0), ("diag", 0.1): (2.0, 1.0)}, ("full", "diag"))
        == "diag"
    )

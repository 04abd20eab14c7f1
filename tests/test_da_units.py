"""RDA and RDA-CV defaults do not depend on the features' units (issue #19).

gamma and ridge shrink towards targets that are scaled identities in the
coordinates ``x_j / s_j``: ``s_j`` is the feature's pooled within-class
standard deviation by default for RDA (``target='pooled'``, exact under
forget) and its training range for RDA-CV (``target='range'``), so
rescaling each feature by its own factor changes no prediction. ``target='identity'``,
Friedman's scaled identity in the features' own units, is kept as an option.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.model_selection import StratifiedKFold

from bayesrule import (
    QuadraticDiscriminantAnalysis,
    RegularizedDiscriminantAnalysis,
    RegularizedDiscriminantAnalysisCV,
)
from bayesrule.models._covariances import pooled_scale
from bayesrule.models.gaussian import range_scale
from bayesrule.stats import ScatterStats

LOADERS = {
    "iris": load_iris,
    "wine": load_wine,
    "breast_cancer": load_breast_cancer,
    "digits": load_digits,
}
SETTINGS = [
    dict(alpha=1.0, gamma=0.1),
    dict(alpha=0.5, gamma=0.3, ridge=0.05),
    dict(alpha=1.0, ridge=0.2),
    dict(alpha=0.0, gamma=0.05),
    dict(alpha=0.7, gamma=0.0, ridge=0.7),
]


def _data(name):
    X, y = LOADERS[name](return_X_y=True)
    return X.astype(float), y


def _scales(p, seed):
    return 10.0 ** np.random.default_rng(seed).uniform(-3, 3, p)


def _assert_same(a, b, Xa, Xb):
    np.testing.assert_array_equal(a.predict(Xa), b.predict(Xb))
    np.testing.assert_allclose(a.predict_proba(Xa), b.predict_proba(Xb), rtol=0, atol=1e-7)


@pytest.mark.parametrize("name", list(LOADERS))
@pytest.mark.parametrize("setting", SETTINGS, ids=str)
@pytest.mark.parametrize("target", [None, "range"])
def test_rda_predictions_do_not_depend_on_per_feature_units(name, setting, target):
    X, y = _data(name)
    kw = {} if target is None else {"target": target}
    for seed in (0, 1):
        s = _scales(X.shape[1], seed)
        a = RegularizedDiscriminantAnalysis(**kw, **setting).fit(X, y)
        b = RegularizedDiscriminantAnalysis(**kw, **setting).fit(X * s, y)
        _assert_same(a, b, X, X * s)


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer"])
def test_rdacv_default_does_not_depend_on_per_feature_units(name):
    X, y = _data(name)
    s = _scales(X.shape[1], 3)
    a = RegularizedDiscriminantAnalysisCV(target="range", cv=3).fit(X, y)
    b = RegularizedDiscriminantAnalysisCV(target="range", cv=3).fit(X * s, y)
    assert (a.alpha_, a.gamma_, a.ridge_) == (b.alpha_, b.gamma_, b.ridge_)
    np.testing.assert_allclose(a.cv_scores_, b.cv_scores_, rtol=0, atol=1e-12)
    _assert_same(a, b, X, X * s)


def test_rdacv_on_digits_does_not_depend_on_per_feature_units():
    # a pixel that is 0 in every row of a training split has no unit to scale
    # by (range 1 there), and a held-out row where it is not 0 then depends on
    # its unit: such pixels (present only in a few rows) are left out
    X, y = _data("digits")
    folds = StratifiedKFold(3, shuffle=True, random_state=0).split(X, y)
    keep = np.all([np.ptp(X[train], axis=0) > 0 for train, _ in folds], axis=0)
    X = X[:, keep]
    s = _scales(X.shape[1], 4)
    kw = dict(alphas=(0.5, 1.0), gammas=(0.0, 0.1), ridges=(0.0, 0.3), cv=3, refine=False)
    a = RegularizedDiscriminantAnalysisCV(target="range", **kw).fit(X, y)
    b = RegularizedDiscriminantAnalysisCV(target="range", **kw).fit(X * s, y)
    assert (a.alpha_, a.gamma_, a.ridge_) == (b.alpha_, b.gamma_, b.ridge_)
    np.testing.assert_allclose(a.cv_scores_, b.cv_scores_, rtol=0, atol=1e-12)
    _assert_same(a, b, X, X * s)


def test_rdacv_scores_with_reg_param_follow_the_training_range():
    # reg_param stays in the features' units, so units matter through it only;
    # with it the held-out scores are still those of plain RDA fits
    X, y = _data("iris")
    s = _scales(X.shape[1], 5)
    Xs = X * s
    kw = dict(alphas=(1.0,), gammas=(0.2,), ridges=(0.1,), cv=3, refine=False, random_state=0)
    m = RegularizedDiscriminantAnalysisCV(target="range", reg_param=0.01, **kw).fit(Xs, y)
    accs = []
    for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(Xs, y):
        rda = RegularizedDiscriminantAnalysis(
            target="range", alpha=1.0, gamma=0.2, ridge=0.1, reg_param=0.01
        )
        rda.fit(Xs[train], y[train])
        accs.append((rda.predict(Xs[test]) == y[test]).mean())
    assert m.cv_scores_[0] == pytest.approx(np.mean(accs), abs=1e-12)


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_scale_free_settings_equal_qda(name):
    X, y = _data(name)
    s = _scales(X.shape[1], 6)
    ours = RegularizedDiscriminantAnalysis(target="range", alpha=1.0, gamma=0.0, ridge=0.0).fit(
        X * s, y
    )
    ref = QuadraticDiscriminantAnalysis().fit(X * s, y)
    np.testing.assert_array_equal(ours.predict(X * s), ref.predict(X * s))
    np.testing.assert_allclose(ours.predict_proba(X * s), ref.predict_proba(X * s), atol=1e-12)
    # and RDA-CV's plain-QDA candidate scores what QDA's own folds score
    kw = dict(alphas=(1.0,), gammas=(0.0,), ridges=(0.0,), cv=3, refine=False, random_state=0)
    m = RegularizedDiscriminantAnalysisCV(target="range", **kw).fit(X * s, y)
    np.testing.assert_allclose(m.predict_proba(X * s), ref.predict_proba(X * s), atol=1e-12)


def test_targets_are_the_range_scaled_identity():
    # gamma's target (tr(D^-1 S D^-1)/p) D^2, the ridge's t_z D^2 (D = diag(range))
    X, y = _data("wine")
    g, rho = 0.3, 0.2
    m = RegularizedDiscriminantAnalysis(
        target="range", alpha=1.0, gamma=g, ridge=rho, store_covariance=True
    )
    m.fit(X, y)
    r = np.ptp(X, axis=0)
    Z = X / r
    p = X.shape[1]
    pooled_var = np.mean(
        np.concatenate([(Z[y == k] - Z[y == k].mean(0)) ** 2 for k in range(3)]).sum(0)
        / (len(y) - 3)
    )
    for k in range(3):
        Sk = np.cov(Z[y == k], rowvar=False)
        Sz = (1 - g) * Sk + g * np.trace(Sk) / p * np.eye(p)
        Sz = (1 - rho) * Sz + rho * pooled_var * np.eye(p)
        np.testing.assert_allclose(m.covariance_[k], Sz * np.outer(r, r), rtol=1e-10)


def test_merged_statistics_give_the_model_of_one_fit():
    # the range comes from the merged bounds: partial_fit and from_stats agree with fit
    X, y = _data("wine")
    s = _scales(X.shape[1], 7)
    Xs = X * s
    whole = RegularizedDiscriminantAnalysis(target="range", alpha=0.5, gamma=0.2, ridge=0.1).fit(
        Xs, y
    )
    part = RegularizedDiscriminantAnalysis(target="range", alpha=0.5, gamma=0.2, ridge=0.1)
    order = np.random.default_rng(0).permutation(len(y))
    for idx in np.array_split(order, 4):
        part.partial_fit(Xs[idx], y[idx], classes=np.unique(y))
    np.testing.assert_allclose(part.predict_proba(Xs), whole.predict_proba(Xs), atol=1e-10)
    stats = ScatterStats.from_data(Xs[order[:90]], y[order[:90]]).merge(
        ScatterStats.from_data(Xs[order[90:]], y[order[90:]])
    )
    np.testing.assert_allclose(range_scale(stats), np.ptp(Xs, axis=0) / np.ptp(Xs, axis=0).max())
    derived = RegularizedDiscriminantAnalysis.from_stats(
        stats, target="range", alpha=0.5, gamma=0.2, ridge=0.1
    )
    np.testing.assert_allclose(derived.predict_proba(Xs), whole.predict_proba(Xs), atol=1e-10)


def test_range_scale_of_constant_and_unknown_features():
    # range 0: the constant's magnitude (-5 -> 5), 1 for a constant 0 or unknown bounds;
    # relative to the largest unit
    X = np.array(
        [[1.0, -5.0, 0.0, 0.0], [3.0, -5.0, 2.0, 0.0], [2.0, -5.0, 4.0, 0.0], [0.0, -5.0, 1.0, 0.0]]
    )
    y = np.array([0, 0, 1, 1])
    stats = ScatterStats.from_data(X, y)
    np.testing.assert_allclose(range_scale(stats), [0.6, 1.0, 0.8, 1.0])
    unknown = stats.with_bounds(np.full(4, np.nan), np.full(4, np.nan))
    np.testing.assert_array_equal(range_scale(unknown), np.ones(4))
    empty = ScatterStats.empty([0, 1], 4)
    np.testing.assert_array_equal(range_scale(empty), np.ones(4))


def test_forget_is_refused_with_the_range_target_and_exact_with_the_default():
    X, y = _data("wine")
    ranged = RegularizedDiscriminantAnalysis(target="range", gamma=0.1).fit(X, y)
    with pytest.raises(ValueError, match="target='range'"):
        ranged.forget(X[:5], y[:5])
    with pytest.raises(ValueError, match="target='range'"):
        RegularizedDiscriminantAnalysis(target="range", ridge=0.1).fit(X, y).forget(X[:5], y[:5])
    # the defaults (the pooled target) forget exactly, with or without gamma and ridge
    for kw in ({}, {"gamma": 0.1, "ridge": 0.2}, {"gamma": 0.1, "target": "identity"}):
        default = RegularizedDiscriminantAnalysis(**kw).fit(X, y).forget(X[:5], y[:5])
        refit = RegularizedDiscriminantAnalysis(**kw).fit(X[5:], y[5:])
        np.testing.assert_allclose(default.predict_proba(X), refit.predict_proba(X), atol=1e-10)


def test_the_identity_target_depends_on_units_and_the_range_target_does_not():
    X, y = _data("digits")
    keep = np.ptp(X, axis=0) > 0
    X = X[:, keep]
    s = _scales(X.shape[1], 3)
    changed = {}
    for target in ("identity", "range", "pooled"):
        a = RegularizedDiscriminantAnalysis(target=target, alpha=0.5, gamma=0.1).fit(X, y)
        b = RegularizedDiscriminantAnalysis(target=target, alpha=0.5, gamma=0.1).fit(X * s, y)
        changed[target] = float(np.mean(a.predict(X) != b.predict(X * s)))
    assert changed["range"] == 0.0
    assert changed["pooled"] == 0.0
    assert changed["identity"] > 0.0


# ------------------------------------------------------- generated data, any units
def _generated(seed: int, n: int = 40, p: int = 5, K: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Classes with their own correlated covariances and means, ``n`` rows each."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n)
    X = np.empty((n * K, p))
    for k in range(K):
        A = rng.normal(size=(p, p)) * rng.uniform(0.3, 2.0, p)
        X[y == k] = rng.normal(size=(n, p)) @ A.T + rng.normal(0, 2, p)
    return X, y


_SCALES = st.lists(st.floats(-3.0, 3.0), min_size=5, max_size=5).map(
    lambda e: 10.0 ** np.asarray(e)
)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**16),
    scales=_SCALES,
    setting=st.sampled_from([{}, *SETTINGS]),
    target=st.sampled_from([{}, {"target": "range"}]),
)
def test_rda_defaults_are_free_of_each_features_unit(seed, scales, setting, target):
    # the default target (pooled) and the range, with the default and other
    # (alpha, gamma, ridge)
    setting = {**setting, **target}
    X, y = _generated(seed)
    a = RegularizedDiscriminantAnalysis(**setting).fit(X, y)
    b = RegularizedDiscriminantAnalysis(**setting).fit(X * scales, y)
    _assert_same(a, b, X, X * scales)
    # and the covariances follow the units exactly: D Sigma D
    np.testing.assert_allclose(
        RegularizedDiscriminantAnalysis(store_covariance=True, **setting)
        .fit(X * scales, y)
        .covariance_,
        RegularizedDiscriminantAnalysis(store_covariance=True, **setting).fit(X, y).covariance_
        * np.outer(scales, scales),
        rtol=1e-9,
    )


@settings(max_examples=12, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16), scales=_SCALES)
def test_rdacv_defaults_are_free_of_each_features_unit(seed, scales):
    X, y = _generated(seed, n=25)
    a = RegularizedDiscriminantAnalysisCV(cv=3).fit(X, y)
    b = RegularizedDiscriminantAnalysisCV(cv=3).fit(X * scales, y)
    assert (a.alpha_, a.gamma_, a.ridge_) == (b.alpha_, b.gamma_, b.ridge_)
    np.testing.assert_allclose(a.cv_scores_, b.cv_scores_, rtol=0, atol=1e-12)
    _assert_same(a, b, X, X * scales)


@pytest.mark.parametrize("target", ["pooled", "range"])
def test_rdacv_on_digits_rescaled_changes_almost_no_prediction(target):
    # the digits' pixels that are 0 in every row of a training split have no
    # unit to read: the share of held-out predictions they change stays small
    X, y = _data("digits")
    s = _scales(X.shape[1], 11)
    changed = []
    kw = dict(alphas=(0.5, 1.0), gammas=(0.05,), ridges=(0.1, 0.5), cv=3, refine=False)
    for train, test in StratifiedKFold(3, shuffle=True, random_state=1).split(X, y):
        a = RegularizedDiscriminantAnalysisCV(target=target, **kw).fit(X[train], y[train])
        b = RegularizedDiscriminantAnalysisCV(target=target, **kw).fit(X[train] * s, y[train])
        changed.append(np.mean(a.predict(X[test]) != b.predict(X[test] * s)))
    assert np.mean(changed) <= 0.005


def test_pooled_scale_is_each_features_pooled_deviation():
    X, y = _generated(3)
    X[:, 2] = 7.0  # constant: its magnitude
    stats = ScatterStats.from_data(X, y)
    sd = np.sqrt(sum(((X[y == k] - X[y == k].mean(0)) ** 2).sum(0) for k in range(3)))
    expected = np.where(np.arange(5) == 2, 7.0, sd)
    np.testing.assert_allclose(pooled_scale(stats), expected / expected.max(), rtol=1e-10)
    X[:, 2] = 0.0  # 0 everywhere: no unit, the largest
    np.testing.assert_allclose(pooled_scale(ScatterStats.from_data(X, y))[2], 1.0)


def test_pooled_scale_of_subtracted_statistics_ignores_rounding():
    # a feature non-zero in a few rows only: all the data less those rows (how
    # RDA-CV forms its training splits) leaves rounding in its scatter, which
    # must not become a tiny unit that blows the rounding up
    X, y = _generated(4, n=60)
    X[:, 1] = 0.0
    X[[0, 70], 1] = [1e3, 3.3e3]
    held = np.zeros(len(y), dtype=bool)
    held[[0, 5, 70, 71]] = True
    total = ScatterStats.from_data(X, y)
    rest = total.subtract(ScatterStats.from_data(X[held], y[held], classes=[0, 1, 2]))
    rest = rest.with_bounds(X[~held].min(0), X[~held].max(0))
    direct = ScatterStats.from_data(X[~held], y[~held])
    np.testing.assert_allclose(pooled_scale(rest), pooled_scale(direct), rtol=1e-6)
    assert pooled_scale(rest)[1] == 1.0


def test_pooled_target_keeps_forget_and_merge_exact():
    X, y = _generated(5)
    kw = dict(alpha=0.5, gamma=0.2, ridge=0.1, target="pooled")
    whole = RegularizedDiscriminantAnalysis(**kw).fit(X, y)
    rest = RegularizedDiscriminantAnalysis(**kw).fit(X[10:], y[10:])
    forgot = RegularizedDiscriminantAnalysis(**kw).fit(X, y).forget(X[:10], y[:10])
    np.testing.assert_allclose(forgot.predict_proba(X), rest.predict_proba(X), atol=1e-9)
    part = RegularizedDiscriminantAnalysis(**kw)
    for idx in np.array_split(np.random.default_rng(0).permutation(len(y)), 3):
        part.partial_fit(X[idx], y[idx], classes=[0, 1, 2])
    np.testing.assert_allclose(part.predict_proba(X), whole.predict_proba(X), atol=1e-9)


def test_the_identity_target_is_friedmans_in_the_features_units():
    X, y = _generated(6)
    g = 0.3
    m = RegularizedDiscriminantAnalysis(target="identity", alpha=1.0, gamma=g, ridge=0.0)
    m.set_params(store_covariance=True).fit(X, y)
    for k in range(3):
        S = np.cov(X[y == k], rowvar=False)
        np.testing.assert_allclose(
            m.covariance_[k], (1 - g) * S + g * np.trace(S) / 5 * np.eye(5), rtol=1e-10
        )


def test_qda_refuses_singular_classes_naming_what_to_use():
    X, y = _data("digits")
    with pytest.raises(ValueError, match=r"class 0 .*singular") as info:
        QuadraticDiscriminantAnalysis().fit(X, y)
    text = str(info.value)
    for remedy in (
        "reg_param",
        "RegularizedDiscriminantAnalysis(",
        "RegularizedDiscriminantAnalysisCV()",
    ):
        assert remedy in text, text
    # and each remedy it names fits
    QuadraticDiscriminantAnalysis(reg_param=0.05).fit(X, y)
    RegularizedDiscriminantAnalysis(alpha=1, ridge=0.05).fit(X, y)

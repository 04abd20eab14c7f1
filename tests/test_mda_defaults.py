"""Mixture discriminant analysis: defaults that come from the data (issue #19), overflow (#20),
and EM against scikit-learn's GaussianMixture with Bayes' rule transcribed in NumPy (#25)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.utils._param_validation import InvalidParameterError

import bayesrule
from bayesrule import MixtureDiscriminantAnalysis as MDA
from bayesrule.estimators._mda_select import MIN_GAIN, MIN_ROWS, candidates, choose_components


def blobs(n_per_class, centres_per_class, p, seed, spread=4.0):
    """Classes of Gaussian blobs: class k has ``centres_per_class[k]`` blobs in ``p`` features."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for k, (n, c) in enumerate(zip(n_per_class, centres_per_class, strict=True)):
        centres = rng.normal(scale=spread, size=(c, p))
        which = rng.integers(0, c, size=n)
        X.append(centres[which] + rng.normal(size=(n, p)))
        y.append(np.full(n, k))
    return np.vstack(X), np.concatenate(y)


def tables():
    """Small tables: three of scikit-learn's and two generated ones with features of mixed units."""
    out = {}
    for name, load in (("iris", load_iris), ("wine", load_wine), ("cancer", load_breast_cancer)):
        out[name] = load(return_X_y=True)
    X, y = blobs([60, 40, 80], [1, 2, 3], 5, seed=1)
    out["blobs"] = (X * np.array([1e-3, 1.0, 1e3, 5.0, 2e5]), y)
    rng = np.random.default_rng(2)
    X = rng.normal(size=(150, 8)) @ rng.normal(size=(8, 8))
    y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(int)
    out["correlated"] = (X * 10.0 ** rng.uniform(-4, 4, 8), y)
    # fewer rows a class (25) than features (40): one pooled covariance
    X, y = blobs([25, 25, 25], [1, 1, 1], 40, seed=3, spread=0.6)
    out["wide"] = (X * 10.0 ** rng.uniform(-3, 3, 40), y)
    return out


TABLES = tables()


def cv_predict(est, X, y):
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return cross_val_predict(est, X, y, cv=cv)


# ------------------------------------------------------------------ unit invariance
@pytest.mark.parametrize("name", sorted(TABLES))
def test_rescaling_features_changes_no_prediction(name):
    X, y = TABLES[name]
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    factors = 10.0 ** rng.uniform(-3, 3, X.shape[1])
    a = MDA().fit(X, y)
    b = MDA().fit(X * factors, y)
    assert np.array_equal(a.n_components_, b.n_components_)
    pa, pb = a.predict_proba(X), b.predict_proba(X * factors)
    assert np.mean(a.predict(X) != b.predict(X * factors)) <= 0.005
    np.testing.assert_allclose(pa, pb, atol=1e-6)
    # densities in x differ by the Jacobian of the rescaling, the same for every row
    shift = a.score_samples(X) - b.score_samples(X * factors)
    np.testing.assert_allclose(shift, np.log(factors).sum(), rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", sorted(TABLES))
@pytest.mark.parametrize("offset", [1e3, 1e5, 1e6, 1e7])
def test_a_shift_of_origin_changes_no_choice_and_no_prediction(name, offset):
    # a change of origin (kelvin for Celsius, a timestamp's epoch) moves the standardised
    # values only by the rounding of the arithmetic: the sample's keys, and so the
    # components and ridge chosen on it, stay; the float32 keys of before moved across
    # a rounding boundary at an offset of 1e6 on wine and changed the ridge
    X, y = TABLES[name]
    shifts = offset * np.linspace(1.0, 2.0, X.shape[1])
    a = MDA(random_state=0).fit(X, y)
    b = MDA(random_state=0).fit(X + shifts, y)
    assert a.reg_covar_ == b.reg_covar_
    assert np.array_equal(a.n_components_, b.n_components_)
    assert np.array_equal(a.predict(X), b.predict(X + shifts))
    # probabilities to the rounding of the shifted data (about offset * 1e-16 a value)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X + shifts), atol=1e-5)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31 - 1),
    logs=st.lists(st.floats(-3, 3), min_size=6, max_size=6),
    projection=st.sampled_from(["pca", "fisher"]),
)
def test_per_feature_scales_leave_the_model_unchanged(seed, logs, projection):
    """Any per-feature scales in [1e-3, 1e3], PCA down to fewer dimensions or Fisher's."""
    X, y = blobs([50, 70, 30], [2, 1, 3], 6, seed=seed % 1000)
    factors = 10.0 ** np.array(logs)
    params = {"projection": projection, "n_dims": 4 if projection == "pca" else None}
    a = MDA(**params).fit(X, y)
    b = MDA(**params).fit(X * factors, y)
    assert np.mean(a.predict(X) != b.predict(X * factors)) <= 0.005
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X * factors), atol=1e-6)
    np.testing.assert_allclose(
        a.means_ * factors, b.means_, rtol=1e-7, atol=1e-9 * np.abs(b.means_).max()
    )


def test_reg_covar_is_relative_to_the_data():
    """The ridge is a fraction of each class's variance: one unit change, one model."""
    X, y = blobs([200, 200], [3, 3], 4, seed=3)
    for reg in (0.01, 0.3):
        a = MDA(n_components=3, reg_covar=reg, projection=None).fit(X, y)
        b = MDA(n_components=3, reg_covar=reg, projection=None).fit(X * 1e4, y)
        np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X * 1e4), atol=1e-8)


# ------------------------------------------------------------------ component choice
def test_small_class_gets_few_components_and_a_large_multimodal_class_more():
    X, y = blobs([30, 3000], [1, 8], 3, seed=4, spread=8.0)
    est = MDA().fit(X, y)
    small, large = est.n_components_.tolist()
    assert 1 <= small <= 2
    assert large >= 6
    # and the choice follows the data: eight well-separated blobs, not the cap
    assert large <= est.max_components


def test_choice_grows_with_the_rows_of_a_class():
    """The same multimodal distribution, more rows: never fewer components."""
    chosen = []
    for n in (40, 400, 2000):
        X, y = blobs([n, n], [6, 1], 4, seed=5, spread=6.0)
        chosen.append(int(MDA().fit(X, y).n_components_[0]))
    assert chosen == sorted(chosen)
    assert chosen[0] <= 2 and chosen[-1] >= 4


def test_choice_is_the_best_held_out_likelihood():
    """Three blobs: three components, and numbers that add nothing measurable are not kept."""
    rng = np.random.default_rng(6)
    Z = np.vstack([rng.normal(m, 1.0, size=(150, 2)) for m in ([-6, 0], [6, 0], [0, 6])])
    Z = Z[rng.permutation(Z.shape[0])]
    w = np.ones(Z.shape[0])
    for reg in (0.001, 0.01, 0.1):
        choice = choose_components(
            Z, w, max_components=12, covariance_type="full", reg_covar=reg, rank=1, seed=0
        )
        scores = choice.scores
        assert choice.n_components in (3, 4), (reg, scores)
        # every larger number tried gains less than the margin over the choice
        gain = MIN_GAIN * Z.shape[0]
        assert all(v <= scores[choice.n_components] + gain for C, v in scores.items())
        assert scores[choice.n_components] > scores[1] + 100
    assert candidates(3, 12) == [1] and candidates(MIN_ROWS, 12) == [1]
    assert max(candidates(10_000, 12)) == 12
    assert max(candidates(100, 12, d=30)) == 1  # 50 rows a half: one component of 30 dims


def test_a_subsampled_class_shown_multimodal_gets_components_in_proportion_to_its_rows():
    rng = np.random.default_rng(12)
    Z = np.vstack([rng.normal(m, 1.0, size=(1024, 2)) for m in ([-6, 0], [6, 0])])
    Z = Z[rng.permutation(Z.shape[0])]
    kw = {"max_components": 12, "covariance_type": "full", "reg_covar": 0.1, "rank": 1}
    assert choose_components(Z, np.ones(2048), seed=0, rows=100_000, **kw).n_components == 12
    assert choose_components(Z, np.ones(2048), seed=0, rows=160, **kw).n_components == 10
    one = rng.normal(size=(2048, 2))
    assert choose_components(one, np.ones(2048), seed=0, rows=100_000, **kw).n_components == 1


def test_one_row_class_warns_and_gets_one_component():
    X, y = blobs([40, 40], [1, 1], 3, seed=7)
    X = np.vstack([X, [[0.5, 0.5, 0.5]]])
    y = np.append(y, 9)
    with pytest.warns(UserWarning, match=r"class 9 has 1 samples.*one component"):
        est = MDA().fit(X, y)
    assert est.n_components_[est.classes_.tolist().index(9)] == 1
    proba = est.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"reg_covar": -0.1}, r"'reg_covar' parameter .* range \[0(\.0)?, inf\)"),
        ({"n_components": "many"}, r"'n_components' parameter"),
        ({"max_components": 0}, r"'max_components' parameter"),
    ],
)
def test_relative_parameters_refuse_values_outside_their_range(params, match):
    X, y = blobs([30, 30], [1, 1], 3, seed=8)
    with pytest.raises(InvalidParameterError, match=match):
        MDA(**params).fit(X, y)


# ------------------------------------------------------------------ against LDA
@pytest.mark.parametrize("name", ["iris", "wine", "cancer", "wide"])
def test_defaults_score_at_least_lda_less_one_and_a_half_points(name):
    X, y = TABLES[name]
    mda = np.mean(cv_predict(MDA(), X, y) == y)
    lda = np.mean(cv_predict(bayesrule.LinearDiscriminantAnalysis(), X, y) == y)
    assert mda >= lda - 0.015, (mda, lda)


# ------------------------------------------------------------------ overflow
@pytest.mark.parametrize("magnitude", [1e155, 1e200, 1e300])
def test_values_whose_squares_overflow_are_refused(magnitude):
    X, y = blobs([40, 40], [1, 1], 3, seed=9)
    with pytest.raises(ValueError, match="overflow float64; rescale X"):
        MDA().fit(X * magnitude, y)
    with pytest.raises(ValueError, match="overflow float64; rescale X"):
        MDA(projection=None).fit(X * magnitude, y)


@pytest.mark.parametrize("magnitude", [1e100, 1e150])
def test_large_values_that_fit_give_finite_densities_to_the_training_rows(magnitude):
    X, y = blobs([40, 40], [1, 1], 3, seed=9)
    try:
        est = MDA().fit(X * magnitude, y)
    except ValueError as err:
        assert "overflow float64" in str(err)
        return
    assert np.all(np.isfinite(est.score_samples(X * magnitude)))
    assert np.mean(est.predict(X * magnitude) == y) > 0.9


# ------------------------------------------------------------------ oracle: GaussianMixture
def _components(est, k):
    comps = est._model.components
    which = np.flatnonzero(comps.owner == k)
    return np.exp(comps.log_weights[which]), comps.means[which], comps.covariances()[which]


def _sklearn_init(kind, weights, means, covs):
    if kind == "full":
        prec = np.linalg.inv(covs)
    elif kind == "diag":
        prec = 1.0 / np.diagonal(covs, axis1=1, axis2=2)
    else:
        prec = 1.0 / covs[:, 0, 0]
    return {"weights_init": weights, "means_init": means, "precisions_init": prec}


@pytest.mark.parametrize("kind", ["full", "diag", "spherical"])
def test_em_matches_gaussian_mixture_from_the_same_start(kind):
    """Per class, the same EM iterations as scikit-learn's GaussianMixture on the projected rows.

    MDA's ridge is ``reg_covar`` times the class's mean variance in the
    projected space, which EM leaves unchanged (the responsibilities of a row
    sum to 1): GaussianMixture gets that absolute ridge. Both start from the
    components of MDA's first iteration and run ``n`` more.
    """
    X, y = blobs([300, 250], [3, 2], 6, seed=10)
    n, reg = 6, 0.05
    base = {"n_components": [3, 2], "covariance_type": kind, "reg_covar": reg, "n_dims": 4}
    base.update(tol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = MDA(max_iter=1, **base).fit(X, y)
        est = MDA(max_iter=n + 1, **base).fit(X, y)
    assert est.n_iter_ == n + 1
    Z = est._model.projection.transform(X)
    np.testing.assert_allclose(Z, start._model.projection.transform(X))
    for k in range(2):
        Zk = Z[y == k]
        ridge = reg * np.trace(np.cov(Zk.T, bias=True)) / Zk.shape[1]
        weights, means, covs = _components(start, k)
        init = _sklearn_init(kind, weights, means, covs)
        gm = GaussianMixture(
            weights.size, covariance_type=kind, reg_covar=ridge, max_iter=n, tol=0.0, **init
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            gm.fit(Zk)
        assert gm.n_iter_ == n
        w, m, c = _components(est, k)
        sk_cov = {
            "full": gm.covariances_,
            "diag": np.array([np.diag(v) for v in np.atleast_2d(gm.covariances_)]),
            "spherical": np.array([np.eye(Zk.shape[1]) * v for v in np.ravel(gm.covariances_)]),
        }[kind]
        np.testing.assert_allclose(w, gm.weights_, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(m, gm.means_, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(c, sk_cov, rtol=1e-6, atol=1e-8)
        ll = est.stats_.log_likelihood[k] / est.stats_.weights[k]
        np.testing.assert_allclose(ll, gm.lower_bound_, rtol=1e-6)


@pytest.mark.parametrize("kind", ["full", "diag", "spherical"])
def test_posteriors_and_densities_are_bayes_rule_over_the_mixtures(kind):
    """predict_proba and score_samples against scipy's normal densities, in NumPy."""
    X, y = blobs([120, 90, 60], [2, 1, 3], 7, seed=11)
    X = X * np.array([1.0, 1e3, 1e-2, 5.0, 1.0, 2e2, 1.0])
    est = MDA(covariance_type=kind, n_dims=4).fit(X, y)
    s = est.stats_
    Xt = X[::3] + 0.3
    D = (Xt - s.centre) / s.scale
    Z = D @ s.basis
    priors = est.priors_
    joint = np.empty((Xt.shape[0], 3))
    for k in range(3):
        w, m, c = _components(est, k)
        dens = [multivariate_normal(m[j], c[j]).logpdf(Z) for j in range(w.size)]
        joint[:, k] = np.log(priors[k]) + logsumexp(np.log(w)[:, None] + np.array(dens), axis=0)
    proba = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
    np.testing.assert_allclose(est.predict_proba(Xt), proba, rtol=1e-8, atol=1e-10)
    # the density in x: the mixtures, the isotropic residual, the Jacobian of the scaling
    p, d = s.basis.shape
    r2 = np.sum(D * D, axis=1) - np.sum(Z * Z, axis=1)
    v = float(s.residual_var[0])
    residual = -0.5 * (r2 / v + (p - d) * np.log(2 * np.pi * v)) - np.log(s.scale).sum()
    np.testing.assert_allclose(
        est.score_samples(Xt), logsumexp(joint, axis=1) + residual, rtol=1e-9, atol=1e-8
    )

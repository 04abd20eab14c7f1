"""LDA, QDA and RDA: oracles (scikit-learn, scipy.stats), streaming, merging, sampling."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2, multivariate_normal
from sklearn import discriminant_analysis as skda
from sklearn.covariance import OAS, ledoit_wolf_shrinkage, oas
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_iris,
    load_wine,
    make_classification,
)
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import bayesrule
from bayesrule import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
    RegularizedDiscriminantAnalysis,
)


def _synthetic(seed=0, n=400, p=6, k=3):
    X, y = make_classification(
        n_samples=n,
        n_features=p,
        n_informative=p - 1,
        n_redundant=0,
        n_classes=k,
        n_clusters_per_class=1,
        random_state=seed,
    )
    return X * np.arange(1, p + 1) + 5.0, y


SHRINK_DATASETS = {
    name: load(return_X_y=True)
    for name, load in [
        ("iris", load_iris),
        ("wine", load_wine),
        ("breast_cancer", load_breast_cancer),
        ("digits", load_digits),
    ]
}

DATASETS = {
    "iris": load_iris(return_X_y=True),
    "wine": load_wine(return_X_y=True),
    "synthetic": _synthetic(),
    "binary": _synthetic(seed=1, k=2),
}


# ---------------------------------------------------------------- oracles
@pytest.mark.parametrize("name", DATASETS)
@pytest.mark.parametrize("solver", ["lsqr", "eigen"])
@pytest.mark.parametrize("shrinkage", [None, 0.3])
def test_lda_matches_sklearn(name, solver, shrinkage):
    X, y = DATASETS[name]
    ours = LinearDiscriminantAnalysis(solver=solver, bias=True, shrinkage=shrinkage, tol=1e-12).fit(
        X, y
    )
    ref = skda.LinearDiscriminantAnalysis(solver=solver, shrinkage=shrinkage).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-8)
    np.testing.assert_allclose(
        ours.decision_function(X), ref.decision_function(X), rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours.covariance_, ref.covariance_, rtol=1e-10)
    np.testing.assert_allclose(ours.means_, ref.means_, rtol=1e-12)


@pytest.mark.parametrize("name", ["iris", "wine", "synthetic"])
def test_lda_transform_matches_sklearn_svd_up_to_sign(name):
    X, y = DATASETS[name]
    ours = LinearDiscriminantAnalysis(bias=True, tol=1e-12).fit(X, y)
    ref = skda.LinearDiscriminantAnalysis(solver="svd", tol=1e-12).fit(X, y)
    np.testing.assert_allclose(
        ours.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=1e-8
    )
    np.testing.assert_allclose(
        np.abs(ours.transform(X)), np.abs(ref.transform(X)), rtol=1e-6, atol=1e-8
    )
    np.testing.assert_allclose(ours.xbar_, ref.xbar_, rtol=1e-12)


def test_lda_fisher_space_whitens_the_classes():
    X, y = DATASETS["wine"]
    Z = LinearDiscriminantAnalysis(bias=True).fit(X, y).transform(X)
    within = sum(np.cov(Z[y == k].T, bias=True) * (y == k).sum() for k in np.unique(y)) / len(y)
    np.testing.assert_allclose(within, np.eye(2), atol=1e-8)


@pytest.mark.parametrize("name", DATASETS)
@pytest.mark.parametrize("reg_param", [0.0, 0.1, 0.5, 1.0])
def test_qda_matches_sklearn(name, reg_param):
    X, y = DATASETS[name]
    ours = QuadraticDiscriminantAnalysis(bias=True, reg_param=reg_param).fit(X, y)
    ref = skda.QuadraticDiscriminantAnalysis(reg_param=reg_param).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-8)
    for a, b in zip(ours.scalings_, ref.scalings_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-8)


def test_lda_density_matches_scipy():
    X, y = DATASETS["synthetic"]
    m = LinearDiscriminantAnalysis().fit(X, y)
    ref = np.column_stack(
        [multivariate_normal(m.means_[k], m.covariance_).logpdf(X) for k in range(3)]
    )
    joint = ref + np.log(m.priors_)
    np.testing.assert_allclose(m.predict_joint_log_proba(X), joint, rtol=1e-9)
    np.testing.assert_allclose(m.score_samples(X), np.logaddexp.reduce(joint, axis=1), rtol=1e-9)


def test_qda_density_matches_scipy():
    X, y = DATASETS["iris"]
    m = QuadraticDiscriminantAnalysis(store_covariance=True, reg_param=0.01).fit(X, y)
    joint = np.column_stack(
        [
            multivariate_normal(m.means_[k], m.covariance_[k]).logpdf(X) + np.log(m.priors_[k])
            for k in range(3)
        ]
    )
    np.testing.assert_allclose(m.predict_joint_log_proba(X), joint, rtol=1e-9)


def test_default_estimators_are_unbiased():
    X, y = DATASETS["iris"]
    n, k = len(y), 3
    lda = LinearDiscriminantAnalysis().fit(X, y)
    pooled = sum(np.cov(X[y == c].T, bias=True) * (y == c).sum() for c in range(k)) / (n - k)
    np.testing.assert_allclose(lda.covariance_, pooled, rtol=1e-12)
    qda = QuadraticDiscriminantAnalysis(store_covariance=True).fit(X, y)
    for c in range(k):
        np.testing.assert_allclose(qda.covariance_[c], np.cov(X[y == c].T), rtol=1e-12)


# -------------------------------------------------------------- shrinkage
def _standardised(R):
    """Residuals standardised by their own standard deviations (constant columns: 0)."""
    s = R.std(axis=0)
    return R / np.where(s > 0, s, 1.0)


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer", "digits"])
def test_estimated_intensities_are_sklearns_on_standardised_class_residuals(name):
    X, y = SHRINK_DATASETS[name]
    lw = LinearDiscriminantAnalysis(solver="eigen", shrinkage="ledoit-wolf").fit(X, y)
    qda = QuadraticDiscriminantAnalysis(solver="eigen", shrinkage="oas", reg_param=0.01).fit(X, y)
    for k in range(lw.classes_.size):
        Z = _standardised(X[y == k] - X[y == k].mean(0))
        assert lw.shrinkage_[k] == pytest.approx(ledoit_wolf_shrinkage(Z), rel=1e-9)
        assert qda.shrinkage_[k] == pytest.approx(oas(Z)[1], rel=1e-9)


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer", "digits"])
@pytest.mark.parametrize("solver", ["eigen", "lsqr"])
def test_lda_auto_shrinkage_matches_sklearn(name, solver):
    # full data: digits has many features constant within a class, which
    # bias=True shrinks as scikit-learn does (StandardScaler's scale 1)
    X, y = SHRINK_DATASETS[name]
    ours = LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto", bias=True, tol=1e-12).fit(
        X, y
    )
    ref = skda.LinearDiscriminantAnalysis(solver=solver, shrinkage="auto").fit(X, y)
    np.testing.assert_allclose(ours.covariance_, ref.covariance_, rtol=1e-9, atol=0)
    # scikit-learn's lsqr solve loses digits on ill-conditioned data (breast_cancer)
    atol = 1e-8 if solver == "eigen" else 1e-6
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=atol)


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer", "digits"])
def test_qda_auto_shrinkage_matches_sklearn(name):
    X, y = SHRINK_DATASETS[name]
    ours = QuadraticDiscriminantAnalysis(solver="eigen", shrinkage="auto", bias=True).fit(X, y)
    # scikit-learn's absolute tol=1e-4 calls breast_cancer's classes singular
    # (features in small units); its 'eigen' solver ignores reg_param
    ref = skda.QuadraticDiscriminantAnalysis(solver="eigen", shrinkage="auto", tol=1e-12).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-8)


def test_class_constant_features_shrink_towards_zero_by_default_and_a_mu_with_bias():
    X, y = SHRINK_DATASETS["digits"]
    k0 = np.flatnonzero(X[y == 0].std(axis=0) == 0)  # constant in class 0
    assert k0.size
    sk = QuadraticDiscriminantAnalysis(
        solver="eigen", shrinkage="auto", store_covariance=True, bias=True
    ).fit(X, y)
    mu0 = 1.0 - k0.size / X.shape[1]  # the share of features that vary in class 0
    np.testing.assert_allclose(np.diag(sk.covariance_[0])[k0], sk.shrinkage_[0] * mu0, rtol=1e-12)
    free = QuadraticDiscriminantAnalysis(
        solver="eigen", shrinkage="auto", reg_param=0.01, store_covariance=True
    ).fit(X, y)
    np.testing.assert_allclose(np.diag(free.covariance_[0])[k0], 0.01, rtol=1e-12)


@pytest.mark.parametrize("shrinkage", ["auto", "oas"])
def test_class_constant_features_keep_lda_free_of_units_only_by_default(shrinkage):
    X, y = SHRINK_DATASETS["digits"]
    Xs = X * np.where(np.arange(X.shape[1]) % 3 == 0, 1e3, 1.0)
    model = LinearDiscriminantAnalysis(solver="eigen", shrinkage=shrinkage).fit(X, y)
    scaled = LinearDiscriminantAnalysis(solver="eigen", shrinkage=shrinkage).fit(Xs, y)
    np.testing.assert_allclose(scaled.predict_proba(Xs), model.predict_proba(X), atol=1e-9)
    # bias=True is scikit-learn's model: its class-constant features have a
    # variance of a * mu in their own units, so a change of units changes it
    sk = LinearDiscriminantAnalysis(solver="eigen", shrinkage=shrinkage, bias=True)
    diff = np.abs(sk.fit(Xs, y).predict_proba(Xs) - sk.fit(X, y).predict_proba(X)).max()
    assert diff > 1e-3


@pytest.mark.parametrize("shrinkage", ["auto", "ledoit-wolf", "oas", None])
@pytest.mark.parametrize("make", [LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis])
def test_estimated_shrinkage_is_free_of_the_features_units(make, shrinkage):
    # the default bias=False; bias=True is scikit-learn's model, whose
    # class-constant features (none on wine) depend on their units
    X, y = SHRINK_DATASETS["wine"]
    model = make(solver="eigen", shrinkage=shrinkage).fit(X, y)
    assert model.bias is False
    for j, c in [(0, 1e-6), (4, 1e6), (12, 1e-3), (7, 1e3)]:
        Xs = X.copy()
        Xs[:, j] *= c
        scaled = make(solver="eigen", shrinkage=shrinkage).fit(Xs, y)
        np.testing.assert_allclose(scaled.shrinkage_, model.shrinkage_, rtol=1e-9)
        np.testing.assert_allclose(scaled.predict_proba(Xs), model.predict_proba(X), atol=1e-9)


@pytest.mark.parametrize("shrinkage", ["auto", "oas"])
@pytest.mark.parametrize("make", [LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis])
def test_estimated_intensity_is_the_same_by_fit_partial_fit_merge_and_forget(make, shrinkage):
    X, y = SHRINK_DATASETS["wine"]
    X = X + 1e4  # far from the origin: the moments are re-centred, never raw
    full = make(solver="eigen", shrinkage=shrinkage).fit(X, y)
    chunks = np.array_split(np.random.default_rng(3).permutation(len(y)), 4)
    streamed = make(solver="eigen", shrinkage=shrinkage)
    for idx in chunks:
        streamed.partial_fit(X[idx], y[idx], classes=[0, 1, 2])
    parts = [make(solver="eigen", shrinkage=shrinkage).fit(X[idx], y[idx]) for idx in chunks]
    merged = parts[0].merge(parts[1]).merge(parts[2].merge(parts[3]))
    extra = np.random.default_rng(4).normal(size=(30, X.shape[1])) * X.std(0) + X.mean(0)
    y_extra = np.arange(30) % 3
    forgotten = make(solver="eigen", shrinkage=shrinkage).fit(
        np.vstack([X, extra]), np.r_[y, y_extra]
    )
    forgotten.forget(extra, y_extra)
    for model in (streamed, merged, forgotten):
        np.testing.assert_allclose(model.shrinkage_, full.shrinkage_, rtol=1e-10)


def test_covariance_estimator_matches_sklearn():
    X, y = DATASETS["wine"]
    ours = LinearDiscriminantAnalysis(solver="eigen", covariance_estimator=OAS()).fit(X, y)
    ref = skda.LinearDiscriminantAnalysis(solver="lsqr", covariance_estimator=OAS()).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-8)
    with pytest.raises(ValueError, match="covariance_estimator needs all rows"):
        LinearDiscriminantAnalysis(solver="eigen", covariance_estimator=OAS()).partial_fit(X, y)


class _PlainCovariance:
    """scikit-learn's whole contract for a covariance_estimator: fit(X) and covariance_.

    No get_params (so no clone), and a fit that returns None.
    """

    def fit(self, X):
        self.covariance_ = np.cov(np.asarray(X).T, bias=True)


@pytest.mark.parametrize("name", ["LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"])
def test_covariance_estimator_needs_only_fit_and_covariance(name):
    X, y = DATASETS["wine"]
    given = _PlainCovariance()
    ours = getattr(bayesrule, name)(solver="eigen", covariance_estimator=given, bias=True)
    ours.fit(X, y)
    ref = getattr(skda, name)(solver="eigen", covariance_estimator=_PlainCovariance()).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-8)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    assert not hasattr(given, "covariance_")  # the user's object is copied, not fitted


def test_covariance_estimator_without_covariance_is_named():
    class NoCovariance:
        def fit(self, X):
            return self

    X, y = DATASETS["wine"]
    with pytest.raises(ValueError, match="NoCovariance has no covariance_ attribute after fit"):
        LinearDiscriminantAnalysis(solver="eigen", covariance_estimator=NoCovariance()).fit(X, y)


def test_shrinkage_streams_exactly():
    X, y = DATASETS["wine"]
    full = LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto").fit(X, y)
    part = LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto")
    for idx in np.array_split(np.arange(len(y)), 4):
        part.partial_fit(X[idx], y[idx], classes=[0, 1, 2])
    assert part.shrinkage_ == pytest.approx(full.shrinkage_, rel=1e-10)
    np.testing.assert_allclose(part.predict_proba(X), full.predict_proba(X), atol=1e-10)


# -------------------------------------------------- streaming and merging
@pytest.mark.parametrize(
    "make",
    [
        lambda: LinearDiscriminantAnalysis(),
        lambda: LinearDiscriminantAnalysis(solver="eigen", shrinkage="oas"),
        lambda: QuadraticDiscriminantAnalysis(reg_param=0.1),
        lambda: RegularizedDiscriminantAnalysis(alpha=0.3, gamma=0.2),
    ],
)
def test_partial_fit_and_merge_equal_fit(make):
    X, y = DATASETS["synthetic"]
    w = np.random.default_rng(0).uniform(0.2, 3.0, len(y))
    full = make().fit(X, y, sample_weight=w)
    chunks = np.array_split(np.random.default_rng(1).permutation(len(y)), 5)
    streamed = make()
    for idx in chunks:
        streamed.partial_fit(X[idx], y[idx], classes=[0, 1, 2], sample_weight=w[idx])
    parts = [make().fit(X[idx], y[idx], sample_weight=w[idx]) for idx in chunks]
    merged = parts[0]
    for other in parts[1:]:
        merged = merged.merge(other)
    for model in (streamed, merged):
        assert model.stats_.allclose(full.stats_, rtol=1e-10)
        np.testing.assert_allclose(
            model.predict_proba(X), full.predict_proba(X), rtol=1e-10, atol=1e-12
        )
        np.testing.assert_allclose(model.score_samples(X), full.score_samples(X), rtol=1e-10)
        np.testing.assert_array_equal(model.predict(X), full.predict(X))


def test_merge_returns_new_model_and_unites_classes():
    X, y = DATASETS["iris"]
    a = LinearDiscriminantAnalysis().fit(X[y < 2], y[y < 2])
    b = LinearDiscriminantAnalysis().fit(X[y > 0], y[y > 0])
    before = a.coef_.copy()
    both = a.merge(b)
    assert both is not a
    np.testing.assert_array_equal(a.coef_, before)
    assert both.classes_.tolist() == [0, 1, 2]
    # class 1 appears in both parts: its statistics are combined, not duplicated
    assert both.class_count_.tolist() == [50, 100, 50]


def test_merge_rejects_other_type_and_features():
    X, y = DATASETS["iris"]
    lda = LinearDiscriminantAnalysis().fit(X, y)
    with pytest.raises(
        ValueError,
        match="cannot merge a LinearDiscriminantAnalysis with a QuadraticDiscriminantAnalysis",
    ):
        lda.merge(QuadraticDiscriminantAnalysis().fit(X, y))
    with pytest.raises(ValueError, match="expected 4 features, got 3"):
        lda.merge(LinearDiscriminantAnalysis().fit(X[:, :3], y))


def test_string_labels():
    X, y = DATASETS["iris"]
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    m = QuadraticDiscriminantAnalysis().fit(X, names)
    assert set(m.predict(X)) <= set(names)
    Xs, ys = m.sample(5, y="virginica", random_state=0)
    assert ys.tolist() == ["virginica"] * 5


# ------------------------------------------------------------- RDA limits
@pytest.mark.parametrize("name", ["iris", "wine", "synthetic"])
def test_rda_limits_are_qda_and_lda(name):
    X, y = DATASETS[name]
    rda_q = RegularizedDiscriminantAnalysis(alpha=1.0, gamma=0.0, ridge=0.0).fit(X, y)
    qda = QuadraticDiscriminantAnalysis().fit(X, y)
    np.testing.assert_allclose(rda_q.predict_proba(X), qda.predict_proba(X), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rda_q.score_samples(X), qda.score_samples(X), rtol=1e-9)
    rda_l = RegularizedDiscriminantAnalysis(alpha=0.0, gamma=0.0, ridge=0.0).fit(X, y)
    lda = LinearDiscriminantAnalysis(tol=1e-12).fit(X, y)
    np.testing.assert_allclose(rda_l.predict_proba(X), lda.predict_proba(X), rtol=1e-8, atol=1e-11)
    np.testing.assert_allclose(rda_l.score_samples(X), lda.score_samples(X), rtol=1e-9)


def test_rda_gamma_shrinks_towards_scaled_identity():
    # Friedman's scaled identity (tr/p) I by default; with target='range' a scaled
    # identity in the units of the features' ranges: (tr/p) diag(range)^2
    X, y = DATASETS["iris"]
    for target, r in (("identity", np.ones(4)), ("range", np.ptp(X, axis=0))):
        m = RegularizedDiscriminantAnalysis(
            alpha=1.0, gamma=1.0, ridge=0.0, store_covariance=True, target=target
        )
        m.fit(X, y)
        for k in range(3):
            c = m.covariance_[k] / np.outer(r, r)
            np.testing.assert_allclose(c, np.eye(4) * np.trace(c) / 4, atol=1e-12)


# --------------------------------------------------------- rank deficiency
def test_lda_works_with_constant_and_collinear_features_and_n_less_than_p():
    rng = np.random.default_rng(0)
    n, p = 30, 60
    X = rng.normal(size=(n, p))
    X[:, :10] = 0.0  # constant, like MNIST's border pixels
    X[:, 10] = 2 * X[:, 11] - X[:, 12]  # collinear
    y = np.repeat([0, 1, 2], 10)
    X[y == 1, 20] += 5.0
    m = LinearDiscriminantAnalysis().fit(X, y)
    assert m.rank_ <= n - 3
    proba = m.predict_proba(X)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    assert np.all(m.predict(X[y == 1]) == 1)  # the class with a real signal
    assert np.all(np.isfinite(m.score_samples(X)))
    assert m.transform(X).shape == (n, 2)


def test_binary_coef_is_logistic_form():
    X, y = DATASETS["binary"]
    m = LinearDiscriminantAnalysis().fit(X, y)
    assert m.coef_.shape == (1, X.shape[1])
    logit = X @ m.coef_[0] + m.intercept_[0]
    np.testing.assert_allclose(m.predict_proba(X)[:, 1], 1 / (1 + np.exp(-logit)), rtol=1e-10)
    np.testing.assert_allclose(m.decision_function(X), logit, rtol=1e-9, atol=1e-9)


def test_log_proba_is_stable_for_extreme_inputs():
    X, y = DATASETS["iris"]
    for m in (LinearDiscriminantAnalysis().fit(X, y), QuadraticDiscriminantAnalysis().fit(X, y)):
        far = np.array([[1e6, -1e6, 1e6, 1e6]])
        lp = m.predict_log_proba(far)
        assert np.all(np.isfinite(lp))
        assert lp.max() == pytest.approx(0.0, abs=1e-12)
        assert lp.min() < -1e3  # would be -inf or nan with a naive log(softmax)


# ----------------------------------------------------------------- sample
def test_sample_follows_the_fitted_gaussians():
    X, y = DATASETS["synthetic"]
    m = QuadraticDiscriminantAnalysis(store_covariance=True).fit(X, y)
    Xs, ys = m.sample(6000, random_state=0)
    freq = np.bincount(ys, minlength=3) / len(ys)
    np.testing.assert_allclose(freq, m.priors_, atol=0.03)
    for k in range(3):
        Z = Xs[ys == k]
        d = Z - m.means_[k]
        maha = np.einsum("ij,jk,ik->i", d, np.linalg.inv(m.covariance_[k]), d)
        # squared Mahalanobis distances of true draws are chi-square(p)
        qs = np.quantile(maha, [0.25, 0.5, 0.75])
        np.testing.assert_allclose(qs, chi2(X.shape[1]).ppf([0.25, 0.5, 0.75]), rtol=0.1)


def test_sample_is_reproducible_and_honours_y():
    X, y = DATASETS["iris"]
    m = LinearDiscriminantAnalysis().fit(X, y)
    a = m.sample(10, random_state=3)
    b = m.sample(10, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(a[0], b[0])
    Xs, ys = m.sample(y=[2, 2, 0], random_state=0)
    assert ys.tolist() == [2, 2, 0] and Xs.shape == (3, 4)
    with pytest.raises(ValueError, match=r"labels \[7\] that are not among the classes"):
        m.sample(y=[7])


# ------------------------------------------------------------- pipelines
def test_pipeline_and_grid_search():
    X, y = DATASETS["wine"]
    pipe = make_pipeline(StandardScaler(), RegularizedDiscriminantAnalysis())
    grid = GridSearchCV(
        pipe,
        {
            "regularizeddiscriminantanalysis__alpha": [0.0, 0.5, 1.0],
            "regularizeddiscriminantanalysis__gamma": [0.0, 0.1],
        },
        cv=3,
    ).fit(X, y)
    assert grid.best_score_ > 0.9
    lda_pipe = make_pipeline(
        LinearDiscriminantAnalysis(n_components=2), QuadraticDiscriminantAnalysis()
    )
    assert lda_pipe.fit(X, y).score(X, y) > 0.95


def test_degenerate_gaussian_density_on_its_subspace():
    """A rank-deficient Gaussian scores points of its subspace like the reduced normal."""
    from bayesrule.models import Gaussian, stacked_log_prob

    rng = np.random.default_rng(0)
    A = rng.normal(size=(4, 2))
    g = Gaussian.from_covariance(np.zeros(4), A @ A.T)
    assert g.rank == 2 and g.cholesky is None
    Z = rng.normal(size=(5, 2))
    X = Z @ A.T  # points in the range
    # density w.r.t. Lebesgue measure on range(A): N(z; 0, I) / sqrt(det(A'A))
    ref = (
        multivariate_normal(np.zeros(2), np.eye(2)).logpdf(Z) - 0.5 * np.linalg.slogdet(A.T @ A)[1]
    )
    np.testing.assert_allclose(g.log_prob(X), ref, rtol=1e-10)
    full = Gaussian.from_cholesky(np.ones(4), np.linalg.cholesky(A @ A.T + np.eye(4)))
    both = stacked_log_prob([g, full], X)
    np.testing.assert_allclose(
        both[:, 1], multivariate_normal(np.ones(4), A @ A.T + np.eye(4)).logpdf(X), rtol=1e-10
    )

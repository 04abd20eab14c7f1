"""The naive Bayes estimators: scikit-learn oracles, API guarantees, missing values, errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import gaussian_kde
from sklearn import naive_bayes as sk
from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesrule as br
from bayesrule.estimators.registry import available
from reference_models import has_reference, reference_proba

_SHORT = {cls: short for short, cls in available().items()}


def _changed(est) -> dict:
    default = est.__class__().get_params()
    return {k: v for k, v in est.get_params().items() if v != default[k]}


def _as_oracles(estimators: list) -> list:
    """The estimators, oracle items where reference_models computes them."""
    return [
        pytest.param(e, marks=pytest.mark.oracle)
        if has_reference(_SHORT[type(e)], _changed(e))
        else e
        for e in estimators
    ]


def _agrees_with_the_reference(est, X, y, model, Xq, repeat=None) -> None:
    """``model`` gives the probabilities of scikit-learn's namesake or a NumPy
    transcription fitted on ``X, y`` (each row ``repeat`` times: integer weights)."""
    if repeat is not None:
        X, y = np.repeat(X, repeat, axis=0), np.repeat(y, repeat)
    reference = reference_proba(_SHORT[type(est)], _changed(est), X, y, Xq)
    if reference is not None:
        np.testing.assert_allclose(model.predict_proba(Xq), reference, rtol=0, atol=1e-9)


ALL = [
    br.GaussianNB(),
    br.DiagonalLDA(),
    br.BernoulliNB(),
    br.MultinomialNB(),
    br.ComplementNB(),
    br.CategoricalNB(),
    br.PoissonNB(),
    br.KernelNB(),
    br.MixedNB(),
]


_NOT_CODES = (
    "the check passes non-integer floats and ignores the categorical tag; CategoricalNB "
    "rejects a non-integer category instead of truncating it (scikit-learn truncates)"
)


def _expected_failed_checks(estimator):
    if isinstance(estimator, br.CategoricalNB):
        return {
            "check_sample_weight_equivalence_on_dense_data": _NOT_CODES,
            "check_classifiers_one_label_sample_weights": _NOT_CODES,
        }
    return {}


@parametrize_with_checks(ALL, expected_failed_checks=_expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# ----------------------------------------------------------------- data sets
@pytest.fixture(scope="module")
def gaussian_data():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(m, 1.0 + m / 4, size=(60, 5)) for m in range(3)])
    y = np.repeat([0, 1, 2], 60)
    return X + 100.0, y  # far from the origin on purpose


@pytest.fixture(scope="module")
def count_data():
    rng = np.random.default_rng(1)
    rates = rng.gamma(2.0, 1.0, size=(3, 8))
    y = rng.integers(0, 3, 200)
    X = rng.poisson(rates[y]).astype(float)
    return X, y


def _data_for(est, gaussian_data, count_data):
    if isinstance(est, (br.GaussianNB, br.DiagonalLDA, br.KernelNB, br.MixedNB)):
        return gaussian_data
    return count_data


# -------------------------------------------------------------- sklearn oracle
ORACLES = [
    (br.GaussianNB(), sk.GaussianNB(), "gauss"),
    (
        br.GaussianNB(var_smoothing=1e-3, priors=[0.2, 0.3, 0.5]),
        sk.GaussianNB(var_smoothing=1e-3, priors=[0.2, 0.3, 0.5]),
        "gauss",
    ),
    (br.BernoulliNB(binarize=2.0), sk.BernoulliNB(binarize=2.0), "count"),
    (
        br.BernoulliNB(alpha=0.3, fit_prior=False),
        sk.BernoulliNB(alpha=0.3, fit_prior=False),
        "count",
    ),
    (br.MultinomialNB(), sk.MultinomialNB(), "count"),
    (
        br.MultinomialNB(alpha=np.linspace(0.1, 2, 8), class_prior=[0.5, 0.25, 0.25]),
        sk.MultinomialNB(alpha=np.linspace(0.1, 2, 8), class_prior=[0.5, 0.25, 0.25]),
        "count",
    ),
    (br.ComplementNB(fit_prior=False), sk.ComplementNB(), "count"),
    (br.ComplementNB(fit_prior=False, norm=True), sk.ComplementNB(norm=True), "count"),
    (br.CategoricalNB(), sk.CategoricalNB(), "count"),
    (
        br.CategoricalNB(alpha=0.5, min_categories=12),
        sk.CategoricalNB(alpha=0.5, min_categories=12),
        "count",
    ),
]


@pytest.mark.parametrize("ours, theirs, data", ORACLES, ids=lambda v: repr(v)[:40])
def test_same_as_sklearn(ours, theirs, data, gaussian_data, count_data):
    X, y = gaussian_data if data == "gauss" else count_data
    w = np.random.default_rng(3).integers(1, 4, y.size).astype(float)
    if data == "gauss":
        w = None  # scikit-learn's epsilon_ ignores sample weights
    ours.fit(X, y, sample_weight=w)
    theirs.fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=0, atol=1e-8)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    for name in (
        "theta_",
        "var_",
        "epsilon_",
        "class_prior_",
        "feature_count_",
        "feature_log_prob_",
        "class_log_prior_",
        "feature_all_",
        "n_categories_",
    ):
        if hasattr(theirs, name) and not (
            name == "class_log_prior_" and isinstance(ours, br.ComplementNB)
        ):
            a, b = getattr(ours, name), getattr(theirs, name)
            for u, v in zip(a, b, strict=True) if isinstance(b, list) else [(a, b)]:
                np.testing.assert_allclose(u, v, rtol=1e-9, atol=1e-12, err_msg=name)


#: parameters bayesrule adds to a scikit-learn namesake (each documented there)
EXTRA_PARAMS = {"CategoricalNB": {"max_categories": 65536}}


def test_same_parameters_as_sklearn():
    # every scikit-learn parameter with its default, plus only the documented extras
    for name in ("GaussianNB", "BernoulliNB", "MultinomialNB", "ComplementNB", "CategoricalNB"):
        ours = getattr(br, name)().get_params()
        if name == "ComplementNB":
            assert ours.pop("add_prior") is False  # bayesrule's option, off by default
        assert ours == {**getattr(sk, name)().get_params(), **EXTRA_PARAMS.get(name, {})}, name


def test_complement_nb_honours_priors(count_data):
    X, y = count_data
    uniform = br.ComplementNB(fit_prior=False, add_prior=True).fit(X, y)
    skewed = br.ComplementNB(class_prior=[0.98, 0.01, 0.01], add_prior=True).fit(X, y)
    assert (skewed.predict(X) == 0).mean() > (uniform.predict(X) == 0).mean()


def test_gaussian_nb_partial_fit_equals_fit_exactly(gaussian_data):
    # scikit-learn's does not (its issue #14054): its epsilon_ comes from the first batch
    X, y = gaussian_data
    X = X.copy()
    X[:, 0] *= np.where(np.arange(X.shape[0]) < 90, 1.0, 50.0)
    whole = br.GaussianNB().fit(X, y)
    order = np.random.default_rng(0).permutation(y.size)
    parts = br.GaussianNB()
    for idx in np.array_split(order, 4):
        parts.partial_fit(X[idx], y[idx], classes=[0, 1, 2])
    assert parts.epsilon_ == pytest.approx(whole.epsilon_, rel=1e-12)
    np.testing.assert_allclose(parts.var_, whole.var_, rtol=1e-10)


# --------------------------------------------------- fit == partial_fit == merge
@pytest.mark.parametrize("est", _as_oracles(ALL), ids=lambda e: type(e).__name__)
def test_fit_partial_fit_merge_agree(est, gaussian_data, count_data):
    X, y = _data_for(est, gaussian_data, count_data)
    X = X[:120] if isinstance(est, br.KernelNB) else X
    y = y[: X.shape[0]]
    w = np.random.default_rng(4).integers(0, 3, y.size).astype(float)
    whole = est.__class__(**est.get_params()).fit(X, y, sample_weight=w)
    parts = est.__class__(**est.get_params())
    halves = np.array_split(np.random.default_rng(0).permutation(y.size), 3)
    for idx in halves:
        parts.partial_fit(X[idx], y[idx], classes=np.unique(y), sample_weight=w[idx])
    a = est.__class__(**est.get_params()).fit(
        X[halves[0]], y[halves[0]], sample_weight=w[halves[0]]
    )
    rest = np.concatenate(halves[1:])
    b = est.__class__(**est.get_params()).fit(X[rest], y[rest], sample_weight=w[rest])
    merged = a.merge(b)
    J = whole.predict_joint_log_proba(X)
    np.testing.assert_allclose(parts.predict_joint_log_proba(X), J, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(merged.predict_joint_log_proba(X), J, rtol=1e-10, atol=1e-10)
    # (on the rows of positive weight: scikit-learn refuses a category it has not seen)
    _agrees_with_the_reference(est, X, y, whole, X[w > 0], repeat=w.astype(int))


@pytest.mark.parametrize("est", _as_oracles(ALL), ids=lambda e: type(e).__name__)
def test_integer_weights_equal_repeated_rows(est, gaussian_data, count_data):
    X, y = _data_for(est, gaussian_data, count_data)
    X, y = X[::3], y[::3]
    w = np.random.default_rng(5).integers(0, 3, y.size)
    a = est.__class__(**est.get_params()).fit(X, y, sample_weight=w.astype(float))
    b = est.__class__(**est.get_params()).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-9, atol=1e-10)
    _agrees_with_the_reference(est, X, y, a, X[w > 0], repeat=w)


# -------------------------------------------------------------- missing values
MISSING = [
    br.GaussianNB(),
    br.DiagonalLDA(bias=True),
    br.BernoulliNB(),
    br.MultinomialNB(),
    br.ComplementNB(),
    br.ComplementNB(norm=True),
    br.CategoricalNB(),
    br.PoissonNB(),
    br.KernelNB(),
]


@pytest.mark.oracle  # the model fitted on the cleaned input (without the feature)
@pytest.mark.parametrize("est", MISSING, ids=lambda e: repr(e))
def test_missing_feature_equals_model_without_it(est, gaussian_data, count_data):
    X, y = _data_for(est, gaussian_data, count_data)
    Xm = X.copy()
    Xm[:, 1] = np.nan
    full = est.__class__(**est.get_params()).fit(X, y)
    without = est.__class__(**est.get_params()).fit(np.delete(X, 1, axis=1), y)
    if isinstance(est, br.DiagonalLDA):
        # the pooled variance is shared, but epsilon_ is the largest total variance
        without = est.__class__(**est.get_params()).fit(np.delete(X, 1, axis=1), y)
        full = est.__class__(**{**est.get_params(), "var_smoothing": 0.0}).fit(X, y)
        without.set_params(var_smoothing=0.0).fit(np.delete(X, 1, axis=1), y)
    if isinstance(est, br.GaussianNB):
        full.set_params(var_smoothing=0.0).fit(X, y)
        without.set_params(var_smoothing=0.0).fit(np.delete(X, 1, axis=1), y)
    np.testing.assert_allclose(
        full.predict_proba(Xm),
        without.predict_proba(np.delete(X, 1, axis=1)),
        rtol=1e-9,
        atol=1e-12,
    )


def test_gaussian_nb_fits_nan_means(gaussian_data):
    X, y = gaussian_data
    X = X.copy()
    X[np.random.default_rng(6).random(X.shape) < 0.2] = np.nan
    m = br.GaussianNB(var_smoothing=0.0).fit(X, y)
    for k in range(3):
        np.testing.assert_allclose(m.theta_[k], np.nanmean(X[y == k], axis=0), rtol=1e-12)
        np.testing.assert_allclose(m.var_[k], np.nanvar(X[y == k], axis=0), rtol=1e-10)


def test_pandas_missing_values_are_missing():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1.0, 2.0, None, 4.0, 5.0, 6.0], "c": ["x", "y", None, "x", "y", "y"]})
    y = [0, 0, 0, 1, 1, 1]
    # declared: on six rows an undeclared numeric column's kind is the data's choice
    m = br.MixedNB(columns=["gaussian", "categorical"]).fit(df, y)
    sub = br.MixedNB(columns=["gaussian"]).fit(df[["a"]].iloc[[0, 1, 3, 4, 5]], [0, 0, 1, 1, 1])
    assert m.kinds_ == ["gaussian", "categorical"]
    np.testing.assert_allclose(
        m.stats_.parts["gaussian"].means[:, 0], sub.stats_.parts["gaussian"].means[:, 0]
    )


# --------------------------------------------------------------------- sparse
@pytest.mark.parametrize(
    "est",
    [br.BernoulliNB(), br.MultinomialNB(), br.ComplementNB(), br.PoissonNB()],
    ids=lambda e: type(e).__name__,
)
def test_sparse_equals_dense(est, count_data):
    X, y = count_data
    S = sp.csr_matrix(X)
    dense = est.__class__(**est.get_params()).fit(X, y)
    sparse = est.__class__(**est.get_params()).fit(S, y)
    np.testing.assert_allclose(
        sparse.predict_proba(S), dense.predict_proba(X), rtol=1e-10, atol=1e-14
    )
    np.testing.assert_allclose(sparse.score_samples(S), dense.score_samples(X), rtol=1e-10)


def test_sparse_input_is_not_densified(count_data, monkeypatch):
    X, y = count_data
    S = sp.csr_matrix(X)

    original = sp.csr_matrix.toarray

    def refuse(self, *args, **kwargs):
        # small (n_classes, n_features) products may be made dense; the data may not
        if self.shape[0] >= X.shape[0]:
            raise AssertionError("densified")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(sp.csr_matrix, "toarray", refuse)
    m = br.MultinomialNB().fit(S, y)
    m.partial_fit(S, y)
    assert m.predict(S).shape == (X.shape[0],)


# ------------------------------------------------------------------ kernel NB
def test_kernel_nb_density_equals_gaussian_kde():
    rng = np.random.default_rng(7)
    X = np.column_stack([rng.normal(size=80), rng.exponential(size=80)])
    y = np.zeros(80, int)
    y[40:] = 1
    m = br.KernelNB(bandwidth="scott", bandwidth_floor=0.0, alpha=0.0, method="exact").fit(X, y)
    T = rng.normal(size=(30, 2))
    expected = np.zeros((30, 2))
    for k in range(2):
        for j in range(2):
            expected[:, k] += gaussian_kde(X[y == k, j], bw_method="scott").logpdf(T[:, j])
    np.testing.assert_allclose(m.predict_joint_log_proba(T), expected + np.log(0.5), rtol=1e-10)
    s = br.KernelNB(bandwidth="silverman", bandwidth_floor=0.0).fit(X, y)
    ref = gaussian_kde(X[y == 0, 0], bw_method="silverman")
    assert s.bandwidth_[0, 0] == pytest.approx(np.sqrt(ref.covariance[0, 0]), rel=1e-12)


def test_kernel_nb_grid_close_to_exact():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(3000, 2)) * [1.0, 3.0]
    y = (X[:, 0] + rng.normal(size=3000) > 0).astype(int)
    exact = br.KernelNB(method="exact").fit(X, y)
    grid = br.KernelNB(method="grid").fit(X, y)
    T = rng.normal(size=(200, 2))
    np.testing.assert_allclose(
        grid.predict_joint_log_proba(T), exact.predict_joint_log_proba(T), rtol=1e-3
    )


def test_kernel_nb_cv_narrows_the_bandwidth_of_clustered_data():
    # Scott's rule oversmooths two tight clusters; cross-validation may go
    # below Scott's bandwidth (down to the floor), and stays near it for normal data
    rng = np.random.default_rng(9)
    clustered = np.concatenate([rng.normal(-5, 0.3, (75, 1)), rng.normal(5, 0.3, (75, 1))])
    normal = rng.normal(size=(150, 1))
    y = np.tile([0, 1], 75)
    for X, below in ((clustered, True), (normal, False)):
        cv = br.KernelNB(bandwidth="cv").fit(X, y).bandwidth_
        scott = br.KernelNB().fit(X, y).bandwidth_
        ratio = cv / scott
        assert np.all(ratio < 0.5) if below else np.all((ratio >= 0.5) & (ratio <= 2.0))


def test_kernel_nb_fixed_bandwidth_is_used_as_is(gaussian_data):
    X, y = gaussian_data
    fixed = br.KernelNB(bandwidth=[0.3, 0.2, 0.3, 0.3, 0.3]).fit(X, y)
    np.testing.assert_array_equal(fixed.bandwidth_[:, 1], 0.2)


# ------------------------------------------------------------------- mixed NB
def test_mixed_nb_on_a_dataframe():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(10)
    n = 300
    y = rng.integers(0, 2, n)
    df = pd.DataFrame(
        {
            "height": rng.normal(170 + 10 * y, 5),
            "visits": rng.poisson(1 + 3 * y),
            "colour": pd.Categorical(np.where(rng.random(n) < 0.2 + 0.6 * y, "red", "blue")),
            "member": rng.random(n) < 0.3 + 0.4 * y,
            "city": np.where(y == 1, "Oslo", "Rome").astype(object),
        }
    )
    m = br.MixedNB(columns={"height": "kernel"}).fit(df, y)
    assert m.kinds_ == ["kernel", "poisson", "categorical", "bernoulli", "categorical"]
    assert m.score(df, y) > 0.95
    new = df.iloc[:3].copy()
    new["city"] = ["Paris", None, "Oslo"]  # unseen and missing
    assert np.isfinite(m.predict_log_proba(new)).all()
    Xs, ys = m.sample(5, random_state=0)
    assert Xs.shape == (5, 5)


def test_mixed_nb_merge_unites_vocabularies():
    pd = pytest.importorskip("pandas")
    a = pd.DataFrame({"c": ["x", "y", "x", "y"], "v": [1.0, 2.0, 3.0, 4.0]})
    b = pd.DataFrame({"c": ["z", "x", "z", "y"], "v": [2.0, 2.5, 3.5, 1.0]})
    ya, yb = [0, 1, 0, 1], [0, 0, 1, 1]
    both = pd.concat([a, b], ignore_index=True)
    whole = br.MixedNB().fit(both, ya + yb)
    merged = br.MixedNB().fit(a, ya).merge(br.MixedNB().fit(b, yb))
    streamed = br.MixedNB().partial_fit(a, ya, classes=[0, 1]).partial_fit(b, yb)
    np.testing.assert_allclose(merged.predict_proba(both), whole.predict_proba(both), rtol=1e-10)
    np.testing.assert_allclose(streamed.predict_proba(both), whole.predict_proba(both), rtol=1e-10)


# ------------------------------------------------------------------ sampling
@pytest.mark.parametrize("est", ALL, ids=lambda e: type(e).__name__)
def test_sample_shape_and_class(est, gaussian_data, count_data):
    X, y = _data_for(est, gaussian_data, count_data)
    m = est.__class__(**est.get_params()).fit(X, y)
    Xs, ys = m.sample(50, random_state=0)
    assert Xs.shape == (50, X.shape[1]) and set(ys) <= set(m.classes_)
    assert np.isfinite(m.score_samples(Xs)).all()


# ---------------------------------------------------------------- bad input
def test_negative_counts_name_the_column(count_data):
    X, y = count_data
    X = X.copy()
    X[4, 3] = -2.0
    for est in (br.MultinomialNB(), br.ComplementNB(), br.PoissonNB()):
        with pytest.raises(ValueError, match=r"Negative values.*column 3.*-2\.0"):
            est.fit(X, y)


def test_bad_categories_name_the_column(count_data):
    X, y = count_data
    for bad in (-1.0, 1.5):
        Xb = X.copy()
        Xb[0, 2] = bad
        with pytest.raises(ValueError, match=rf"column 2 .*{bad}"):
            br.CategoricalNB().fit(Xb, y)


@pytest.mark.parametrize(
    "cls", [br.BernoulliNB, br.MultinomialNB, br.ComplementNB, br.CategoricalNB, br.PoissonNB]
)
def test_negative_alpha(cls, count_data):
    with pytest.raises(ValueError, match="alpha"):
        cls(alpha=-1.0).fit(*count_data)


def test_negative_alpha_array(count_data):
    with pytest.raises(ValueError, match="alpha must be non-negative"):
        br.MultinomialNB(alpha=-np.ones(8)).fit(*count_data)


@pytest.mark.parametrize("bw", [0.0, -1.0, [1.0, 0.0, 1.0, 1.0, 1.0]])
def test_non_positive_bandwidth(bw, gaussian_data):
    with pytest.raises(ValueError, match="bandwidth must be positive"):
        br.KernelNB(bandwidth=bw).fit(*gaussian_data)


def test_unknown_column_in_spec():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [0.0, 1.0]})
    with pytest.raises(ValueError, match="unknown column 'zz'"):
        br.MixedNB(columns={"zz": "kernel"}).fit(df, [0, 1])
    with pytest.raises(ValueError, match="kind 'lognormal'"):
        br.MixedNB(columns={"a": "lognormal"}).fit(df, [0, 1])


@pytest.mark.parametrize("est", MISSING, ids=lambda e: repr(e))
def test_all_missing_feature_in_a_class(est, gaussian_data, count_data):
    X, y = _data_for(est, gaussian_data, count_data)
    X = X.copy()
    X[y == 1, 2] = np.nan
    with pytest.raises(ValueError, match=r"feature 2 is missing .* class 1"):
        est.__class__(**est.get_params()).fit(X, y)


def test_failed_partial_fit_leaves_model_unchanged(count_data):
    X, y = count_data
    m = br.MultinomialNB().partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    before = m.predict_proba(X)
    bad = X[100:].copy()
    bad[0, 0] = -1
    with pytest.raises(ValueError, match="Negative"):
        m.partial_fit(bad, y[100:])
    np.testing.assert_array_equal(m.predict_proba(X), before)


def test_unseen_category_gets_smoothed_probability(count_data):
    X, y = count_data
    m = br.CategoricalNB().fit(X, y)
    T = X[:2].copy()
    T[:, 0] = 1000.0
    lp = m.predict_joint_log_proba(T)
    assert np.isfinite(lp).all()
    N = m.category_count_[0].sum(axis=1)
    unseen = np.log(1.0 / (N + m.n_categories_[0]))
    T2 = T.copy()
    T2[:, 0] = np.nan
    np.testing.assert_allclose(
        lp - m.predict_joint_log_proba(T2), np.broadcast_to(unseen, lp.shape), rtol=1e-12
    )


def test_force_alpha_false_warns(count_data):
    with pytest.warns(UserWarning, match="alpha too small"):
        br.MultinomialNB(alpha=0.0, force_alpha=False).fit(*count_data)

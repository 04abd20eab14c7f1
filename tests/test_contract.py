"""The statistics contract, for every estimator through the one public seam.

A fitted model is its hyperparameters plus its statistics: the statistics of
blocks merged in any order give the model ``fit`` gives on their union;
forgetting a block gives the model fitted without it; computing a block's
statistics never changes the estimator; and the model rebuilt from its
statistics (``from_stats``, a model file) predicts identically.
"""

from __future__ import annotations

import pickle
from functools import reduce

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp
from sklearn.base import clone

import bayesrule
from bayesrule.estimators.registry import available
from bayesrule.stats import StatisticsError
from reference_models import has_reference, reference_proba

ESTIMATORS = sorted(available().items())
IDS = [s for s, _ in ESTIMATORS]
#: the same, as parameters (oracle items where reference_models computes the model)
ALL = [pytest.param(s, c, id=s) for s, c in ESTIMATORS]

#: settings that make each estimator well defined on the small test data
PARAMS: dict[str, dict] = {
    "qda": {"reg_param": 0.1},
    "rda": {"alpha": 0.5, "gamma": 0.1},
    "rdacv": {"alphas": (0.0, 0.5, 1.0), "gammas": (0.1, 0.5), "cv": 3},
}


def _kind(short: str) -> str:
    if short in ("mnb", "cnb", "pnb"):
        return "counts"
    if short == "catnb":
        return "codes"
    return "continuous"


def _data(short: str, n: int = 240, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Data of the kind each family models: counts, category codes or continuous values."""
    rng = np.random.default_rng(seed)
    p = 4
    y = np.repeat(np.array(["a", "b", "c"]), n // 3)
    k = np.searchsorted(np.array(["a", "b", "c"]), y)
    kind = _kind(short)
    if kind == "counts":
        X = rng.poisson(1.0 + 2.0 * k[:, None] * np.arange(1, p + 1) / p, size=(n, p))
    elif kind == "codes":
        X = (rng.integers(0, 3, size=(n, p)) + k[:, None]) % 4
    else:
        X = rng.normal(size=(n, p)) * (1.0 + 0.5 * k[:, None]) + 2.0 * k[:, None]
    X = X.astype(float)
    order = rng.permutation(n)
    return X[order], y[order]


def _estimator(short: str, cls: type):
    return cls(**PARAMS.get(short, {}))


def _with_reference(params: list) -> list:
    """The parametrisations, as oracle items where an independent computation exists."""
    return [
        pytest.param(*p.values, id=p.id, marks=pytest.mark.oracle)
        if has_reference(p.values[0], PARAMS.get(p.values[0], {}))
        else p
        for p in params
    ]


def _agrees_with_the_reference(short, model, X, y, Xq, sample_weight=None, data=None) -> None:
    """The model's probabilities are those of scikit-learn's namesake or a NumPy
    transcription (reference_models) fitted on the same rows; integer weights are the
    rows repeated. ``data``: ``Xq`` in the form the model was fitted with (a table)."""
    if sample_weight is not None:
        repeat = np.asarray(sample_weight).astype(int)
        assert np.array_equal(repeat, sample_weight)
        X, y = np.repeat(X, repeat, axis=0), np.repeat(y, repeat)
    reference = reference_proba(short, PARAMS.get(short, {}), X, y, Xq)
    if reference is not None:
        got = model.predict_proba(Xq if data is None else data)
        np.testing.assert_allclose(got, reference, rtol=0, atol=1e-9)


#: the estimators that do not stream, by design: a cross-validation score or an
#: EM fit needs the rows, so they have no partial_fit, forget or merge of blocks
NOT_STREAMING = {"rdacv", "mda"}
STREAMING = [(s, c) for s, c in ESTIMATORS if s not in NOT_STREAMING]
STREAMING_IDS = [s for s, _ in STREAMING]
ALL = _with_reference(ALL)


def _supports_streaming(short: str) -> bool:
    return short not in NOT_STREAMING


def test_the_streaming_estimators_are_those_named():
    """Every estimator not in NOT_STREAMING streams: partial_fit and forget exist and
    work (an error there fails this test; it is never read as "does not stream")."""
    X, y = np.zeros((4, 2)) + np.arange(4)[:, None] * [1, 2], np.array([0, 0, 1, 1])
    for short, cls in ESTIMATORS:
        est = cls(**PARAMS.get(short, {}))
        if short in NOT_STREAMING:
            assert not hasattr(est, "partial_fit") and not hasattr(est, "forget"), short
            continue
        Xs = np.abs(X).round() if _kind(short) != "continuous" else X
        est.partial_fit(Xs, y, classes=[0, 1])
        est.partial_fit(Xs, y)
        est.forget(Xs[:2], y[:2])
        assert est.class_count_.tolist() == [2, 4], short  # two blocks, less two rows of 0


@pytest.mark.parametrize("short,cls", ALL)
def test_reduce_of_block_statistics_equals_fit(short, cls):
    """from_stats(reduce(merge, [statistics(block)...])) == fit(concatenation)."""
    X, y = _data(short)
    est = _estimator(short, cls)
    whole = clone(est).fit(X, y)
    if not _supports_streaming(short):
        # cross-validation scores need the rows: one block's statistics only
        rebuilt = cls.from_stats(est.statistics(X, y), **est.get_params())
        np.testing.assert_array_equal(rebuilt.predict_proba(X), whole.predict_proba(X))
        with pytest.raises(StatisticsError):
            est.statistics(X, y).merge(est.statistics(X, y))
        return
    # blocks that see different classes: {a, b}, {b, c}, {a, c}
    masks = [np.isin(y, ["a", "b"]), np.isin(y, ["b", "c"]), np.isin(y, ["a", "c"])]
    rows = np.arange(y.size)
    owner = np.full(y.size, -1)
    for b, m in enumerate(masks):
        owner[(owner < 0) & m & (rows % 3 == b)] = b
    owner[owner < 0] = np.where(np.isin(y[owner < 0], ["a", "b"]), 0, 1)
    blocks = [est.statistics(X[owner == b], y[owner == b]) for b in range(3)]
    assert [set(s.classes.tolist()) for s in blocks] == [{"a", "b"}, {"b", "c"}, {"a", "c"}]
    total = reduce(lambda s, t: s.merge(t), blocks)
    rebuilt = cls.from_stats(total, **est.get_params())
    np.testing.assert_allclose(rebuilt.predict_proba(X), whole.predict_proba(X), rtol=0, atol=1e-10)
    np.testing.assert_array_equal(rebuilt.predict(X), whole.predict(X))
    _agrees_with_the_reference(short, rebuilt, X, y, X)


@pytest.mark.parametrize("short,cls", ALL)
def test_statistics_do_not_change_the_estimator(short, cls):
    X, y = _data(short)
    est = _estimator(short, cls)
    before = pickle.dumps(est)
    est.statistics(X, y)
    assert pickle.dumps(est) == before
    est.fit(X[:150], y[:150])
    proba = est.predict_proba(X)  # any lazily built part of the model exists now
    fitted = pickle.dumps(est)
    est.statistics(X[150:], y[150:])
    assert pickle.dumps(est) == fitted
    np.testing.assert_array_equal(est.predict_proba(X), proba)
    _agrees_with_the_reference(short, est, X[:150], y[:150], X)


@pytest.mark.parametrize("short,cls", ALL)
def test_forget_equals_fit_without_the_rows(short, cls):
    X, y = _data(short)
    est = _estimator(short, cls)
    if not _supports_streaming(short):
        with pytest.raises(AttributeError, match="forget"):
            clone(est).fit(X, y).forget(X[:10], y[:10])
        return
    keep = np.arange(y.size) % 4 != 0
    w = 1.0 + (np.arange(y.size) % 3)
    full = clone(est).fit(X, y, sample_weight=w)
    full.forget(X[~keep], y[~keep], sample_weight=w[~keep])
    without = clone(est).fit(X[keep], y[keep], sample_weight=w[keep])
    np.testing.assert_allclose(full.predict_proba(X), without.predict_proba(X), rtol=0, atol=1e-10)
    _agrees_with_the_reference(short, full, X[keep], y[keep], X, sample_weight=w[keep])
    # forgetting keeps the feature ranges (an envelope; see ClassStatistic)
    bounds = (full.stats_.lower, full.stats_.upper)
    assert full.stats_.allclose(without.stats_.with_bounds(*bounds), rtol=1e-9)


@pytest.mark.parametrize("short,cls", STREAMING, ids=STREAMING_IDS)
def test_forget_refuses_what_the_model_does_not_hold(short, cls):
    X, y = _data(short)
    est = _estimator(short, cls)
    est.fit(X, y)
    proba = est.predict_proba(X)
    with pytest.raises(ValueError, match="class|classes"):
        est.forget(X[:3], np.array(["zebra"] * 3))
    one = np.flatnonzero(y == "a")[:2]
    heavy = np.full(one.size, 1e6)
    with pytest.raises(ValueError, match="weight|holds|more"):
        est.forget(X[one], y[one], sample_weight=heavy)
    # a refused forget leaves the model exactly as it was
    np.testing.assert_array_equal(est.predict_proba(X), proba)


@pytest.mark.parametrize("short,cls", STREAMING, ids=STREAMING_IDS)
def test_forgetting_a_whole_class_leaves_it_declared_and_empty(short, cls):
    X, y = _data(short)
    est = _estimator(short, cls)
    est.fit(X, y)
    gone = y == "c"
    est.forget(X[gone], y[gone])
    assert est.classes_.tolist() == ["a", "b", "c"]
    assert est.class_count_[2] == 0
    proba = est.predict_proba(X)
    assert np.all(proba[:, 2] == 0.0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("short,cls", ESTIMATORS, ids=IDS)
def test_merge_of_different_statistic_types_is_one_error(short, cls):
    X, y = _data(short)
    stats = _estimator(short, cls).statistics(X, y)
    other = bayesrule.GaussianNB().statistics(np.abs(X) + 0.5, y)
    if type(other) is type(stats):
        other = bayesrule.MultinomialNB().statistics(np.abs(X), y)
    with pytest.raises(StatisticsError, match="merge"):
        stats.merge(other)


@pytest.mark.parametrize("short,cls", STREAMING, ids=STREAMING_IDS)
def test_changed_parameters_are_validated_before_the_next_derivation(short, cls):
    X, y = _data(short)
    est = _estimator(short, cls).fit(X, y)
    proba = est.predict_proba(X)
    est.set_params(priors=np.array([0.5, 0.5])) if "priors" in est.get_params() else est.set_params(
        class_prior=np.array([0.5, 0.5])
    )
    with pytest.raises(ValueError, match="prior"):
        est.partial_fit(X[:6], y[:6])
    np.testing.assert_array_equal(est.predict_proba(X), proba)


def test_merge_refuses_other_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = _data("gnb")
    a = bayesrule.GaussianNB().fit(pd.DataFrame(X, columns=list("abcd")), y)
    b = bayesrule.GaussianNB().fit(pd.DataFrame(X, columns=list("abce")), y)
    with pytest.raises(ValueError, match="feature names"):
        a.merge(b)


def test_from_stats_takes_feature_names():
    X, y = _data("lda")
    est = bayesrule.LinearDiscriminantAnalysis()
    model = bayesrule.LinearDiscriminantAnalysis.from_stats(
        est.statistics(X, y), feature_names_in=["w", "x", "y", "z"]
    )
    assert model.feature_names_in_.tolist() == ["w", "x", "y", "z"]
    with pytest.raises(ValueError, match="3 names, but the statistics have 4"):
        bayesrule.LinearDiscriminantAnalysis.from_stats(
            est.statistics(X, y), feature_names_in=["w", "x", "y"]
        )


@pytest.mark.parametrize("short,cls", ALL)
def test_class_log_density_and_class_model(short, cls):
    X, y = _data(short)
    est = _estimator(short, cls).fit(X, y)
    dens = est.class_log_density(X)
    joint = est.predict_joint_log_proba(X)
    # scikit-learn's ComplementNB (and ours by default) leaves the priors out
    log_priors = 0.0 if short == "cnb" else np.log(est.priors_)
    if short == "mnb":
        # scikit-learn's MultinomialNB joint leaves out the multinomial coefficient,
        # log(n! / prod x_j!), common to the classes; the class density keeps it
        log_coef = gammaln(X.sum(axis=1) + 1.0) - gammaln(X + 1.0).sum(axis=1)
        log_priors = log_priors - log_coef[:, None]
    np.testing.assert_allclose(dens + log_priors, joint, rtol=1e-10, atol=1e-8)
    # Bayes' rule over the class densities is the reference's posterior
    expected = reference_proba(short, PARAMS.get(short, {}), X, y, X)
    if expected is not None:
        posterior = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
        np.testing.assert_allclose(posterior, expected, rtol=0, atol=1e-9)
    for label in est.classes_:
        model = est.class_model(label)
        draws = model.sample(5, np.random.default_rng(0))
        assert draws.shape == (5, X.shape[1])
    with pytest.raises(ValueError, match="not among the classes"):
        est.class_model("zebra")


def _public_fitted(est) -> dict:
    out = {}
    for name in dir(est):
        if name.startswith("_") or not name.endswith("_") or name.endswith("__"):
            continue
        try:
            out[name] = getattr(est, name)
        except AttributeError:
            continue
    return out


def _assert_equal_values(a, b, where: str) -> None:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, where
        if a.dtype.kind in "fc":
            assert np.array_equal(a, b, equal_nan=True), where
        else:
            assert np.array_equal(a, b), where
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, z) in enumerate(zip(a, b, strict=True)):
            _assert_equal_values(x, z, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            _assert_equal_values(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (int, float, str, bool, np.generic)) or a is None:
        assert (a == b) or (a != a and b != b), where


def _allows_nan(short: str, cls: type) -> bool:
    return _estimator(short, cls).__sklearn_tags__().input_tags.allow_nan


#: every estimator with arrays and frames, and with missing values where it takes
#: them (those that refuse NaN are tested for the refusal in test_input_refusals.py)
ROUND_TRIPS = [
    pytest.param(
        short,
        cls,
        kind,
        id=f"{short}-{kind}",
        # the complete data are compared with the reference as well
        marks=[pytest.mark.oracle]
        if kind != "missing" and has_reference(short, PARAMS.get(short, {}))
        else [],
    )
    for short, cls in ESTIMATORS
    for kind in ("array", "frame", "missing")
    if kind != "missing" or _allows_nan(short, cls)
]


@pytest.mark.parametrize("short,cls,input_kind", ROUND_TRIPS)
def test_model_file_round_trip_keeps_every_output_and_attribute(tmp_path, short, cls, input_kind):
    pd = pytest.importorskip("pandas")
    X, y = _data(short)
    est = _estimator(short, cls)
    if input_kind == "missing":
        X = X.copy()
        X[np.arange(0, y.size, 7), np.arange(0, y.size, 7) % X.shape[1]] = np.nan
    data = pd.DataFrame(X, columns=["w", "x", "y", "z"]) if input_kind != "array" else X
    model = est.fit(data, y)
    loaded = bayesrule.load(bayesrule.save(model, tmp_path / "m.bayesrule"))
    assert type(loaded) is cls
    mine, theirs = _public_fitted(model), _public_fitted(loaded)
    assert set(mine) <= set(theirs) | {"stats_"}
    for name, value in mine.items():
        if name == "stats_":
            assert value.allclose(theirs[name], rtol=0.0)
            continue
        _assert_equal_values(value, theirs[name], name)
    for method in ("predict_proba", "predict", "score_samples", "decision_function", "transform"):
        if hasattr(model, method):
            _assert_equal_values(
                getattr(model, method)(data), getattr(loaded, method)(data), method
            )
    if input_kind != "missing":
        _agrees_with_the_reference(short, loaded, X, y, X, data=data)
    a, _ = model.sample(7, random_state=3)
    b, _ = loaded.sample(7, random_state=3)
    _assert_equal_values(np.asarray(a, dtype=float), np.asarray(b, dtype=float), "sample")

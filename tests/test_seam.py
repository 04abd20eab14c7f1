"""The public fit seam, for every registered estimator.

A backend fits an estimator with ``input_spec``, ``fit_plan`` (its own
``reduce``) and ``fit_statistics`` / ``from_stats`` and nothing else; this
checks that the three give the model ``fit`` gives, that the declared
specification says what ``fit`` does, and that an engine's collections reach
the engine's registered handler. The data of each estimator follow from its
specification (counts, category codes, a DataFrame), so a new estimator is
tested with no edit here.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import bayesrule
from bayesrule._util.dispatch import handler_for, register_handler, unregister_handler
from bayesrule.estimators import InputSpec, Schema, schema_of
from bayesrule.estimators.registry import available
from bayesrule.estimators.seam import summarise
from bayesrule.stats import StatisticsError

ESTIMATORS = sorted(available().items())
IDS = [s for s, _ in ESTIMATORS]

#: settings that make each estimator well defined (and quick) on the small data
PARAMS: dict[str, dict[str, Any]] = {
    "qda": {"reg_param": 0.1},
    "rda": {"alpha": 0.5, "gamma": 0.1},
    "rdacv": {"alphas": (0.0, 0.5, 1.0), "gammas": (0.1, 0.5), "cv": 3},
    "mda": {"n_components": 2, "max_iter": 5},
}

NAMES = ["f0", "f1", "f2", "f3"]


def _estimator(short: str, cls: type) -> Any:
    return cls(**PARAMS.get(short, {}))


def _data(spec: InputSpec, n: int = 240, seed: int = 0) -> tuple[Any, np.ndarray]:
    """Data of the kind the specification asks for, with string column names."""
    rng = np.random.default_rng(seed)
    labels = np.array(["a", "b", "c"])
    y = labels[rng.permutation(np.arange(n) % 3)]
    k = np.searchsorted(labels, y)[:, None]
    if spec.frame:  # one column of each kind MixedNB infers
        return pd.DataFrame(
            {
                "f0": rng.normal(size=n) + 2.0 * k[:, 0],
                "f1": rng.poisson(1.0 + k[:, 0]),
                "f2": pd.Categorical(labels[(rng.integers(0, 2, size=n) + k[:, 0]) % 3]),
                "f3": rng.normal(size=n) * (1.0 + k[:, 0]),
            }
        ), y
    if spec.positive and "code" in spec.values:
        X = (rng.integers(0, 3, size=(n, 4)) + k) % 4
    elif spec.positive:
        X = rng.poisson(1.0 + 2.0 * k * np.arange(1, 5) / 4, size=(n, 4))
    else:
        X = rng.normal(size=(n, 4)) * (1.0 + 0.5 * k) + 2.0 * k
    return pd.DataFrame(X.astype(float), columns=NAMES), y


def _blocks(X: Any, y: np.ndarray, n_blocks: int = 3) -> list[tuple[Any, np.ndarray]]:
    cuts = np.linspace(0, y.size, n_blocks + 1).astype(int)
    return [(X.iloc[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]


def _one_block_only(cls: type) -> bool:
    """Statistics that do not merge (cross-validation scores): the fit needs one block."""
    return "merge" in cls.refusals and not cls.spec.multi_pass


@pytest.mark.parametrize("short,cls", ESTIMATORS, ids=IDS)
def test_fit_plan_then_fit_statistics_equals_fit(short, cls):
    est = _estimator(short, cls)
    X, y = _data(cls.spec)
    whole = clone(est).fit(X, y)
    blocks = [(X, y)] if _one_block_only(cls) else _blocks(X, y)
    stats = est.fit_plan(lambda task: summarise(task, blocks), first_block=blocks[0][0])
    schema = schema_of(X, dtype=np.float64)
    got = clone(est).fit_statistics(stats, schema=schema)
    np.testing.assert_allclose(got.predict_proba(X), whole.predict_proba(X), rtol=0, atol=1e-10)
    np.testing.assert_array_equal(got.predict(X), whole.predict(X))
    np.testing.assert_array_equal(got.feature_names_in_, whole.feature_names_in_)
    assert got.fit_schema().n_features == whole.n_features_in_ == 4
    # the same statistics through from_stats on a new estimator
    built = cls.from_stats(stats, schema=schema, **est.get_params())
    np.testing.assert_array_equal(built.predict_proba(X), got.predict_proba(X))
    np.testing.assert_array_equal(built.feature_names_in_, NAMES)


def test_a_statistic_that_does_not_merge_says_so_through_the_seam():
    cls = available()["rdacv"]
    est = _estimator("rdacv", cls)
    assert _one_block_only(cls)
    X, y = _data(cls.spec)
    with pytest.raises(StatisticsError, match="cross-validation scores cannot be merged"):
        est.fit_plan(lambda task: summarise(task, _blocks(X, y)))


@pytest.mark.parametrize("short,cls", ESTIMATORS, ids=IDS)
def test_the_spec_says_what_fit_does(short, cls):
    spec = _estimator(short, cls).input_spec()
    assert spec.statistic is not None and isinstance(spec.statistic, type)
    assert spec.order in ("C", "F")
    X, y = _data(cls.spec, n=90)
    # NaN is a missing value exactly where the spec allows it
    Xn = X.copy()
    Xn.iloc[4, 0] = np.nan
    if spec.allow_nan:
        assert np.all(np.isfinite(_estimator(short, cls).fit(Xn, y).predict_proba(X)))
    else:
        with pytest.raises(ValueError, match="NaN"):
            _estimator(short, cls).fit(Xn, y)
    # one class is enough exactly where min_classes is 1
    one = np.full(y.size, "a")
    if spec.min_classes <= 1:
        assert _estimator(short, cls).fit(X, one).classes_.tolist() == ["a"]
    else:
        with pytest.raises(ValueError, match=f"at least {spec.min_classes}"):
            _estimator(short, cls).fit(X, one)
    # sparse input is taken exactly where the spec says so
    if not spec.frame:
        Xs = sp.csr_matrix(X.to_numpy())
        if spec.sparse:
            dense = _estimator(short, cls).fit(X.to_numpy(), y).predict_proba(X.to_numpy())
            got = _estimator(short, cls).fit(Xs, y).predict_proba(Xs)
            np.testing.assert_allclose(got, dense, rtol=0, atol=1e-10)
        else:
            with pytest.raises(TypeError, match="[Ss]parse"):
                _estimator(short, cls).fit(Xs, y)
    # the estimator's scikit-learn tags agree with the spec
    tags = _estimator(short, cls).__sklearn_tags__()
    assert tags.input_tags.allow_nan == spec.allow_nan
    assert tags.input_tags.sparse == spec.sparse


@pytest.mark.parametrize("short,cls", ESTIMATORS, ids=IDS)
def test_failed_fit_statistics_leaves_the_estimator_unchanged(short, cls):
    X, y = _data(cls.spec)
    est = _estimator(short, cls).fit(X, y)
    before = pickle.dumps(est)
    stats = est.statistics(X, y)
    for bad in (
        Schema(3, None),  # a feature count the statistics do not have
        Schema(4, np.array(["a", "b"], dtype=object)),  # two names for four features
    ):
        with pytest.raises(ValueError, match="features"):
            est.fit_statistics(stats, schema=bad)
        assert pickle.dumps(est) == before
    # no row has weight (the statistics refuse it at once where they run the fit: MDA)
    with pytest.raises(ValueError, match="weight"):
        zero = est.statistics(X, y, sample_weight=np.zeros(y.size))
        est.fit_statistics(zero, schema=schema_of(X))
    assert pickle.dumps(est) == before


def test_from_stats_takes_the_names_once():
    cls = available()["gnb"]
    X, y = _data(cls.spec)
    stats = cls().statistics(X, y)
    with pytest.raises(ValueError, match="not both"):
        cls.from_stats(stats, schema=schema_of(X), feature_names_in=NAMES)


# ------------------------------------------------------------------ dispatch
class _Held:
    """A collection of a made-up engine: an array the estimators must not read themselves."""

    def __init__(self, data: Any) -> None:
        self.data = data


class _Handler:
    """A made-up engine's handler: records each call and answers from the held data."""

    name = "Held"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def claims(self, *objs: Any) -> bool:
        return any(isinstance(o, _Held) for o in objs)

    def statistics(self, estimator, X, y, sample_weight, classes, *, reset):
        self.calls.append(("statistics", type(estimator).__name__))
        block = (X.data, y) if sample_weight is None else (X.data, y, sample_weight)
        stats = estimator.fit_plan(
            lambda task: summarise(task, [block], classes), first_block=X.data, classes=classes
        )
        return stats, schema_of(X.data)

    def predict(self, estimator, method, X, *args, **kwargs):
        self.calls.append((method, type(estimator).__name__))
        return getattr(estimator, method)(X.data, *args, **kwargs)

    def sample(self, estimator, n_samples, *, y, random_state, chunks):  # pragma: no cover
        raise NotImplementedError


@pytest.fixture
def held():
    handler = _Handler()
    register_handler(handler)
    try:
        yield handler
    finally:
        unregister_handler(handler.name)
    assert handler_for(_Held(None)) is None


@pytest.mark.parametrize("short,cls", ESTIMATORS, ids=IDS)
def test_a_registered_handler_receives_its_collections(held, short, cls):
    X, y = _data(cls.spec)
    ref = _estimator(short, cls).fit(X, y)
    est = _estimator(short, cls).fit(_Held(X), y)
    assert held.calls == [("statistics", cls.__name__)]
    np.testing.assert_array_equal(est.feature_names_in_, NAMES)
    got = est.predict_proba(_Held(X))
    assert held.calls[-1] == ("predict_proba", cls.__name__)
    np.testing.assert_allclose(got, ref.predict_proba(X), rtol=0, atol=1e-10)
    np.testing.assert_array_equal(est.predict(_Held(X)), ref.predict(X))
    assert held.calls[-1] == ("predict", cls.__name__)
    # in-memory data never reaches the handler
    n = len(held.calls)
    est.predict(X)
    assert len(held.calls) == n


@pytest.mark.parametrize("short,cls", ESTIMATORS, ids=IDS)
def test_refused_methods_are_absent_and_say_why(short, cls):
    est = _estimator(short, cls)
    for name in ("partial_fit", "forget", "merge"):
        why = cls.refusals.get(name)
        if why is None:
            assert callable(getattr(est, name)), f"{short} lost {name}"
            continue
        assert not hasattr(est, name) and not hasattr(cls, name)
        with pytest.raises(AttributeError, match=f"{cls.__name__} has no {name}: .*{why[:20]}"):
            getattr(est, name)
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        est.no_such_thing  # noqa: B018


def test_the_fit_schema_and_the_parameters_are_public():
    cls = available()["gnb"]
    X, y = _data(cls.spec)
    est = cls().fit(X.astype(np.float32), y)
    schema = est.fit_schema()
    assert schema == Schema(4, schema.feature_names, np.dtype(np.float32))
    np.testing.assert_array_equal(schema.feature_names, NAMES)
    assert cls().fit(X.to_numpy(), y).fit_schema().feature_names is None
    assert cls().check_params() is not None
    with pytest.raises(ValueError, match="var_smoothing"):
        cls(var_smoothing=-1.0).check_params()
    assert cls().input_spec().statistic is cls.spec.statistic


def test_class_flags_of_an_older_subclass_are_read_into_its_spec():
    gnb = available()["gnb"]
    with pytest.warns(DeprecationWarning, match="declare spec = InputSpec"):

        class OneClassOnly(gnb):
            _min_classes = 2
            _strict_priors = False

    assert OneClassOnly.spec == gnb.spec.replace(min_classes=2, strict_priors=False)
    X, y = _data(gnb.spec)
    with pytest.raises(ValueError, match="at least 2 classes"):
        OneClassOnly().fit(X, np.full(y.size, "a"))
    assert gnb().fit(X, np.full(y.size, "a")).classes_.tolist() == ["a"]


@pytest.mark.parametrize(
    ("target", "source"),
    [
        (bayesrule.BernoulliNB, bayesrule.MixedNB),
        (bayesrule.GaussianNB, bayesrule.PoissonNB),
        (bayesrule.LinearDiscriminantAnalysis, bayesrule.GaussianNB),
        (bayesrule.MultinomialNB, bayesrule.QuadraticDiscriminantAnalysis),
    ],
)
def test_fit_statistics_refuses_another_models_statistics(target, source):
    """Statistics of another kind are refused by name, and the estimator stays unfitted."""
    X = np.random.default_rng(0).poisson(2.0, size=(40, 3)).astype(float)
    y = np.arange(40) % 2
    stats = source().statistics(X, y)
    est = target()
    with pytest.raises(
        TypeError,
        match=rf"{target.__name__}.fit_statistics expects \w+.*got {type(stats).__name__}",
    ):
        est.fit_statistics(stats)
    assert not hasattr(est, "classes_")

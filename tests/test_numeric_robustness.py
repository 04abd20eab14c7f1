"""Posteriors stay finite and normalised for any finite input, over every estimator.

Rows far from every class (an entry of 1e300) have log densities that
overflow; Bayes' rule is then decided by the class that dominates in exact
arithmetic (see ``bayesrule.models._terms``). Fits whose statistics overflow
or underflow raise a ValueError that says so, instead of a model that
answers NaN later.
"""

from __future__ import annotations

import re
import warnings
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import bayesrule as br
from bayesrule.estimators.registry import available

NAMES = sorted(available())
P = 3
TINY = float(np.finfo(np.float64).tiny)
MAX = float(np.finfo(np.float64).max)
#: the values the issue names, across the whole float64 range
EXTREMES = [
    0.0,
    -0.0,
    5e-324,
    -5e-324,
    TINY,
    1e-300,
    -1e-300,
    1.0,
    -1.0,
    1e10,
    1e154,
    -1e154,
    1e200,
    -1e200,
    1e300,
    -1e300,
    MAX / 10,
    -MAX / 10,
]
COUNT_EXTREMES = [v for v in EXTREMES if v >= 0]

SETTINGS = settings(
    max_examples=30,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def kind(name: str) -> str:
    if name in ("mnb", "cnb", "pnb", "bnb"):
        return "counts"
    if name == "catnb":
        return "codes"
    return "real"


def make(name: str) -> Any:
    cls = available()[name]
    if name == "rdacv":
        return cls(alphas=(0.0, 0.5, 1.0), gammas=(0.0, 0.1), cv=2)
    return cls()


def train_data(name: str, seed: int = 0) -> tuple[Any, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], 12)
    if kind(name) == "counts":
        X = rng.poisson([[1, 3, 5]], size=(36, P)).astype(float) + (y[:, None] == [0, 1, 2])
        return X, y
    if kind(name) == "codes":
        return (rng.integers(0, 4, size=(36, P)) + (y[:, None] == [0, 1, 2])).astype(float), y
    X = rng.normal(size=(36, P)) * [1.0, 2.0, 0.5] + y[:, None] * [1.0, -1.0, 0.5]
    X[y == 2] *= 1.7  # different class spreads, for the quadratic models
    return X, y


@cache
def fitted(name: str) -> Any:
    X, y = train_data(name)
    return make(name).fit(X, y)


def check_predictions(model: Any, X: Any) -> None:
    """Every output of predict_proba finite, rows summing to 1; predict its argmax; no NaN score."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proba = model.predict_proba(X)
        pred = model.predict(X)
        score = model.score_samples(X)
    assert np.all(np.isfinite(proba)), proba
    assert np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-9)
    chosen = proba[np.arange(len(pred)), np.searchsorted(model.classes_, pred)]
    np.testing.assert_array_equal(chosen, proba.max(axis=1))
    assert not np.any(np.isnan(score)), score
    assert not np.any(score == np.inf), score


def real_rows() -> Any:
    values = st.one_of(st.sampled_from(EXTREMES), st.floats(allow_nan=False, allow_infinity=False))
    return arrays(np.float64, st.tuples(st.integers(1, 4), st.just(P)), elements=values)


def count_rows() -> Any:
    values = st.one_of(
        st.sampled_from(COUNT_EXTREMES),
        st.floats(min_value=0.0, allow_nan=False, allow_infinity=False),
    )
    return arrays(np.float64, st.tuples(st.integers(1, 4), st.just(P)), elements=values)


def code_rows() -> Any:
    values = st.one_of(st.sampled_from([0, 1, 3, 4, 5, 65535]), st.integers(0, 65535))
    return arrays(np.float64, st.tuples(st.integers(1, 4), st.just(P)), elements=values)


ROWS = {"real": real_rows(), "counts": count_rows(), "codes": code_rows()}


# --------------------------------------------------------------------- rows to predict
@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(data=st.data())
def test_predictions_finite_for_any_finite_row(name: str, data: Any) -> None:
    X = data.draw(ROWS[kind(name)])
    check_predictions(fitted(name), X)


@SETTINGS
@given(
    X=real_rows(),
    ints=arrays(np.int64, st.integers(1, 4), elements=st.integers(0, 2**62)),
)
def test_mixed_dataframe_finite_for_any_finite_row(X: np.ndarray, ints: np.ndarray) -> None:
    model = mixed_frame_model()
    n = min(len(X), len(ints))
    frame = pd.DataFrame(
        {
            "g": X[:n, 0],
            "h": X[:n, 1],
            "c": ints[:n],
            "b": X[:n, 2] > 0,
            "s": np.array(["a", "b", "zz"])[np.arange(n) % 3],
        }
    )
    check_predictions(model, frame)


@cache
def mixed_frame_model() -> Any:
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1, 2], 12)
    frame = pd.DataFrame(
        {
            "g": rng.normal(size=36) + y,
            "h": rng.normal(size=36) * (1 + y),
            "c": rng.poisson(2 + y),
            "b": rng.random(36) < 0.3 + 0.2 * y,
            "s": rng.choice(["a", "b", "c"], size=36),
        }
    )
    return br.MixedNB(columns={"h": "kernel"}).fit(frame, y)


# ---------------------------------------------------------------- extreme fits
SCALES = [1e-300, 1e-200, 1e-150, 1.0, 1e150, 1e200, 1e300]
OFFSETS = [0.0, 1e10, -1e10, 1e154, 1e200, -1e300]
WEIGHTS = [1e-320, 1e-300, 1e-150, 1.0, 1e150, 1e300]


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(
    scale=st.sampled_from(SCALES),
    offset=st.sampled_from(OFFSETS),
    weight=st.sampled_from(WEIGHTS),
    one=st.sampled_from([None, 1e154, 1e300, -1e300, MAX / 10]),
    rows=real_rows(),
)
def test_extreme_fits_raise_or_predict(
    name: str, scale: float, offset: float, weight: float, one: Any, rows: np.ndarray
) -> None:
    X, y = train_data(name)
    w = np.full(len(y), weight)
    if kind(name) == "real":
        X = X * scale + offset
        if one is not None:
            X[0, 0] = one
    elif kind(name) == "counts":
        X = X * scale
        if one is not None:
            X[0, 0] = abs(one)
        rows = np.abs(rows)
    else:
        rows = np.floor(np.abs(rows) % 7)
    if one is not None and kind(name) != "codes":
        w[1] = abs(one)
    model = make(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model.fit(X, y, sample_weight=w)
        except ValueError as exc:
            message = str(exc)
            assert not re.search(r"\bnan\b", message.lower()), message
            assert names_what_is_wrong(message, model), message
            return
    check_predictions(model, np.vstack([X[::6], rows]))


def names_what_is_wrong(message: str, model: Any) -> bool:
    """The refusal names a parameter (the estimator's, or X, y, sample_weight), a
    feature, class, row or column, not only that something went wrong."""
    params = [*model.get_params(deep=False), "X", "y", "sample_weight"]
    named = r"\b(?:" + "|".join(map(re.escape, params)) + r")\b"
    where = r"\b(?:feature|class|row|column) \S+"
    return bool(re.search(named, message) or re.search(where, message))


def test_names_what_is_wrong_refuses_a_vague_message() -> None:
    model = br.GaussianNB()
    assert not names_what_is_wrong("the fit failed because the numbers are too large", model)
    assert names_what_is_wrong("feature 2 has zero variance in class 1", model)
    assert names_what_is_wrong("var_smoothing=0 adds nothing", model)
    assert names_what_is_wrong("rescale X", model)
    assert not names_what_is_wrong("rescale Xs", model)


# ------------------------------------------------------------- regressions
def _blobs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(60, 3)) * (1.0 + 0.5 * y[:, None])
    X[y == 1] += 2
    X[y == 2] -= 2
    return X, y


def _oracle(est: Any) -> Any:
    """RDA-CV's choice of covariance comes from its own search: its expected class is read
    from the fitted model; the others' from NumPy moments of the data (oracle items)."""
    if isinstance(est, br.RegularizedDiscriminantAnalysisCV):
        return est
    return pytest.param(est, marks=pytest.mark.oracle)


def _dominant_class(est: Any, X: np.ndarray, y: np.ndarray, value: float) -> int:
    """The class whose density falls slowest along feature 0 as the value runs away,
    from NumPy moments of the data: the smallest precision of feature 0 (QDA, RDA's
    blend of the class and pooled covariances), the furthest mean (diagonal LDA's shared
    variance) or the widest class (Gaussian naive Bayes; MixedNB on an array is one)."""
    classes = np.unique(y)
    means = np.array([X[y == k, 0].mean() for k in classes])
    if isinstance(est, br.DiagonalLDA):
        return int(np.argmax(np.sign(value) * means))
    if isinstance(est, (br.GaussianNB, br.MixedNB)):
        return int(np.argmax([X[y == k, 0].var() for k in classes]))
    own = [np.cov(X[y == k], rowvar=False) for k in classes]
    if isinstance(est, br.RegularizedDiscriminantAnalysis):  # alpha=0.5, no ridge
        resid = X - np.array([X[y == k].mean(axis=0) for k in classes])[np.searchsorted(classes, y)]
        pooled = resid.T @ resid / (len(y) - len(classes))
        own = [0.5 * c + 0.5 * pooled for c in own]
    return int(np.argmin([np.linalg.inv(c)[0, 0] for c in own]))


@pytest.mark.parametrize("value", [1e200, 1e300, -1e300])
@pytest.mark.parametrize(
    "est",
    [
        _oracle(br.GaussianNB()),
        _oracle(br.DiagonalLDA()),
        _oracle(br.QuadraticDiscriminantAnalysis(store_covariance=True)),
        _oracle(br.RegularizedDiscriminantAnalysis(alpha=0.5, ridge=0.0, store_covariance=True)),
        _oracle(br.RegularizedDiscriminantAnalysisCV(store_covariance=True)),
        _oracle(br.MixedNB()),
    ],
    ids=lambda e: type(e).__name__,
)
def test_extreme_value_picks_the_dominant_class(est: Any, value: float) -> None:
    """One entry of 1e200..1e300: the class that dominates in exact arithmetic wins, no NaN."""
    X, y = _blobs()
    est.fit(X, y)
    row = np.array([[value, 0.0, 0.0]])
    proba = est.predict_proba(row)
    if isinstance(est, br.RegularizedDiscriminantAnalysisCV):
        # the smallest precision along feature 0 makes the slowest-falling density
        expected = np.argmin([np.linalg.inv(c)[0, 0] for c in est.covariance_])
        if est.alpha_ == 0.0:
            expected = np.argmax(np.sign(value) * est.means_[:, 0])  # one shared covariance
    else:
        expected = _dominant_class(est, X, y, value)
    np.testing.assert_array_equal(proba, np.eye(3)[[expected]])
    assert est.predict(row)[0] == est.classes_[np.argmax(proba)]
    score = est.score_samples(row)
    assert not np.isnan(score).any() and not (score == np.inf).any()


def test_mixed_extreme_value_matches_gaussian_nb() -> None:
    X, y = _blobs()
    row = np.array([[1e300, 0.0, 0.0], [-1e250, 1.0, 1e-300]])
    mixed = br.MixedNB().fit(X, y).predict_proba(row)
    np.testing.assert_array_equal(mixed, br.GaussianNB().fit(X, y).predict_proba(row))


@pytest.mark.parametrize("est", [br.DiagonalLDA(), br.RegularizedDiscriminantAnalysisCV()])
def test_value_1e154_rows_sum_to_one(est: Any) -> None:
    X, y = _blobs()
    proba = est.fit(X, y).predict_proba(np.array([[1e154, 0.0, 0.0]]))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    assert np.isin(proba, [0.0, 1.0]).all()


@pytest.mark.parametrize("est", [br.GaussianNB(), br.DiagonalLDA(), br.MixedNB()])
def test_class_constant_rows_sum_to_one(est: Any) -> None:
    """Each class constant: the variances are var_smoothing alone and the log densities huge."""
    y = np.repeat([0, 1, 2], 10)
    X = np.repeat(y[:, None], 3, axis=1).astype(float)
    est.fit(X, y)
    proba = est.predict_proba(np.vstack([X[::10], X[:1] + 0.5, X[:1] + 1e10]))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(est.predict(X), y)


@pytest.mark.parametrize("est", [br.GaussianNB(), br.DiagonalLDA()])
def test_all_constant_rows_raise(est: Any) -> None:
    X, y = np.full((30, 3), 7.0), np.repeat([0, 1, 2], 10)
    with pytest.raises(ValueError, match="variance"):
        est.fit(X, y)


def test_mixed_nb_constant_columns_have_no_say() -> None:
    """MixedNB models column by column: a constant column is the same for every class."""
    X, y = np.full((30, 3), 7.0), np.repeat([0, 0, 1, 2, 2, 2], 5)
    est = br.MixedNB().fit(X, y)
    proba = est.predict_proba(np.array([[7.0, 7.0, 7.0], [7.5, 6.5, 7.0]]))
    np.testing.assert_allclose(proba, np.tile([1 / 3, 1 / 6, 1 / 2], (2, 1)), rtol=1e-9)


def test_lda_far_from_origin_sums_to_one() -> None:
    X, y = _blobs()
    est = br.LinearDiscriminantAnalysis().fit(X + 1e10, y)
    proba = est.predict_proba(X + 1e10)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    reference = br.LinearDiscriminantAnalysis().fit(X, y).predict_proba(X)
    np.testing.assert_allclose(proba, reference, atol=1e-4)


def test_poisson_huge_alpha_is_well_defined() -> None:
    X = np.random.default_rng(0).poisson(3, size=(60, 3)).astype(float)
    y = np.repeat([0, 1, 2], 20)
    proba = br.PoissonNB(alpha=1e300).fit(X, y).predict_proba(X[:5])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    # every rate is alpha / weight: the counts no longer matter, the priors decide
    np.testing.assert_allclose(proba, 1.0 / 3.0, rtol=1e-12)


def test_poisson_huge_alpha_over_many_features_raises() -> None:
    X = np.ones((6, 400))
    with pytest.raises(ValueError, match="alpha"):
        br.PoissonNB(alpha=1e307).fit(X, [0, 0, 0, 1, 1, 1])


def test_poisson_tiny_weights_raise() -> None:
    X = np.random.default_rng(0).poisson(3, size=(60, 3)).astype(float)
    y = np.repeat([0, 1, 2], 20)
    with pytest.raises(ValueError, match="sample_weight"):
        br.PoissonNB().fit(X, y, sample_weight=np.full(60, 1e-320))


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # the statistics' m2
def test_kernel_nb_huge_training_value_raises_naming_the_feature() -> None:
    X, y = _blobs()
    X[0, 1] = 1e300
    with pytest.raises(ValueError, match="feature 1"):
        br.KernelNB().fit(X, y)


@pytest.mark.parametrize("method", ["exact", "grid"])
def test_kernel_nb_far_row_is_not_ignored(method: str) -> None:
    """A far entry used to give NaN that nansum dropped, as if the entry were missing."""
    X, y = _blobs()
    far = np.array([[1e300, 0.0, 0.0], [-1e300, 0.0, 0.0]])
    highest = [X[y == k, 0].max() for k in range(3)]
    lowest = [X[y == k, 0].min() for k in range(3)]
    winners = [np.argmax(highest), np.argmin(lowest)]
    # each class its own kernel density, one bandwidth for all: the class with the
    # largest (smallest) value on feature 0 wins outright
    est = br.KernelNB(bandwidth=1.0, alpha=0.0, method=method, grid_size=16).fit(X, y)
    np.testing.assert_array_equal(est.predict_proba(far), np.eye(3)[winners])
    # smoothed towards the pooled density (the default alpha), every class keeps the
    # pooled kernel's share out there: the same winner, finite shares for the others
    smooth = br.KernelNB(bandwidth=1.0, method=method, grid_size=16).fit(X, y)
    proba = smooth.predict_proba(far)
    assert np.all(np.isfinite(proba)) and np.all(proba > 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(np.argmax(proba, axis=1), winners)


@pytest.mark.parametrize("where", ["value", "weight"])
def test_complement_nb_huge_value_or_weight(where: str) -> None:
    X = np.random.default_rng(0).poisson(3, size=(60, 3)).astype(float)
    y = np.repeat([0, 1, 2], 20)
    w = np.ones(60)
    if where == "value":
        X[0, 0] = 1e300
    else:
        w[0] = 1e300
    est = br.ComplementNB().fit(X, y, sample_weight=w)
    proba = est.predict_proba(X[:10])
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(np.isfinite(est.feature_log_prob_))


def test_score_samples_is_finite_where_representable() -> None:
    """A log density of about -4e307 is representable: no overflow to -inf on the way."""
    X, y = _blobs()
    est = br.DiagonalLDA().fit(X, y)
    score = est.score_samples(np.array([[1e154, 0.0, 0.0], [1e300, 0.0, 0.0]]))
    assert np.isfinite(score[0]) and score[0] < -1e300
    assert score[1] == -np.inf

"""partial_fit, merge, forget and from_stats accept a class with too few rows for its model yet.

QDA's class covariance needs ``p + 1`` rows (2 with regularisation). A stream
sorted by class gives, mid-stream, a class of 1..p rows: the update keeps its
statistics, the model refuses to predict (the derivation's error, naming the
class) until later blocks give the class enough rows, and then equals ``fit``.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayesrule import QuadraticDiscriminantAnalysis

pytestmark = pytest.mark.filterwarnings(
    "ignore::bayesrule.ClassWarning", "ignore::bayesrule.OutOfRangeWarning"
)

P = 3
CLASSES = [0, 1, 2]


def _data(seed: int = 0, n_per_class: int = 20) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3 * n_per_class, P)) + np.repeat(np.arange(3), n_per_class)[:, None]
    return X, np.repeat(CLASSES, n_per_class)


def _assert_equal_models(model: QuadraticDiscriminantAnalysis, fitted, X: np.ndarray) -> None:
    np.testing.assert_array_equal(model.predict(X), fitted.predict(X))
    np.testing.assert_allclose(model.predict_proba(X), fitted.predict_proba(X), rtol=0, atol=1e-10)
    np.testing.assert_array_equal(model.stats_.counts, fitted.stats_.counts)
    np.testing.assert_allclose(model.stats_.weights, fitted.stats_.weights)
    np.testing.assert_allclose(model.stats_.means, fitted.stats_.means, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.stats_.scatter, fitted.stats_.scatter, rtol=1e-10, atol=1e-10)


def _uses(model: QuadraticDiscriminantAnalysis, X: np.ndarray, label: int) -> dict:
    uses = {
        "predict": lambda: model.predict(X),
        "predict_proba": lambda: model.predict_proba(X),
        "predict_log_proba": lambda: model.predict_log_proba(X),
        "decision_function": lambda: model.decision_function(X),
        "score_samples": lambda: model.score_samples(X),
        "score": lambda: model.score(X, np.zeros(len(X), dtype=int)),
        "sample": lambda: model.sample(4, random_state=0),
        "class_model": lambda: model.class_model(label),
        "rotations_": lambda: model.rotations_,
    }
    if model.store_covariance:
        uses["covariance_"] = lambda: np.asarray(model.covariance_)
    return uses


def _assert_cannot_predict(
    model: QuadraticDiscriminantAnalysis, X: np.ndarray, label: int, n: int
) -> None:
    for name, use in _uses(model, X, label).items():
        with pytest.raises(ValueError, match=f"class {label}") as info:
            use()
        text = str(info.value)
        assert f"has {n} row" in text and "needs at least" in text, (name, text)


@pytest.mark.parametrize(("small", "reg_param"), [*((k, 0.0) for k in range(1, P + 1)), (1, 0.1)])
def test_class_sorted_stream_equals_fit(small: int, reg_param: float) -> None:
    """Blocks sorted by class; class 2 has ``small`` rows, then p + 1, then all its rows.

    ``small`` is below what its covariance needs (p + 1 rows, 2 with
    ``reg_param``): the model waits, and ``fit`` on the same rows refuses them.
    """
    X, y = _data()
    fitted = QuadraticDiscriminantAnalysis(reg_param=reg_param, store_covariance=True).fit(X, y)
    model = QuadraticDiscriminantAnalysis(reg_param=reg_param, store_covariance=True)
    cut, enough = 40 + small, 40 + P + 1
    model.partial_fit(X[:cut], y[:cut], classes=CLASSES)
    _assert_cannot_predict(model, X, 2, small)
    for refit in (
        lambda: QuadraticDiscriminantAnalysis(reg_param=reg_param).fit(X[:cut], y[:cut]),
        lambda: QuadraticDiscriminantAnalysis(reg_param=reg_param).fit_statistics(model.stats_),
    ):
        with pytest.raises(ValueError, match="class 2"):
            refit()
    model.partial_fit(X[cut:enough], y[cut:enough])
    np.testing.assert_array_equal(
        model.predict(X),
        QuadraticDiscriminantAnalysis(reg_param=reg_param).fit(X[:enough], y[:enough]).predict(X),
    )
    model.partial_fit(X[enough:], y[enough:])
    _assert_equal_models(model, fitted, X)
    np.testing.assert_allclose(model.covariance_, fitted.covariance_, rtol=1e-10, atol=1e-12)


def test_chunks_of_twenty_and_single_rows_equal_fit() -> None:
    X, y = _data()
    fitted = QuadraticDiscriminantAnalysis().fit(X, y)
    for size in (1, 2, 7, 20, 21):
        model = QuadraticDiscriminantAnalysis()
        for start in range(0, len(y), size):
            model.partial_fit(X[start : start + size], y[start : start + size], classes=CLASSES)
        _assert_equal_models(model, fitted, X)


@settings(max_examples=30, deadline=None)
@given(
    cuts=st.lists(st.integers(1, 59), min_size=1, max_size=8, unique=True),
    seed=st.integers(0, 2**16),
    shuffle=st.booleans(),
)
def test_any_chunking_equals_fit(cuts: list[int], seed: int, shuffle: bool) -> None:
    X, y = _data(seed % 7)
    if shuffle:
        order = np.random.default_rng(seed).permutation(len(y))
        X, y = X[order], y[order]
    fitted = QuadraticDiscriminantAnalysis().fit(X, y)
    model = QuadraticDiscriminantAnalysis()
    bounds = [0, *sorted(cuts), len(y)]
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        model.partial_fit(X[lo:hi], y[lo:hi], classes=CLASSES)
        counts = model.stats_.counts
        small = np.flatnonzero((counts > 0) & (counts <= P))
        if small.size:
            with pytest.raises(ValueError, match="class"):
                model.predict_proba(X)
        else:
            assert np.all(np.isfinite(model.predict_proba(X)))
    _assert_equal_models(model, fitted, X)


def test_merge_of_partial_models() -> None:
    X, y = _data()
    fitted = QuadraticDiscriminantAnalysis().fit(X, y)
    # each part holds 2 rows of class 2 (too few for p = 3); their merge holds 4
    first = np.r_[0:20, 40:42]
    second = np.r_[20:40, 42:44]
    a = QuadraticDiscriminantAnalysis().partial_fit(X[first], y[first], classes=CLASSES)
    b = QuadraticDiscriminantAnalysis().partial_fit(X[second], y[second], classes=CLASSES)
    _assert_cannot_predict(a, X, 2, 2)
    _assert_cannot_predict(b, X, 2, 2)
    merged = a.merge(b)
    merged.predict(X)
    rest = np.r_[44:60]
    merged.partial_fit(X[rest], y[rest])
    _assert_equal_models(merged, fitted, X)
    # a merge that leaves the class too small is accepted, and waits as well
    c = QuadraticDiscriminantAnalysis().partial_fit(X[:20], y[:20], classes=CLASSES)
    waiting = c.merge(
        QuadraticDiscriminantAnalysis().partial_fit(X[40:41], y[40:41], classes=CLASSES)
    )
    _assert_cannot_predict(waiting, X, 2, 1)


def test_forget_and_from_stats_wait_too() -> None:
    X, y = _data()
    model = QuadraticDiscriminantAnalysis().fit(X, y)
    model.forget(X[42:], y[42:])
    _assert_cannot_predict(model, X, 2, 2)
    restored = QuadraticDiscriminantAnalysis.from_stats(model.stats_)
    _assert_cannot_predict(restored, X, 2, 2)
    again = pickle.loads(pickle.dumps(model))
    _assert_cannot_predict(again, X, 2, 2)
    for m in (model, restored, again):
        m.partial_fit(X[42:], y[42:])
        _assert_equal_models(m, QuadraticDiscriminantAnalysis().fit(X, y), X)

"""CategoricalNB's prediction: the blocked gather-and-sum against plain references.

The class model's ``log_prob`` gathers table entries by blocks of rows
(:func:`bayesrule.models.categorical.gather_sum`). It is checked against the
sparse one-hot product it replaced and against a loop over the features
written plainly, over generated shapes, numbers of categories, dtypes,
memory orders, missing entries and codes never seen in training; the
estimator against scikit-learn's CategoricalNB where the models coincide.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB

import bayesrule._util.parallel as parallel
import bayesrule.models.categorical as categorical
from bayesrule import CategoricalNB, config_context


def one_hot_reference(model: categorical.Categorical, X: np.ndarray) -> np.ndarray:
    """The previous path: one sparse one-hot matrix times the (feature, code) table."""
    X = np.asarray(X, dtype=np.float64)
    K, p, C = model.log_probs.shape
    table = np.concatenate([model.log_probs, model.log_unseen[:, :, None]], axis=2)
    table = table.reshape(K, p * (C + 1)).T
    codes = np.minimum(X, C)
    rows, cols = np.nonzero(~np.isnan(X))
    onehot = sp.csr_matrix(
        (np.ones(rows.size), (rows, cols * (C + 1) + codes[rows, cols].astype(np.intp))),
        shape=(X.shape[0], p * (C + 1)),
    )
    return np.asarray(onehot @ table)


def loop_reference(model: categorical.Categorical, X: np.ndarray) -> np.ndarray:
    """``sum_j log p_kj(x_j)`` by a loop over features: unseen codes, NaN adds nothing."""
    X = np.asarray(X, dtype=np.float64)
    K, p, C = model.log_probs.shape
    out = np.zeros((X.shape[0], K))
    for j in range(p):
        seen = ~np.isnan(X[:, j])
        x = X[seen, j].astype(np.intp)
        known = x < C
        terms = np.empty((x.size, K))
        terms[known] = model.log_probs[:, j, x[known]].T
        terms[~known] = model.log_unseen[:, j]
        out[seen] += terms
    return out


@st.composite
def problems(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(training codes, labels, codes to predict, categories per feature)."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    p = draw(st.integers(1, 7))
    K = draw(st.integers(2, 4))
    n_cat = rng.integers(1, draw(st.integers(2, 9)), size=p)
    n_train = draw(st.integers(2 * K, 40))
    n_pred = draw(st.integers(1, 60))
    Xtr = (rng.random((n_train, p)) * n_cat).astype(np.int64)
    y = np.arange(n_train) % K
    Xte = (rng.random((n_pred, p)) * n_cat).astype(np.int64)
    return Xtr, y, Xte, n_cat


def as_drawn(X: np.ndarray, kind: str, order: str) -> np.ndarray:
    dtype = {"int": np.int64, "int32": np.int32, "float": np.float64, "float32": np.float32}[kind]
    return np.asarray(X, dtype=dtype, order=order)


KINDS = st.sampled_from(["int", "int32", "float", "float32"])
ORDERS = st.sampled_from(["C", "F"])


@settings(max_examples=60, deadline=None)
@given(problems(), KINDS, ORDERS, st.floats(0.0, 0.4), st.integers(0, 5))
def test_log_prob_equals_the_one_hot_product(problem, kind, order, nan_share, unseen):
    """Every class model's log_prob equals the old path and the plain loop (1e-10)."""
    Xtr, y, Xte, _ = problem
    model = CategoricalNB().fit(Xtr, y)._model
    rng = np.random.default_rng(Xte.size)
    X = Xte.astype(np.float64)
    if X.size:
        # codes beyond the training ones: the smoothed unseen probability
        X[rng.random(X.shape) < 0.2] += unseen
        if kind.startswith("float"):
            X[rng.random(X.shape) < nan_share] = np.nan
    X = X if kind.startswith("float") else np.nan_to_num(X)
    Xd = as_drawn(X, kind, order)
    got = model.log_prob(Xd)
    np.testing.assert_allclose(got, one_hot_reference(model, Xd), rtol=1e-13, atol=1e-10)
    np.testing.assert_allclose(got, loop_reference(model, Xd), rtol=1e-13, atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(problems(), KINDS, ORDERS)
def test_predictions_equal_scikit_learn(problem, kind, order):
    """Every category declared (min_categories): predictions and probabilities as scikit-learn's."""
    Xtr, y, Xte, n_cat = problem
    ours = CategoricalNB(min_categories=n_cat).fit(as_drawn(Xtr, kind, order), y)
    theirs = SkCategoricalNB(min_categories=n_cat).fit(Xtr, y)
    Xd = as_drawn(Xte, kind, order)
    np.testing.assert_array_equal(ours.predict(Xd), theirs.predict(Xte))
    np.testing.assert_allclose(ours.predict_proba(Xd), theirs.predict_proba(Xte), atol=1e-8)
    np.testing.assert_allclose(
        ours.predict_joint_log_proba(Xd), theirs.predict_joint_log_proba(Xte), rtol=1e-10
    )
    np.testing.assert_allclose(
        ours.predict_log_proba(Xd), theirs.predict_log_proba(Xte), rtol=1e-8, atol=1e-10
    )


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("order", ["C", "F"])
def test_blocks_and_threads_give_the_same_sums(monkeypatch, threads, order):
    """Many small blocks split among threads: the same values as one pass (to the bit)."""
    rng = np.random.default_rng(threads)
    n, p, K, C = 1003, 37, 5, 6
    Xtr = rng.integers(0, C, (300, p))
    model = CategoricalNB().fit(Xtr, np.arange(300) % K)._model
    X = rng.integers(0, C + 3, (n, p)).astype(np.float64)
    X[rng.random(X.shape) < 0.1] = np.nan
    X = np.asarray(X, order=order)
    whole = one_hot_reference(model, X)
    monkeypatch.setattr(categorical, "GATHER_BLOCK", 3 * p * K)  # three rows per block
    monkeypatch.setattr(parallel, "PARALLEL_MIN_WORK", 0)  # threads for any size
    with config_context(n_threads=threads):
        got = model.log_prob(X)
    np.testing.assert_allclose(got, whole, rtol=1e-14, atol=1e-12)


def test_minus_infinity_stays_without_nan():
    """alpha=0: a zero probability is -inf, missing entries beside it add nothing (no NaN)."""
    X = np.array([[0, 1], [1, 0], [0, 0], [1, 1]], dtype=float)
    y = np.array([0, 0, 1, 1])
    model = CategoricalNB(alpha=0, force_alpha=True).fit(
        np.array([[0, 0], [0, 1], [1, 1], [1, 0]]), y
    )
    X = np.vstack([X, [[np.nan, 0], [np.nan, np.nan]]])
    got = model._model.log_prob(X)
    np.testing.assert_array_equal(got, one_hot_reference(model._model, X))
    assert not np.isnan(got).any()
    np.testing.assert_array_equal(got[-1], 0.0)


def test_gather_sum_edges():
    """No rows, or no features: the right shapes (a row of no features has log probability 0)."""
    flat = np.zeros((1, 3))
    assert (
        categorical.gather_sum(flat, np.empty(0), 2.0, np.empty((4, 0))).tolist() == [[0.0] * 3] * 4
    )
    flat = np.arange(12.0).reshape(4, 3)
    assert categorical.gather_sum(flat, np.array([0.0]), 2.0, np.empty((0, 1))).shape == (0, 3)
    got = categorical.gather_sum(flat, np.array([0.0]), 2.0, np.array([[0.0], [5.0], [np.nan]]))
    np.testing.assert_array_equal(got, [[0, 1, 2], [6, 7, 8], [9, 10, 11]])


@pytest.fixture
def fitted() -> CategoricalNB:
    rng = np.random.default_rng(0)
    return CategoricalNB().fit(rng.integers(0, 4, (50, 3)), np.arange(50) % 2)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ([1.5, 0, 0], r"column 0 must hold non-negative integer category codes; got 1.5 at row 0"),
        ([0, -1, 0], r"Negative values in data passed to CategoricalNB .* column 1 \(-1.0\)"),
        ([0, 0, 70000], r"column 2 holds category code 70000 at row 0; codes must be integers"),
        ([np.inf, 0, 0], r"Input X contains infinity at row 0, column 0"),
    ],
)
@pytest.mark.parametrize(
    "method", ["predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba"]
)
def test_refused_codes(fitted, row, message, method):
    """Invalid codes are refused before the gather, naming the column (and row)."""
    X = np.array([[0, 1, 2], row], dtype=float)
    X[0] = [0, 0, 0]
    with pytest.raises(ValueError, match=message.replace("row 0", "row 1")):
        getattr(fitted, method)(X)


def test_sparse_input_is_refused(fitted):
    with pytest.raises(TypeError, match="Sparse data was passed for X, but dense data is required"):
        fitted.predict_proba(sp.csr_matrix(np.ones((2, 3))))


def test_codes_beyond_training_within_the_bound_are_unseen(fitted):
    """A code past the training ones (below max_categories) gets the unseen probability."""
    got = fitted.predict_joint_log_proba(np.array([[9.0, 0, 0], [300.0, 0, 0]]))
    np.testing.assert_array_equal(got[0], got[1])
    model = fitted._model
    expected = loop_reference(model, np.array([[9.0, 0, 0]]))[0] + np.log(fitted.priors_)
    np.testing.assert_allclose(got[0], expected, rtol=1e-13)


@pytest.mark.parametrize("order", ["C", "F"])
def test_class_model_refuses_negative_codes(fitted, order):
    """The class model called directly: a negative code raises rather than reading a neighbour."""
    X = np.asarray([[0.0, 1, 2], [0, -2.0, np.nan]], order=order)
    with pytest.raises(ValueError, match="category codes must be non-negative; got -2"):
        fitted.class_model(0).log_prob(X)


def test_a_category_seen_only_in_rows_of_weight_zero_is_absent():
    # documented in docs/compatibility.md: a row of weight 0 is absent, so the fit
    # equals the fit without it (scikit-learn counts its category in n_categories_);
    # with min_categories the user gives that count, and the two libraries agree
    X = np.array([[0], [1], [1], [0], [2], [1]])
    y = np.array([0, 0, 1, 1, 1, 1])
    w = np.array([1.0, 1, 1, 1, 0, 1])
    ours = CategoricalNB().fit(X, y, sample_weight=w)
    without = CategoricalNB().fit(X[w > 0], y[w > 0])
    assert ours.n_categories_.tolist() == without.n_categories_.tolist() == [2]
    np.testing.assert_allclose(ours.predict_proba(X), without.predict_proba(X), rtol=1e-12)
    theirs = SkCategoricalNB().fit(X, y, sample_weight=w)
    assert theirs.n_categories_.tolist() == [3]
    given = CategoricalNB(min_categories=3).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(given.predict_proba(X), theirs.predict_proba(X), rtol=1e-10)

"""The fast prediction paths against the formulas they replace.

* QDA / RDA: :class:`bayesrule.models.gaussian.TriangularStack` (the
  classes' triangular whitenings stacked by column blocks, one product per
  block for all classes) against each Gaussian's own ``log_prob``.
* LDA's ``decision_function`` in one product against the general path and
  scikit-learn's ``X @ coef_.T + intercept_``.
* Predictions under a BLAS thread budget of one (a busy machine) against
  the default.

Equal predictions, probabilities to 1e-10, over generated shapes, dtypes
and memory orders; every row finite and summing to 1; NaN reported as before.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import log_softmax

import bayesrule as br
from bayesrule.models.gaussian import TriangularStack

SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def gaussian_classes(seed: int, n: int, p: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``k`` Gaussian classes with their own covariances, every class present."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    means = rng.normal(0.0, 2.0, size=(k, p))
    mix = rng.normal(size=(k, p, p)) / np.sqrt(p)
    X = means[y] + np.einsum("nq,npq->np", rng.standard_normal((n, p)), mix[y])
    X += 0.3 * rng.standard_normal((n, p))
    return X, y


def old_log_prob(model: br.QuadraticDiscriminantAnalysis, X: np.ndarray) -> np.ndarray:
    """Each class's Gaussian on its own (the formula before the stacked path)."""
    return np.column_stack([g.log_prob(np.asarray(X, dtype=float)) for g in model._model.gaussians])


@pytest.fixture
def small_blocks(monkeypatch):
    """Column blocks of 3 and row blocks of a few rows, so that small data use several."""
    monkeypatch.setattr(TriangularStack, "BLOCK_COLUMNS", 3)
    monkeypatch.setattr(TriangularStack, "BLOCK_ENTRIES", 64)


shapes = st.tuples(
    st.integers(0, 2**32 - 1),  # seed
    st.integers(2, 40),  # features
    st.integers(2, 5),  # classes
    st.sampled_from([np.float64, np.float32]),
    st.sampled_from(["C", "F"]),
)


@SETTINGS
@given(case=shapes, rda=st.booleans())
def test_stacked_triangles_match_each_gaussian(small_blocks, case, rda):
    seed, p, k, dtype, order = case
    X, y = gaussian_classes(seed, 30 * k + 3 * p, p, k)
    model = (
        br.RegularizedDiscriminantAnalysis(alpha=0.7, gamma=0.1)
        if rda
        else br.QuadraticDiscriminantAnalysis(reg_param=0.1)
    ).fit(X, y)
    Xt = np.asarray(gaussian_classes(seed + 1, 37, p, k)[0], dtype=dtype, order=order)
    stack = TriangularStack.of(model._model.gaussians)
    assert stack is not None
    assert len(stack.blocks) == min(TriangularStack.MAX_PARTS, max(1, round(p / 3)))
    new = model._model.log_prob(Xt)
    old = old_log_prob(model, Xt)
    assert new.shape == (37, k) and np.all(np.isfinite(new))
    np.testing.assert_allclose(new, old, rtol=1e-10, atol=1e-9 * max(1.0, np.abs(old).max()))
    # the estimator's outputs from the same values
    priors = np.log(model.priors_)
    expected = log_softmax(old + priors, axis=1)
    proba = model.predict_proba(Xt)
    np.testing.assert_allclose(proba, np.exp(expected), atol=1e-10)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(np.isfinite(model.predict_log_proba(Xt)))
    top = np.sort(expected, axis=1)
    clear = top[:, -1] - top[:, -2] > 1e-8  # rows without a tie
    assert np.array_equal(
        model.predict(Xt)[clear], model.classes_[np.argmax(expected, axis=1)][clear]
    )


def test_stack_multiply_adds_near_half_of_a_full_rotation():
    rng = np.random.default_rng(0)
    chol = [np.tril(rng.normal(size=(200, 200)), -1) + np.eye(200) * (1 + i) for i in range(3)]
    stack = TriangularStack.of([br.models.Gaussian.from_cholesky(np.zeros(200), c) for c in chol])
    assert stack is not None
    full = 3 * 200 * 200
    triangle = 3 * 200 * 201 / 2
    assert triangle <= stack.multiply_adds <= 0.8 * full
    # the default blocks: 784 features give 8 parts, 9/16 of a full rotation
    assert round(784 / TriangularStack.BLOCK_COLUMNS) >= TriangularStack.MAX_PARTS


def test_stacked_path_matches_scikit_learn(small_blocks):
    from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as SkQDA

    X, y = gaussian_classes(3, 600, 25, 4)
    ours = br.QuadraticDiscriminantAnalysis(reg_param=0.05, bias=True).fit(X, y)
    theirs = SkQDA(reg_param=0.05).fit(X, y)
    Xt = gaussian_classes(4, 200, 25, 4)[0]
    np.testing.assert_array_equal(ours.predict(Xt), theirs.predict(Xt))
    np.testing.assert_allclose(ours.predict_proba(Xt), theirs.predict_proba(Xt), atol=1e-8)


def test_stacked_path_reports_nan_by_row():
    X, y = gaussian_classes(1, 200, 6, 3)
    model = br.QuadraticDiscriminantAnalysis(reg_param=0.1).fit(X, y)
    Xt = X[:10].copy()
    Xt[4, 2] = np.nan
    with pytest.raises(ValueError, match=r"row 4"):
        model.predict_proba(Xt)


def test_rank_deficient_gaussians_keep_their_own_path():
    rng = np.random.default_rng(0)
    g = [
        br.models.Gaussian.from_covariance(np.zeros(3), np.diag([1.0, 2.0, 0.0])),
        br.models.Gaussian.from_covariance(np.ones(3), np.eye(3)),
    ]
    assert TriangularStack.of(g) is None
    X = rng.standard_normal((5, 3))
    out = br.models.stacked_log_prob(g, X)
    np.testing.assert_allclose(out[:, 1], g[1].log_prob(X))


# ------------------------------------------------------------------ LDA


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    p=st.integers(1, 30),
    k=st.integers(3, 6),
    dtype=st.sampled_from([np.float64, np.float32]),
    order=st.sampled_from(["C", "F"]),
)
def test_lda_decision_in_one_product(seed, p, k, dtype, order):
    X, y = gaussian_classes(seed, 20 * k + 2 * p, p, k)
    lda = br.LinearDiscriminantAnalysis().fit(X, y)
    Xt = np.asarray(gaussian_classes(seed + 1, 25, p, k)[0], dtype=dtype, order=order)
    fast = lda.decision_function(Xt)
    assert lda._one_product_decision(lda._input(Xt, reset=False)) is not None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(type(lda), "_one_product_decision", lambda self, Xv, terms=None: None)
        general = lda.decision_function(Xt)
    scale = max(1.0, float(np.abs(general).max()))
    np.testing.assert_allclose(fast, general, rtol=1e-10, atol=1e-10 * scale)
    sk_form = np.asarray(Xt, dtype=float) @ lda.coef_.T + lda.intercept_
    np.testing.assert_allclose(fast, sk_form, rtol=1e-9, atol=1e-9 * scale)
    assert np.array_equal(lda.classes_[np.argmax(fast, axis=1)], lda.predict(Xt))


def test_lda_decision_one_product_refreshed_by_a_refit():
    X, y = gaussian_classes(5, 300, 4, 3)
    lda = br.LinearDiscriminantAnalysis()
    first = lda.fit(X, y).decision_function(X[:5])
    second = lda.fit(X + 1.0, y).decision_function(X[:5])
    assert not np.allclose(first, second)
    np.testing.assert_allclose(second, X[:5] @ lda.coef_.T + lda.intercept_, rtol=1e-9)


def test_lda_decision_not_finite_takes_the_general_path():
    X, y = gaussian_classes(6, 300, 4, 3)
    lda = br.LinearDiscriminantAnalysis().fit(X, y)
    Xt = X[:6].copy()
    Xt[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"row 2"):
        lda.decision_function(Xt)


# ------------------------------------------------------------ thread budget

MODELS = [
    lambda: br.LinearDiscriminantAnalysis(),
    lambda: br.QuadraticDiscriminantAnalysis(reg_param=0.1),
    lambda: br.GaussianNB(),
    lambda: br.MultinomialNB(),
    lambda: br.ComplementNB(),
    lambda: br.BernoulliNB(binarize=1.0),
]


@pytest.mark.parametrize("make", MODELS)
def test_one_thread_gives_the_same_predictions(make, monkeypatch):
    from bayesrule._util import parallel

    monkeypatch.setattr(parallel, "PARALLEL_MIN_WORK", 1.0)  # every prediction is budgeted
    X, y = gaussian_classes(7, 1000, 30, 4)
    X = np.abs(X)  # counts for the multinomial models
    model = make().fit(X, y)
    Xt = np.abs(gaussian_classes(8, 3000, 30, 4)[0])
    default = model.predict_proba(Xt)
    with br.config_context(n_threads=1):
        single = model.predict_proba(Xt)
    np.testing.assert_allclose(single, default, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(default.sum(axis=1), 1.0, atol=1e-12)


# ------------------------------------------------------------------ rows_dot


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 1500),
    p=st.integers(1, 30),
    k=st.integers(1, 12),
    dtype=st.sampled_from([np.float64, np.float32, np.int64]),
    order=st.sampled_from(["C", "F"]),
    threads=st.sampled_from([None, 1]),
)
def test_rows_dot_is_the_float64_product(seed, n, p, k, dtype, order, threads):
    from bayesrule._util.parallel import blas_cap
    from bayesrule._util.products import rows_dot

    rng = np.random.default_rng(seed)
    X = np.asarray(rng.normal(0, 3, size=(n, p)), dtype=dtype, order=order)
    A = rng.normal(size=(k, p))
    with blas_cap(threads):
        out = rows_dot(X, A)
    expected = np.asarray(X, dtype=np.float64) @ A.T
    assert out.shape == (n, k) and out.dtype == np.float64
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


def test_float32_and_binarized_predictions_match_float64():
    X, y = gaussian_classes(9, 2000, 20, 3)
    X = np.abs(X)
    for make in (br.MultinomialNB, br.ComplementNB, lambda: br.BernoulliNB(binarize=1.0)):
        model = make().fit(X, y)
        Xt = np.abs(gaussian_classes(10, 1300, 20, 3)[0])
        Xt32 = Xt.astype(np.float32)
        p32 = model.predict_proba(Xt32)
        p64 = model.predict_proba(Xt32.astype(np.float64))
        # the float32 values converted exactly: the same products
        np.testing.assert_allclose(p32, p64, atol=1e-10)
        np.testing.assert_allclose(
            model.predict_joint_log_proba(Xt32),
            model.predict_joint_log_proba(Xt32.astype(np.float64)),
            rtol=1e-12,
        )
        assert np.array_equal(model.predict(Xt32), model.predict(Xt32.astype(np.float64)))


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 40),
    p=st.integers(1, 25),
    rate=st.sampled_from([0.05, 0.5, 4.0]),
    fractional=st.booleans(),
    dtype=st.sampled_from([np.float64, np.float32]),
)
def test_multinomial_coefficient_from_non_zero_entries(seed, n, p, rate, fractional, dtype):
    from scipy.special import gammaln

    from bayesrule.models.multinomial import log_multinomial_coefficient

    rng = np.random.default_rng(seed)
    X = rng.poisson(rate, size=(n, p)).astype(np.float64)
    if fractional:
        X *= rng.random((n, p))
    X = X.astype(dtype)
    X64 = X.astype(np.float64)
    expected = gammaln(X64.sum(axis=1) + 1.0) - gammaln(X64 + 1.0).sum(axis=1)
    out = log_multinomial_coefficient(X)
    assert out.shape == (n,) and np.all(np.isfinite(out))
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-10)


def test_prediction_threads_follow_the_settings_not_the_load(monkeypatch):
    from bayesrule._util import parallel

    big = 10 * parallel.PARALLEL_MIN_WORK
    assert parallel.prediction_threads(1.0) == 1
    with br.config_context(n_threads=1):
        assert parallel.prediction_threads(big) == 1
    with br.config_context(n_threads=3):
        assert parallel.prediction_threads(big) == 3
    # a busy machine (no idle core) keeps the BLAS's thread count
    monkeypatch.setattr(parallel, "idle_cores", lambda: 1)
    expected = max(1, min(parallel.blas_threads(), parallel.available_cores()))
    assert parallel.prediction_threads(big) == expected
    assert parallel.thread_count(big) == 1


def test_stacked_path_on_threads_matches_one_thread(small_blocks, monkeypatch):
    from bayesrule._util import parallel

    X, y = gaussian_classes(11, 600, 12, 3)
    model = br.QuadraticDiscriminantAnalysis(reg_param=0.1).fit(X, y)
    Xt = gaussian_classes(12, 500, 12, 3)[0]
    with br.config_context(n_threads=1):
        single = model.predict_proba(Xt)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_WORK", 1.0)  # the row blocks on threads
    with br.config_context(n_threads=2):
        threaded = model.predict_proba(Xt)
    np.testing.assert_array_equal(threaded, single)

"""The count models' prediction paths.

* :func:`bayesrule._util.products.rows_dot` takes the transposed shape for
  narrow rows also on a busy machine: equal to ``X @ A.T``, and
  MultinomialNB / ComplementNB / BernoulliNB predictions under a simulated
  busy machine equal those of an idle one (equal predictions, probabilities
  to 1e-10, over generated shapes, dtypes, memory orders and missing entries).
* MultinomialNB / ComplementNB's sign check fused with the product of wide
  dense rows (blocks shared by two threads) gives the separate check's
  predictions, probabilities (1e-10) and refusals, word for word.
* The refusals of negative counts and infinities name the row or column.
* MultinomialNB's ``predict_joint_log_proba`` is scikit-learn's (no
  multinomial coefficient); ``score_samples`` keeps the full density.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import gammaln, logsumexp
from sklearn import naive_bayes as sknb

import bayesrule as br
from _generated import poisson_counts as counts
from _generated import runs_of
from bayesrule._util import parallel, products
from bayesrule._util.row_sample import run_rows

SETTINGS = settings(max_examples=30, deadline=None)
COUNT_MODELS = ["MultinomialNB", "ComplementNB"]


def busy(mp: pytest.MonkeyPatch) -> None:
    """A machine whose cores are all taken: rows_dot's large products see no idle core."""
    mp.setattr(parallel, "PARALLEL_MIN_WORK", 0.0)
    mp.setattr(products, "PARALLEL_MIN_WORK", 0.0)
    mp.setattr(products, "idle_cores", lambda: 1)
    mp.setattr(products, "free_cores", lambda: 1)


# ------------------------------------------------------------------- rows_dot
@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 300),
    p=st.integers(1, 100),
    k=st.integers(1, 6),
    dtype=st.sampled_from([np.float64, np.float32]),
    order=st.sampled_from(["C", "F"]),
    loaded=st.booleans(),
)
def test_rows_dot_is_the_product_in_every_shape(seed, n, p, k, dtype, order, loaded):
    rng = np.random.default_rng(seed)
    X = np.asarray(rng.normal(size=(n, p)), dtype=dtype, order=order)
    A = rng.normal(size=(k, p))
    with pytest.MonkeyPatch.context() as mp:
        if loaded:
            busy(mp)
        out = products.rows_dot(X, A)
    assert out.shape == (n, k) and out.dtype == np.float64
    expected = np.asarray(X, dtype=np.float64) @ A.T
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_narrow_rows_take_the_transposed_shape_on_a_busy_machine():
    p = products.NARROW
    with pytest.MonkeyPatch.context() as mp:
        busy(mp)
        narrow = products.rows_dot(np.ones((1000, p)), np.ones((3, p)))
        wide = products.rows_dot(np.ones((1000, p + 1)), np.ones((3, p + 1)))
    assert narrow.flags.f_contiguous and not narrow.flags.c_contiguous  # (A @ X.T).T
    if parallel.blas_threads() > 1:
        assert wide.flags.c_contiguous  # X @ A.T, the shape for wide rows when busy
    np.testing.assert_array_equal(narrow, np.full((1000, 3), float(p)))


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 200),
    p=st.integers(2, 25),
    k=st.integers(2, 5),
    dtype=st.sampled_from([np.float64, np.float32]),
    order=st.sampled_from(["C", "F"]),
    missing=st.sampled_from([0.0, 0.1]),
    name=st.sampled_from([*COUNT_MODELS, "BernoulliNB"]),
)
def test_count_predictions_on_a_busy_machine_equal_the_idle_ones(
    seed, n, p, k, dtype, order, missing, name
):
    X, y = counts(seed, 4 * k + n, p, k)
    est = getattr(br, name)().fit(X, y)
    rng = np.random.default_rng(seed + 1)
    Xt = np.asarray(counts(seed + 2, n, p, k)[0], dtype=dtype, order=order)
    if missing:
        Xt[rng.random(Xt.shape) < missing] = np.nan
    methods = ["predict_proba", "predict_log_proba", "predict_joint_log_proba", "score_samples"]
    methods = [m for m in methods if hasattr(est, m)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idle = {m: getattr(est, m)(Xt) for m in ["predict", *methods]}
        with pytest.MonkeyPatch.context() as mp:
            busy(mp)
            loaded = {m: getattr(est, m)(Xt) for m in ["predict", *methods]}
    np.testing.assert_array_equal(loaded["predict"], idle["predict"])
    for m in methods:
        np.testing.assert_allclose(loaded[m], idle[m], rtol=1e-10, atol=1e-10, err_msg=m)
    proba = loaded["predict_proba"]
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("name", COUNT_MODELS)
def test_sparse_counts_predict_as_dense(name):
    import scipy.sparse as sp

    X, y = counts(3, 300, 12, 3)
    est = getattr(br, name)().fit(X, y)
    np.testing.assert_allclose(
        est.predict_proba(sp.csr_matrix(X)), est.predict_proba(X), rtol=1e-10, atol=1e-12
    )


# ------------------------------------------------------------------ refusals
def negative_message(name: str, column: str, value: float) -> str:
    return re.escape(
        f"Negative values in data passed to {name} (input X). The first is in column "
        f"{column} ({value!r}); counts must be non-negative."
    )


@pytest.mark.parametrize("name", COUNT_MODELS)
@pytest.mark.parametrize(
    "method",
    ["predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba", "score_samples"],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("nan_elsewhere", [False, True])
def test_negative_counts_are_refused_naming_the_first_column(
    name, method, dtype, order, nan_elsewhere
):
    X, y = counts(0, 200, 6, 3)
    est = getattr(br, name)().fit(X, y)
    Xt = np.array(X[:150], dtype=dtype, order=order)
    Xt[40, 4] = -2.0
    Xt[90, 1] = -3.0  # a later row: the first in row order is reported
    if nan_elsewhere:
        Xt[10, 2] = np.nan  # missing: the negative values are still found
    with pytest.raises(ValueError, match=negative_message(name, "4", -2.0)):
        getattr(est, method)(Xt)


@pytest.mark.parametrize("name", COUNT_MODELS)
def test_negative_counts_name_the_feature(name):
    pd = pytest.importorskip("pandas")
    X, y = counts(1, 100, 3, 2)
    cols = ["apples", "pears", "plums"]
    est = getattr(br, name)().fit(pd.DataFrame(X, columns=cols), y)
    bad = X.copy()
    bad[5, 2] = -1.0
    with pytest.raises(ValueError, match=negative_message(name, "'plums'", -1.0)):
        est.predict(pd.DataFrame(bad, columns=cols))


@pytest.mark.parametrize("name", COUNT_MODELS)
@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinite_counts_are_refused_by_row_and_column(name, value):
    X, y = counts(2, 100, 4, 2)
    est = getattr(br, name)().fit(X, y)
    bad = X.copy()
    bad[7, 3] = value
    with pytest.raises(ValueError, match="X contains infinity at row 7, column 3"):
        est.predict_proba(bad)


# ------------------------------------------- MultinomialNB's joint log likelihood
@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 120),
    p=st.integers(2, 30),
    k=st.integers(2, 5),
    dtype=st.sampled_from([np.float64, np.float32]),
)
def test_multinomial_joint_log_proba_is_sklearns(seed, n, p, k, dtype):
    X, y = counts(seed, 4 * k + n, p, k)
    X = X.astype(dtype)
    ours, theirs = br.MultinomialNB().fit(X, y), sknb.MultinomialNB().fit(X, y)
    jll = ours.predict_joint_log_proba(X)
    np.testing.assert_allclose(
        jll, theirs.predict_joint_log_proba(X), rtol=1e-5 if dtype == np.float32 else 1e-10
    )
    # score_samples is the full log density: the coefficient is added back
    X64 = X.astype(np.float64)
    coef = gammaln(X64.sum(axis=1) + 1) - gammaln(X64 + 1).sum(axis=1)
    full = ours.class_log_density(X) + np.log(ours.priors_)
    np.testing.assert_allclose(full, jll + coef[:, None], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ours.score_samples(X), logsumexp(full, axis=1), rtol=1e-9)


def test_multinomial_joint_log_proba_of_far_rows_is_never_nan():
    X, y = counts(5, 200, 5, 3)
    est = br.MultinomialNB().fit(X, y)
    far = np.array(X[:4])
    far[0] = 1e300  # the product overflows: repaired from scaled terms
    far[1, :2] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jll = est.predict_joint_log_proba(far)
        score = est.score_samples(far)
    assert not np.any(np.isnan(jll)) and not np.any(np.isnan(score))
    assert np.all(jll[0] < -1e300)
    # the same as scikit-learn's wherever the product itself is finite
    theirs = sknb.MultinomialNB().fit(X, y)
    np.testing.assert_allclose(jll[2:], theirs.predict_joint_log_proba(far[2:]), rtol=1e-10)


# ------------------------------------------- the sign check fused with the product
METHODS = ["predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba"]


def small_blocks(mp: pytest.MonkeyPatch, *, fused: bool = True) -> None:
    """Make small tables take the fused, blocked path (blocks of 7 rows, > 4 features)."""
    mp.setattr(products, "NARROW", 4)
    mp.setattr(products, "FUSED_ROWS", 7)
    mp.setattr(products, "PARALLEL_MIN_WORK", 0.0)
    mp.setattr(parallel, "PARALLEL_MIN_WORK", 0.0)
    if not fused:
        mp.setattr(products, "fusable", lambda X, k: False)
    else:  # the blocked path of a busy machine, also where the BLAS finds its cores
        mp.setattr(products, "blas_has_the_cores", lambda: False)


def all_methods(est, X, methods=METHODS):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {m: getattr(est, m)(X) for m in methods if hasattr(est, m)}


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.sampled_from([1, 6, 7, 8, 13, 14, 15, 21, 22, 50]),
    p=st.integers(5, 12),
    k=st.integers(2, 5),
    dtype=st.sampled_from([np.float64, np.float32]),
    order=st.sampled_from(["C", "F"]),
    missing=st.sampled_from([0.0, 0.1]),
    threads=st.sampled_from([None, 1]),
    name=st.sampled_from(COUNT_MODELS),
)
def test_fused_predictions_equal_the_separate_check(
    seed, n, p, k, dtype, order, missing, threads, name
):
    X, y = counts(seed, 4 * k + n, p, k)
    est = getattr(br, name)().fit(X, y)
    Xt = np.asarray(counts(seed + 2, n, p, k)[0], dtype=dtype, order=order)
    if missing:
        Xt[np.random.default_rng(seed).random(Xt.shape) < missing] = np.nan
    methods = [*METHODS, "score_samples"]
    calls = []
    with pytest.MonkeyPatch.context() as mp:
        small_blocks(mp, fused=False)
        before = all_methods(est, Xt, methods)
    with pytest.MonkeyPatch.context() as mp, br.config_context(n_threads=threads or "auto"):
        small_blocks(mp)
        real = products._fused_rows_dot
        mp.setattr(products, "_fused_rows_dot", lambda X, A: calls.append(1) or real(X, A))
        after = all_methods(est, Xt, methods)
    # the fused path is taken exactly where it applies: C-ordered float64 rows
    assert bool(calls) == (dtype == np.float64 and order == "C")
    np.testing.assert_array_equal(after["predict"], before["predict"])
    for m in methods[1:]:
        np.testing.assert_allclose(after[m], before[m], rtol=1e-10, atol=1e-10, err_msg=m)
    np.testing.assert_allclose(after["predict_proba"].sum(axis=1), 1.0, rtol=1e-9)


def refusal(est, X, method):
    with pytest.raises(ValueError) as info:
        getattr(est, method)(X)
    return str(info.value)


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.sampled_from([7, 8, 20, 35]),
    bad=st.lists(st.tuples(st.integers(0, 34), st.integers(0, 7)), min_size=1, max_size=3),
    value=st.sampled_from([-1.0, -0.5, -1e300, np.inf, -np.inf]),
    nan_elsewhere=st.booleans(),
    threads=st.sampled_from([None, 1]),
    method=st.sampled_from([*METHODS, "score_samples"]),
    name=st.sampled_from(COUNT_MODELS),
)
def test_fused_refusals_are_the_separate_checks(
    seed, n, bad, value, nan_elsewhere, threads, method, name
):
    X, y = counts(seed, 60, 8, 3)
    est = getattr(br, name)().fit(X, y)
    Xt = np.array(counts(seed + 1, n, 8, 3)[0])
    if nan_elsewhere:
        Xt[n // 2, 0] = np.nan
    for r, c in bad:
        Xt[r % n, c] = value
    with pytest.MonkeyPatch.context() as mp:
        small_blocks(mp, fused=False)
        expected = refusal(est, Xt, method)
    with pytest.MonkeyPatch.context() as mp, br.config_context(n_threads=threads or "auto"):
        small_blocks(mp)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning comes before the refusal
            assert refusal(est, Xt, method) == expected
    r, c = min((r % n, c) for r, c in bad)
    if np.isinf(value):
        assert f"row {r}, column {c}" in expected
    else:
        first_col = min(c for rr, c in bad if rr % n == min(b[0] % n for b in bad))
        assert f"column '{first_col}'" in expected or f"column {first_col} " in expected


def test_fused_path_warns_out_of_range_as_the_separate_check():
    X, y = counts(4, 200, 8, 3)
    est = br.MultinomialNB().fit(X, y)
    # 5000 rows: the range check judges a strided sample, taken block by block
    far = counts(5, 5000, 8, 3)[0]
    far[:, 2] *= 1000.0
    far[::50, 5] = 1e4  # 2% of the rows, in and out of the sample
    far[7, 6] = np.nan

    def messages(fused):
        with pytest.MonkeyPatch.context() as mp:
            small_blocks(mp, fused=fused)
            with pytest.warns(br.OutOfRangeWarning) as record:
                est.predict(far)
            assert not products.tracking(far) and products.tracked_low() == (None, None)
        return [str(w.message) for w in record]

    fused = messages(True)
    assert fused == messages(False)
    assert "feature 2:" in " ".join(fused) and "feature 5:" in " ".join(fused)


def test_fused_path_from_several_threads_and_in_a_forked_child():
    import multiprocessing
    from concurrent.futures import ThreadPoolExecutor

    X, y = counts(6, 400, 100, 4)
    est = br.ComplementNB().fit(X, y)
    parts = [np.array(X[i::4]) for i in range(4)]
    with pytest.MonkeyPatch.context() as mp:
        small_blocks(mp, fused=False)
        expected = [est.predict_proba(P) for P in parts]
    with pytest.MonkeyPatch.context() as mp:
        small_blocks(mp)
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(est.predict_proba, parts))
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-10)
        # the helper thread is not in a forked child, which makes its own
        if "fork" in multiprocessing.get_all_start_methods():
            with multiprocessing.get_context("fork").Pool(1) as child:
                out = child.apply_async(est.predict_proba, (parts[0],)).get(timeout=120)
            np.testing.assert_allclose(out, expected[0], rtol=1e-10, atol=1e-10)


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 60),
    step=st.integers(0, 12),
    run=st.integers(1, 5),
    missing=st.booleans(),
)
def test_fused_product_records_the_minimum_and_the_samples_bounds(seed, n, step, run, missing):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 9))
    if missing:
        X[rng.integers(n), rng.integers(9)] = np.nan
    A = rng.normal(size=(3, 9))
    with pytest.MonkeyPatch.context() as mp:
        small_blocks(mp)
        products.track_low(X, sample=runs_of(n, step, run))
        out = products.rows_dot(X, A)
        low, bounds = products.tracked_low()
    np.testing.assert_allclose(out, X @ A.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(low, np.min(X))  # NaN where X has one
    if step == 0:
        assert bounds is None
    else:
        # X's minimum (a bound on each column's in the sample) and the sample's maxima
        np.testing.assert_array_equal(bounds[0], np.min(X))
        np.testing.assert_array_equal(bounds[1], X[run_rows(runs_of(n, step, run))].max(axis=0))
    assert not products.tracking(X)

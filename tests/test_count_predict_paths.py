"""The three prediction paths of the count models' wide dense rows agree.

MultinomialNB and ComplementNB check the sign of wide dense float64 rows
with their product. On a machine with a free core for each BLAS thread
(:func:`bayesrule._util.products.blas_has_the_cores`) that is one pass for
the minimum and one multi-threaded product (``_checked_rows_dot``); on a
busy one, the fused, blocked product (``_fused_rows_dot``); other input
takes the separate check. Every path gives equal predictions, probabilities
to 1e-10, scikit-learn's results (~1e-8) and the same refusals, over
generated shapes, dtypes, memory orders, missing entries and sparse input.
Also: :func:`bayesrule._util.parallel.free_cores` leaves out the process's
own running threads, and ``all_finite`` is ``np.all(np.isfinite(.))``.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import naive_bayes as sknb
from threadpoolctl import threadpool_limits

import bayesrule as br
from _generated import poisson_counts as counts
from _generated import runs_of
from bayesrule._util import parallel, products
from bayesrule._util.row_sample import run_rows
from bayesrule.estimators._predict import all_finite

SETTINGS = settings(max_examples=25, deadline=None)
COUNT_MODELS = ["MultinomialNB", "ComplementNB", "BernoulliNB"]
METHODS = [
    "predict",
    "predict_proba",
    "predict_log_proba",
    "predict_joint_log_proba",
    "score_samples",
]
PATHS = ["separate", "fused", "checked", "narrow", "blocks"]
#: the product each path takes for the rows it applies to
PRODUCT = {
    "fused": "_fused_rows_dot",
    "checked": "_checked_rows_dot",
    "narrow": "_checked_rows_dot",
    "blocks": "_narrow_blocks_dot",
}
#: rows of a block of the narrow blocked path in these tests (blocks end inside the tables)
BLOCK_ROWS = 5


def take(mp: pytest.MonkeyPatch, path: str, calls: list[str]) -> None:
    """Small tables take ``path`` (more than 4 features, or for ``'narrow'`` at least 14
    rows of at most 64 features); ``calls`` records the products."""
    if path in ("narrow", "blocks"):
        mp.setattr(products, "NARROW", 64)
        mp.setattr(products, "NARROW_MIN_ROWS", 14)
        # 'narrow' is the one product after the minimum's pass; 'blocks' the blocked one
        rows = BLOCK_ROWS if path == "blocks" else 0
        mp.setattr(products, "narrow_block_rows", lambda p, k, rows=rows: rows)
        mp.setattr(products, "capped_block_rows", lambda p, rows=rows: rows)
    else:
        mp.setattr(products, "NARROW", 4)
    mp.setattr(products, "FUSED_ROWS", 7)
    mp.setattr(products, "PARALLEL_MIN_WORK", 0.0)
    mp.setattr(parallel, "PARALLEL_MIN_WORK", 0.0)
    if path == "separate":
        mp.setattr(products, "fusable", lambda X, k: False)
    mp.setattr(products, "blas_has_the_cores", lambda: path in ("checked", "narrow"))
    for name in set(PRODUCT.values()):
        real = getattr(products, name)
        mp.setattr(
            products,
            name,
            lambda X, A, real=real, name=name: calls.append(name) or real(X, A),
        )


def run(est, X, path, methods=METHODS):
    calls: list[str] = []
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        take(mp, path, calls)
        out = {m: getattr(est, m)(X) for m in methods}
    assert not products.tracking(X)
    return out, calls


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.sampled_from([1, 6, 7, 8, 15, 50, 120]),
    p=st.integers(5, 40),
    k=st.integers(2, 6),
    dtype=st.sampled_from([np.float64, np.float32]),
    order=st.sampled_from(["C", "F"]),
    missing=st.sampled_from([0.0, 0.1]),
    name=st.sampled_from(COUNT_MODELS),
)
def test_every_path_gives_the_same_predictions(seed, n, p, k, dtype, order, missing, name):
    X, y = counts(seed, 4 * k + n, p, k)
    est = getattr(br, name)().fit(X, y)
    Xt = np.asarray(counts(seed + 2, n, p, k)[0], dtype=dtype, order=order)
    if missing:
        Xt[np.random.default_rng(seed).random(Xt.shape) < missing] = np.nan
    results = {path: run(est, Xt, path) for path in PATHS}
    base, _ = results["separate"]
    fits_fused = dtype == np.float64 and order == "C" and name != "BernoulliNB"
    for path, (out, calls) in results.items():
        if path != "separate":
            applies = fits_fused and (path not in ("narrow", "blocks") or n >= 14)
            assert (PRODUCT[path] in calls) == applies, (path, calls)
            assert set(calls) <= {PRODUCT[path]}, (path, calls)
        np.testing.assert_array_equal(out["predict"], base["predict"])
        for m in METHODS[1:]:
            np.testing.assert_allclose(out[m], base[m], rtol=1e-10, atol=1e-10, err_msg=m)
        np.testing.assert_allclose(out["predict_proba"].sum(axis=1), 1.0, rtol=1e-9)
        assert np.all(np.isfinite(out["predict_proba"]))


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 80),
    p=st.integers(5, 30),
    k=st.integers(2, 5),
    path=st.sampled_from(PATHS),
    name=st.sampled_from(COUNT_MODELS),
)
def test_every_path_matches_scikit_learn(seed, n, p, k, path, name):
    X, y = counts(seed, 5 * k + n, p, k)
    ours = getattr(br, name)().fit(X, y)
    theirs = getattr(sknb, name)().fit(X, y)
    Xt = counts(seed + 1, n, p, k)[0]
    out, _ = run(ours, Xt, path, METHODS[:4])
    np.testing.assert_array_equal(out["predict"], theirs.predict(Xt))
    for m in METHODS[1:4]:
        np.testing.assert_allclose(out[m], getattr(theirs, m)(Xt), rtol=1e-8, atol=1e-8, err_msg=m)


@pytest.mark.parametrize("name", COUNT_MODELS)
@pytest.mark.parametrize("path", PATHS)
def test_sparse_rows_predict_as_dense_on_every_path(name, path):
    X, y = counts(3, 200, 30, 4)
    est = getattr(br, name)().fit(X, y)
    Xt = counts(4, 90, 30, 4)[0]
    Xt[Xt < 3] = 0.0
    dense, _ = run(est, Xt, path)
    sparse, calls = run(est, sp.csr_matrix(Xt), path)
    assert not calls  # sparse rows keep the plain product
    np.testing.assert_array_equal(sparse["predict"], dense["predict"])
    for m in METHODS[1:]:
        np.testing.assert_allclose(sparse[m], dense[m], rtol=1e-10, atol=1e-10, err_msg=m)


def refusal(est, X, method, path):
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning comes before the refusal
        take(mp, path, [])
        with pytest.raises(ValueError) as info:
            getattr(est, method)(X)
    return str(info.value)


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.sampled_from([7, 8, 20, 35]),
    bad=st.lists(st.tuples(st.integers(0, 34), st.integers(0, 7)), min_size=1, max_size=3),
    value=st.sampled_from([-1.0, -1e300, np.inf, -np.inf]),
    nan_elsewhere=st.booleans(),
    method=st.sampled_from(METHODS),
    name=st.sampled_from(["MultinomialNB", "ComplementNB"]),
)
def test_the_checked_path_refuses_as_the_separate_check(
    seed, n, bad, value, nan_elsewhere, method, name
):
    X, y = counts(seed, 60, 8, 3)
    est = getattr(br, name)().fit(X, y)
    Xt = np.array(counts(seed + 1, n, 8, 3)[0])
    if nan_elsewhere:
        Xt[n // 2, 0] = np.nan
    for r, c in bad:
        Xt[r % n, c] = value
    expected = refusal(est, Xt, method, "separate")
    assert refusal(est, Xt, method, "checked") == expected
    assert ("negative" in expected.lower()) == (value < 0 and np.isfinite(value))


def test_the_checked_path_warns_out_of_range_as_the_separate_check():
    X, y = counts(4, 200, 8, 3)
    est = br.MultinomialNB().fit(X, y)
    far = counts(5, 5000, 8, 3)[0]
    far[:, 2] *= 1000.0
    far[7, 6] = np.nan

    def messages(path):
        with pytest.MonkeyPatch.context() as mp:
            take(mp, path, [])
            with pytest.warns(br.OutOfRangeWarning) as record:
                est.predict(far)
        return [str(w.message) for w in record]

    assert messages("checked") == messages("separate")
    assert "feature 2:" in " ".join(messages("checked"))


def _tracked_low(X):
    """The least value the tracked paths record: X's own where it holds a NaN or a negative
    value (the sign check's error names it), else 0, a bound on every value found in the
    same reduction as the largest (``products._low_top``)."""
    least = np.min(X)
    return least if not least >= 0 else 0.0


def test_the_checked_product_records_the_minimum():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 9))
    A = rng.normal(size=(3, 9))
    for low in (np.min(X), np.nan):
        if np.isnan(low):
            X[3, 4] = np.nan
        products.track_low(X, sample=runs_of(X.shape[0], 5, 1))
        out = products._checked_rows_dot(X, A)
        got, bounds = products.tracked_low()
        np.testing.assert_allclose(out, X @ A.T, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(got, low)
        # the range check's sample X[::5], its maxima taken with the minimum (both halves)
        np.testing.assert_array_equal(bounds[0], low)
        np.testing.assert_array_equal(bounds[1], np.max(X[::5], axis=0))
    X[10, 2] = np.nan  # a NaN in the sample: NaN in its column's bounds
    products.track_low(X, sample=runs_of(X.shape[0], 5, 1))
    products._checked_rows_dot(X, A)
    got, bounds = products.tracked_low()
    assert np.isnan(got) and np.isnan(bounds[0]) and np.isnan(bounds[1][2])
    assert np.isfinite(np.delete(bounds[1], 2)).all()


def test_the_blas_threads_decide_the_path(monkeypatch):
    monkeypatch.setattr(products, "blas_threads", lambda: 1)
    monkeypatch.setattr(products, "free_cores", lambda: 8)
    assert not products.blas_has_the_cores()  # a single-threaded BLAS: fused
    monkeypatch.setattr(products, "blas_threads", lambda: 2)
    assert products.blas_has_the_cores()
    monkeypatch.setattr(products, "free_cores", lambda: 1)
    assert not products.blas_has_the_cores()  # a busy machine: fused


def test_free_cores_leave_out_the_process_own_threads(monkeypatch):
    monkeypatch.setattr(parallel, "available_cores", lambda: 4)
    monkeypatch.setattr(parallel, "LOAD_PAUSE", 0.0)
    monkeypatch.setattr(parallel, "FREE_PAUSE", 0.0)
    monkeypatch.setattr(parallel, "IDLE_CACHE_SECONDS", 0.0)
    # the caller and a spinning BLAS worker of this process run: no other load
    monkeypatch.setattr(parallel, "_running_tasks", lambda: 2)
    monkeypatch.setattr(parallel, "_own_running", lambda native_only=False: 1 if native_only else 2)
    assert parallel.free_cores() == 4
    assert parallel.idle_cores() == 4  # nor is the worker, a native thread, for idle_cores
    # ... but another Python thread of this process running is load for idle_cores
    monkeypatch.setattr(parallel, "_own_running", lambda native_only=False: 0 if native_only else 2)
    assert parallel.free_cores() == 4
    assert parallel.idle_cores() == 3
    # two tasks of other processes besides the caller
    monkeypatch.setattr(parallel, "_running_tasks", lambda: 3)
    monkeypatch.setattr(parallel, "_own_running", lambda native_only=False: 0 if native_only else 1)
    assert parallel.free_cores() == 2
    assert parallel.idle_cores() == 2
    monkeypatch.setattr(parallel, "_own_running", lambda native_only=False: None)  # unknown
    assert parallel.idle_cores() == 2  # the caller only
    assert parallel.free_cores() == 2
    monkeypatch.setattr(parallel, "_running_tasks", lambda: 9)
    assert parallel.free_cores() == 1  # never below one
    readings = iter([3, 9, 3, 3, 2])  # a short wake-up is not load
    monkeypatch.setattr(parallel, "_running_tasks", lambda: next(readings))
    assert parallel.free_cores() == 2


def test_free_cores_are_read_again_after_a_moment(monkeypatch):
    monkeypatch.setattr(parallel, "available_cores", lambda: 8)
    monkeypatch.setattr(parallel, "FREE_PAUSE", 0.0)
    monkeypatch.setattr(parallel, "_free_cache", None)
    monkeypatch.setattr(parallel, "_own_running", lambda native_only=False: 1)
    monkeypatch.setattr(parallel, "_running_tasks", lambda: 1)
    assert parallel.free_cores() == 8
    monkeypatch.setattr(parallel, "_running_tasks", lambda: 8)
    assert parallel.free_cores() == 8  # within IDLE_CACHE_SECONDS: the reading is reused
    monkeypatch.setattr(parallel, "IDLE_CACHE_SECONDS", 0.0)
    assert parallel.free_cores() == 1


def test_own_running_counts_this_thread():
    own = parallel._own_running()
    if own is None:
        pytest.skip("no /proc/self/task here")
    assert 1 <= own <= len(__import__("os").listdir("/proc/self/task"))


def test_own_native_threads_leave_out_the_python_threads():
    """The running threads that are not Python threads: never the caller, never a Python
    thread that runs (here one in a NumPy reduction, which releases the GIL)."""
    if parallel._own_running() is None:
        pytest.skip("no /proc/self/task here")
    stop = threading.Event()

    def spin() -> None:
        x = np.ones(1 << 20)
        while not stop.is_set():
            x.sum()

    worker = threading.Thread(target=spin)
    worker.start()
    try:
        with threadpool_limits(1):  # no BLAS worker woken meanwhile
            import time

            time.sleep(0.3)  # a BLAS worker spinning from an earlier product goes to sleep
            seen = [
                (parallel._own_running(), parallel._own_running(native_only=True))
                for _ in range(20)
            ]
    finally:
        stop.set()
        worker.join()
    assert all(native == 0 for _, native in seen)
    assert all(own >= 1 for own, _ in seen)
    assert max(own for own, _ in seen) >= 2  # the spinning Python thread was seen running


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.sampled_from([0.0, -1.0, 2.5, 1e308, -1e308, np.inf, -np.inf, np.nan]),
        min_size=0,
        max_size=12,
    )
)
def test_all_finite_is_entrywise(values):
    a = np.array(values, dtype=np.float64).reshape(-1, 1)
    assert all_finite(a) == bool(np.all(np.isfinite(a)))


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 60),
    p=st.integers(1, 30),
    k=st.integers(1, 5),
    path=st.sampled_from(PATHS),
    missing=st.booleans(),
    name=st.sampled_from(COUNT_MODELS),
)
def test_in_place_priors_and_posteriors_equal_new_arrays(seed, n, p, k, path, missing, name):
    X, y = counts(seed, 4 * k + n, p, k)
    est = getattr(br, name)().fit(X, y)
    Xt = counts(seed + 3, n, p, k)[0]
    if missing:
        Xt[np.random.default_rng(seed).random(Xt.shape) < 0.2] = np.nan
    kept = Xt.copy()
    in_place, _ = run(est, Xt, path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(type(est), "_fresh_log_densities", False)
        new, _ = run(est, Xt, path)
    np.testing.assert_array_equal(Xt, kept)  # the data are never written
    np.testing.assert_array_equal(in_place["predict"], new["predict"])
    for m in METHODS[1:]:
        np.testing.assert_allclose(in_place[m], new[m], rtol=1e-12, atol=1e-12, err_msg=m)


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 30),
    k=st.integers(1, 6),
    order=st.sampled_from(["C", "F"]),
    far=st.booleans(),
)
def test_softmax_in_place_equals_the_new_array(seed, n, k, order, far):
    from bayesrule.estimators._predict import log_softmax, softmax

    rng = np.random.default_rng(seed)
    jll = np.asarray(rng.normal(scale=50.0, size=(n, k)), order=order)
    if far and n:  # a row far from every class, one class at -inf (as _repair leaves them)
        jll[0] = -1e300
        if k > 1:
            jll[0, -1] = -np.inf
    kept = jll.copy()
    for f in (softmax, log_softmax):
        expected = f(jll)
        np.testing.assert_array_equal(jll, kept)  # not written without overwrite
        work = jll.copy(order="K")
        got = f(work, overwrite=True)
        assert got is work or got.base is work or n == 0
        np.testing.assert_array_equal(got, expected)
    read_only = kept.copy()
    read_only.flags.writeable = False
    np.testing.assert_array_equal(softmax(read_only, overwrite=True), softmax(kept))


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 60),
    p=st.integers(1, 9),
    step=st.integers(0, 12),
    run=st.integers(1, 5),
    missing=st.booleans(),
    parts=st.integers(1, 9),
)
def test_the_checked_product_records_the_minimum_and_the_samples_bounds(
    seed, n, p, step, run, missing, parts
):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if missing:
        X[rng.integers(n), rng.integers(p)] = np.nan
    A = rng.normal(size=(3, p))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(products, "CHECK_PARTS", parts)  # parts of one row up to all rows
        products.track_low(X, sample=runs_of(n, step, run))
        out = products._checked_rows_dot(X, A)
        low, bounds = products.tracked_low()
    np.testing.assert_allclose(out, X @ A.T, rtol=1e-12, atol=1e-12)
    assert out.flags.f_contiguous  # column-major, as rows_dot's transposed product
    np.testing.assert_array_equal(low, _tracked_low(X))  # NaN where X has one
    if step == 0:
        assert bounds is None
    else:
        # X's minimum (a bound on each column's in the sample) and the sample's maxima
        np.testing.assert_array_equal(bounds[0], _tracked_low(X))
        np.testing.assert_array_equal(bounds[1], X[run_rows(runs_of(n, step, run))].max(axis=0))


def test_narrow_rows_are_tracked_from_narrow_min_rows(monkeypatch):
    monkeypatch.setattr(products, "NARROW_MIN_ROWS", 20)
    assert products.fusable(np.ones((20, 5)), 3)
    assert not products.fusable(np.ones((19, 5)), 3)
    assert not products.fusable(np.ones((20, 5), order="F"), 3)
    assert not products.fusable(np.ones((20, 5), dtype=np.float32), 3)
    with br.config_context(limit_blas=False):  # the narrow paths never change the BLAS
        assert products.fusable(np.ones((20, 5)), 3)


def test_narrow_rows_without_the_cores_keep_one_product(monkeypatch):
    X, y = counts(8, 300, 6, 3)
    est = br.MultinomialNB().fit(X, y)
    Xt = counts(9, 200, 6, 3)[0]
    calls: list[str] = []
    with pytest.MonkeyPatch.context() as mp:
        take(mp, "narrow", calls)
        expected = est.predict_proba(Xt)
        assert calls == ["_checked_rows_dot"]
        mp.setattr(products, "blas_has_the_cores", lambda: False)
        calls.clear()
        for threads in (2, 1):  # a busy machine, or a single-threaded BLAS
            mp.setattr(products, "blas_threads", lambda threads=threads: threads)
            got = est.predict_proba(Xt)
            assert calls == []  # one product, the minimum in a pass of its own
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)
        Xt[5, 2] = -1.0  # the sign is still checked, naming X
        with pytest.raises(ValueError, match=r"Negative values .*input X"):
            est.predict_proba(Xt)


# ------------------------------------------------------------------------------
# the class model's finiteness check, not made again by the estimator
# ------------------------------------------------------------------------------
def test_a_note_of_finiteness_covers_one_object_once():
    a = np.ones((4, 3))
    products.note_finite(a)
    assert not products.noted_finite(a.copy())  # another object: look at it
    products.note_finite(a)
    assert products.noted_finite(a)
    assert not products.noted_finite(a)  # used up: a later change is never covered
    products.note_finite(a)
    products.forget_finite()
    assert not products.noted_finite(a)
    a[0, 0] = np.nan
    assert not all_finite(a)  # without a note, the values are read


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    name=st.sampled_from(COUNT_MODELS),
    n=st.integers(1, 300),
    p=st.sampled_from([3, 20, 70, 130]),
    dtype=st.sampled_from([np.float64, np.float32]),
    order=st.sampled_from(["C", "F"]),
    missing=st.booleans(),
    huge=st.booleans(),
    zero_prior=st.booleans(),
)
def test_the_model_check_read_once_gives_what_two_checks_give(
    seed, name, n, p, dtype, order, missing, huge, zero_prior
):
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.5, size=(n + 30, p)).astype(np.float64)
    y = np.arange(n + 30) % 3
    kw = {"class_prior": [0.5, 0.5, 0.0]} if zero_prior and name != "ComplementNB" else {}
    est = getattr(br, name)(**kw).fit(X[:30], y[:30])
    Z = np.asarray(X[30:], dtype=dtype, order=order)
    if missing:
        Z[rng.integers(n), rng.integers(p)] = np.nan
    if huge:  # a row far from every class: its results overflow and are repaired
        Z[rng.integers(n)] = 1e300 if dtype == np.float64 else 1e30
    noted, plain = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m in METHODS:
            noted[m] = getattr(est, m)(Z)
        with pytest.MonkeyPatch.context() as mp:
            # every result read again, as before the note
            mp.setattr(br.estimators._predict, "noted_finite", lambda values: False)
            for m in METHODS:
                plain[m] = getattr(est, m)(Z)
    for m in METHODS:
        np.testing.assert_array_equal(noted[m], plain[m])
    proba = noted["predict_proba"]
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)


def test_a_noted_result_still_refuses_infinity_and_negative_counts():
    rng = np.random.default_rng(0)
    X = rng.poisson(1.5, size=(60, 70)).astype(np.float64)
    est = br.MultinomialNB().fit(X, np.arange(60) % 3)
    bad = X.copy()
    bad[7, 4] = np.inf
    with pytest.raises(ValueError, match="X"):
        est.predict_proba(bad)
    bad[7, 4] = -1.0
    with pytest.raises(ValueError, match="X"):
        est.predict_proba(bad)


def test_a_prior_of_zero_leaves_no_note():
    # log 0 = -inf: the sum with the priors is not finite, and is read
    values = np.ones((5, 3))
    products.note_finite(values)
    with np.errstate(divide="ignore"):
        log_priors = np.log([0.5, 0.5, 0.0])
    out = br.estimators._predict._plus_priors(values, log_priors, in_place=True)
    assert not products.noted_finite(out)
    products.note_finite(values)
    out = br.estimators._predict._plus_priors(values, np.log([0.2, 0.3, 0.5]), in_place=False)
    assert products.noted_finite(out)


# ------------------------------------------------------------------------------
# narrow rows in blocks that OpenBLAS multiplies on one thread
# ------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 60),
    p=st.integers(1, 12),
    k=st.integers(1, 6),
    rows=st.integers(1, 70),
    step=st.sampled_from([0, 1, 3, 7]),
    run=st.integers(1, 5),
    missing=st.booleans(),
    threads=st.sampled_from([1, 2]),
)
def test_the_narrow_blocks_record_the_minimum_and_the_samples_bounds(
    seed, n, p, k, rows, step, run, missing, threads
):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if missing:
        X[rng.integers(n), rng.integers(p)] = np.nan
    A = rng.normal(size=(k, p))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(products, "narrow_block_rows", lambda p, k: rows)
        mp.setattr(products, "capped_block_rows", lambda p: rows)
        mp.setattr(products, "blas_threads", lambda: threads)
        products.track_low(X, sample=runs_of(n, step, run))
        out = products._narrow_blocks_dot(X, A)
        low, bounds = products.tracked_low()
    # the same product as the checked path's one call, in the same column-major layout
    np.testing.assert_allclose(out, X @ A.T, rtol=1e-12, atol=1e-12)
    assert out.shape == (n, k) and out.flags.f_contiguous
    np.testing.assert_array_equal(low, _tracked_low(X))  # NaN where X has one
    if step == 0:
        assert bounds is None
    else:
        np.testing.assert_array_equal(bounds[0], _tracked_low(X))
        np.testing.assert_array_equal(bounds[1], X[run_rows(runs_of(n, step, run))].max(axis=0))


def test_narrow_block_rows_keep_openblas_on_one_thread(monkeypatch):
    monkeypatch.setattr(products, "_openblas_only", lambda: True)
    for p, k in [(1, 1), (20, 5), (7, 3), (64, 4)]:
        rows = products.narrow_block_rows(p, k)
        assert rows * p * k <= products.OPENBLAS_ONE_THREAD
        assert (rows + 1) * p * k > products.OPENBLAS_ONE_THREAD
    # blocks too small to pay for their calls, and another BLAS: the former paths
    assert products.narrow_block_rows(64, 10) == 0
    monkeypatch.setattr(products, "_openblas_only", lambda: False)
    assert products.narrow_block_rows(20, 5) == 0


@pytest.mark.parametrize("cores", [True, False])
@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB"])
def test_narrow_blocks_predict_refuse_and_warn_as_the_former_paths(name, cores, monkeypatch):
    # the uncapped block size (2,621 rows of 20 features and five classes): three blocks
    monkeypatch.setattr(products, "NARROW_MIN_ROWS", 2000)
    monkeypatch.setattr(products, "capped_block_rows", lambda p: products.narrow_block_rows(p, 5))
    monkeypatch.setattr(products, "last_level_cache", lambda: 0)  # rows larger than the cache
    monkeypatch.setattr(products, "blas_has_the_cores", lambda: cores)
    X, y = counts(11, 3000, 20, 5)
    est = getattr(br, name)().fit(X, y)
    Xt = counts(12, 6000, 20, 5)[0]
    Xt[:, 3] *= 40.0  # far beyond the training range: an OutOfRangeWarning

    def outcome(Z, blocks):
        calls: list[str] = []
        real = products._narrow_blocks_dot
        with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            if not blocks:
                mp.setattr(products, "narrow_block_rows", lambda p, k: 0)
            mp.setattr(products, "_narrow_blocks_dot", lambda X, A: calls.append(1) or real(X, A))
            try:
                got = {m: getattr(est, m)(Z) for m in METHODS}
            except ValueError as exc:
                got = str(exc)
        assert bool(calls) == blocks  # the blocks are the path of narrow rows, idle or busy
        return got, [(type(x.message), str(x.message)) for x in w]

    new, new_w = outcome(Xt, True)
    old, old_w = outcome(Xt, False)
    assert new_w == old_w and new_w  # the same warnings, with the same texts
    np.testing.assert_array_equal(new["predict"], old["predict"])
    for m in METHODS[1:]:
        np.testing.assert_allclose(new[m], old[m], rtol=1e-10, atol=1e-10, err_msg=m)
    for bad in (-1.0, np.inf, np.nan):
        Z = Xt.copy()
        Z[4321, 7] = bad  # in the second block
        got_new, _ = outcome(Z, True)
        got_old, _ = outcome(Z, False)
        if isinstance(got_old, str):
            assert got_new == got_old  # the same refusal, naming the same row and column
        else:
            for m in METHODS:
                np.testing.assert_allclose(got_new[m], got_old[m], rtol=1e-10, atol=1e-10)


def test_narrow_blocks_hold_the_blas_to_one_thread_and_size_blocks_by_bytes(monkeypatch):
    """Idle or busy, narrow tracked rows are multiplied a block at a time with the BLAS held
    to one thread, in blocks of about 1 MB; with ``limit_blas=False`` (no cap) the blocks
    are those OpenBLAS keeps on one thread by itself."""
    for p in (1, 8, 20, 64):
        rows = products.capped_block_rows(p)
        assert products.NARROW_BLOCK_MIN <= rows <= products.NARROW_CAPPED_ROWS
        assert rows * p * 8 <= max(products.NARROW_BLOCK_BYTES, products.NARROW_BLOCK_MIN * p * 8)
    monkeypatch.setattr(products, "_openblas_only", lambda: True)
    rng = np.random.default_rng(4)
    X = rng.poisson(2.0, size=(40_000, 20)).astype(np.float64)  # NARROW_MIN_ROWS or more
    A = -rng.uniform(0.1, 3.0, size=(5, 20))
    seen: list[tuple[int, int]] = []
    real = products._tracked_blocks

    def spy(X, rows, product, threads):
        seen.append((rows, parallel.blas_threads()))
        return real(X, rows, product, threads)

    monkeypatch.setattr(products, "_tracked_blocks", spy)
    monkeypatch.setattr(products, "last_level_cache", lambda: 0)  # rows larger than the cache
    for limit in (True, False):
        seen.clear()
        with br.config_context(limit_blas=limit), threadpool_limits(2):
            products.track_low(X, sample=(1, 40_000, 40_000))
            out = products.rows_dot(X, A)
            low, bounds = products.tracked_low()
        np.testing.assert_allclose(out, X @ A.T, rtol=1e-12)
        np.testing.assert_array_equal(bounds[1], X.max(axis=0))
        assert low == 0.0
        rows, threads = seen[0]
        if limit:
            assert (rows, threads) == (products.capped_block_rows(20), 1)
        else:
            assert (rows, threads) == (products.narrow_block_rows(20, 5), 2)


@pytest.mark.parametrize("cores", [True, False])
@pytest.mark.parametrize("cache", [0, 1 << 40])
def test_narrow_rows_take_the_blocks_when_busy_or_larger_than_the_cache(cores, cache, monkeypatch):
    """Idle, narrow rows that fit in the last-level cache keep the minimum's pass and one
    product (which reads them again from the cache); larger ones, or any on a busy
    machine, take the blocks. Both give the same product, minimum and sample bounds."""
    monkeypatch.setattr(products, "_openblas_only", lambda: True)
    monkeypatch.setattr(products, "blas_has_the_cores", lambda: cores)
    monkeypatch.setattr(products, "last_level_cache", lambda: cache)
    calls: list[str] = []
    for name in ("_narrow_blocks_dot", "_checked_rows_dot", "_narrow_dot"):
        real = getattr(products, name)
        monkeypatch.setattr(
            products, name, lambda X, A, real=real, name=name: calls.append(name) or real(X, A)
        )
    rng = np.random.default_rng(5)
    X = rng.poisson(2.0, size=(40_000, 20)).astype(np.float64)
    A = -rng.uniform(0.1, 3.0, size=(5, 20))
    products.track_low(X, sample=runs_of(40_000, 1250, 32))
    out = products.rows_dot(X, A)
    low, bounds = products.tracked_low()
    expected = "_checked_rows_dot" if cores and cache > X.nbytes else "_narrow_blocks_dot"
    assert calls == [expected]
    np.testing.assert_allclose(out, X @ A.T, rtol=1e-12)
    assert low == 0.0
    np.testing.assert_array_equal(bounds[1], X[run_rows(runs_of(40_000, 1250, 32))].max(axis=0))


def test_the_last_level_cache_is_read_or_assumed():
    size = parallel.last_level_cache()
    assert size >= 1 << 16
    assert parallel.last_level_cache() == size  # read once

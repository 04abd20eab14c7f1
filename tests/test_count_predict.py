"""The count models' prediction path against the one it replaces.

* :func:`bayesrule._util.products.rows_dot_lowest` (the product and the least
  entry of ``X`` from one read, in blocks shared among threads) against
  ``X @ A.T`` and ``np.min(X)``.
* MultinomialNB and ComplementNB check the sign of dense data to predict in
  that product instead of a pass of their own: equal predictions,
  probabilities to 1e-10 against the former path (a separate minimum, then
  the plain product), over generated shapes, dtypes, memory orders and
  missing entries; the refusals of negative values and infinities raise the
  same errors as before.
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
from bayesrule._util import parallel, products
from bayesrule.models import multinomial

SETTINGS = settings(max_examples=30, deadline=None)
COUNT_MODELS = ["MultinomialNB", "ComplementNB"]


def counts(seed: int, n: int, p: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Poisson counts of ``k`` classes with their own rates, every class present."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    rates = rng.uniform(0.2, 6.0, size=(k, p))
    return rng.poisson(rates[y]).astype(np.float64), y


def old_path(est, method: str, X):
    """``est.method(X)`` on the former path: a minimum of its own, then the plain product."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(type(est), "_sign_from_product", False)
        mp.setattr(multinomial, "_dot_counts", products.rows_dot)
        return getattr(est, method)(X)


def in_blocks(threads: bool):
    """A context where rows_dot_lowest takes small blocks (and, with ``threads``, two threads)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(products, "FUSED_VALUES", 16 * 30)  # 16 rows of 30 features, more of fewer
    mp.setattr(products, "FUSED_MIN_ROWS", 8)  # wide rows (over 60 features) take two passes
    if threads:
        mp.setattr(parallel, "PARALLEL_MIN_WORK", 0.0)
        mp.setattr(parallel, "available_cores", lambda: 2)
    return mp


# ------------------------------------------------------------ rows_dot_lowest
@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 300),
    p=st.integers(1, 80),
    k=st.integers(1, 6),
    dtype=st.sampled_from([np.float64, np.float32]),
    order=st.sampled_from(["C", "F"]),
    nan=st.booleans(),
    threads=st.booleans(),
)
def test_rows_dot_lowest_is_the_product_and_the_minimum(seed, n, p, k, dtype, order, nan, threads):
    rng = np.random.default_rng(seed)
    X = np.asarray(rng.normal(size=(n, p)), dtype=dtype, order=order)
    if nan and n:
        X[rng.integers(n), rng.integers(p)] = np.nan
    A = rng.normal(size=(k, p))
    mp = in_blocks(threads)
    try:
        out, lowest = products.rows_dot_lowest(X, A)
    finally:
        mp.undo()
    expected = np.asarray(X, dtype=np.float64) @ A.T
    assert out.shape == (n, k) and out.dtype == np.float64
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    if n == 0:
        assert lowest == np.inf
    elif nan:
        assert np.isnan(lowest)
    else:
        assert lowest == float(np.min(X))


# ------------------------------------------------ the new path against the old
@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 200),
    p=st.integers(2, 25),
    k=st.integers(2, 5),
    dtype=st.sampled_from([np.float64, np.float32]),
    order=st.sampled_from(["C", "F"]),
    missing=st.sampled_from([0.0, 0.1]),
    name=st.sampled_from(COUNT_MODELS),
    threads=st.booleans(),
)
def test_count_predictions_equal_the_former_path(
    seed, n, p, k, dtype, order, missing, name, threads
):
    X, y = counts(seed, 4 * k + n, p, k)
    est = getattr(br, name)().fit(X, y)
    rng = np.random.default_rng(seed + 1)
    Xt = np.asarray(counts(seed + 2, n, p, k)[0], dtype=dtype, order=order)
    if missing:
        Xt[rng.random(Xt.shape) < missing] = np.nan
    methods = ["predict_proba", "predict_log_proba", "predict_joint_log_proba", "score_samples"]
    mp = in_blocks(threads)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            new = {m: getattr(est, m)(Xt) for m in ["predict", *methods]}
            old = {m: old_path(est, m, Xt) for m in ["predict", *methods]}
    finally:
        mp.undo()
    np.testing.assert_array_equal(new["predict"], old["predict"])
    for m in methods:
        np.testing.assert_allclose(new[m], old[m], rtol=1e-10, atol=1e-10, err_msg=m)
    proba = new["predict_proba"]
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
        Xt[10, 2] = np.nan  # the check is then made on the observed values
    with pytest.raises(ValueError, match=negative_message(name, "4", -2.0)):
        getattr(est, method)(Xt)
    # the former path's error is the same
    with pytest.raises(ValueError, match=negative_message(name, "4", -2.0)):
        old_path(est, method, Xt)


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
    for run in (lambda: est.predict_proba(bad), lambda: old_path(est, "predict_proba", bad)):
        with pytest.raises(ValueError, match="X contains infinity at row 7, column 3"):
            run()


def test_a_count_model_refuses_negative_counts_itself():
    X, y = counts(4, 60, 3, 2)
    model = br.MultinomialNB().fit(X, y).class_model(0)
    with pytest.raises(ValueError, match="counts must be non-negative"):
        model.log_prob(-X)


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


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_rows_dot_lowest_works_in_a_forked_child():
    """The helper threads of the parent do not exist in a child: it makes its own."""
    import os
    import subprocess
    import sys

    code = (
        "import os, numpy as np\n"
        "from bayesrule._util import parallel, products\n"
        "parallel.PARALLEL_MIN_WORK = 0.0\n"
        "parallel.available_cores = lambda: 2\n"
        "X = np.arange(600000.0).reshape(20000, 30); A = np.ones((3, 30))\n"
        "products.rows_dot_lowest(X, A)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    out, lo = products.rows_dot_lowest(X, A)\n"
        "    os._exit(0 if np.allclose(out, X @ A.T) and lo == 0.0 else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "raise SystemExit(os.waitstatus_to_exitcode(status))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], timeout=60, env=os.environ.copy())
    assert done.returncode == 0

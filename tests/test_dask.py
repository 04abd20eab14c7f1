"""The Dask backend: fits from block statistics, lazy predictions, threads in tasks.

Fast tests run on Dask's local schedulers (synchronous and threaded) for the
many combinations of input; the rest run on one real cluster of two
single-threaded worker processes (``distributed.LocalCluster``), started once
for the module: every model fitted from statistics equals the in-memory fit,
the rows never reach the client, a worker killed during a fit changes
nothing, and predictions equal the in-memory ones.

The module does nothing at import (the workers are spawned processes); the
functions the workers run are shipped by value.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time

import numpy as np
import pytest
from sklearn.base import clone

import bayesrule
from bayesrule.estimators.registry import available

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")
distributed = pytest.importorskip("distributed")
threadpoolctl = pytest.importorskip("threadpoolctl")

#: the estimators fitted from mergeable statistics (RDA-CV's held-out scores are not)
STREAMING = sorted((s, c) for s, c in available().items() if hasattr(c, "partial_fit"))
IDS = [s for s, _ in STREAMING]

PARAMS: dict[str, dict] = {
    "qda": {"reg_param": 0.1},
    "rda": {"alpha": 0.5, "gamma": 0.1},
}

LAZY = ["predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba"]
LAZY += ["decision_function", "score_samples", "class_log_density"]


def _data(short: str, n: int = 240, p: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Data of the kind each family models: counts, category codes or continuous values."""
    rng = np.random.default_rng(seed)
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, n)]
    k = np.searchsorted(np.array(["a", "b", "c"]), y)
    if short in ("mnb", "cnb", "pnb"):
        X = rng.poisson(1.0 + 2.0 * k[:, None] * np.arange(1, p + 1) / p, size=(n, p))
    elif short == "catnb":
        X = (rng.integers(0, 3, size=(n, p)) + k[:, None]) % 4
    else:
        X = rng.normal(size=(n, p)) * (1.0 + 0.5 * k[:, None]) + 2.0 * k[:, None] + 10.0
    return X.astype(float), y


def _est(short: str):
    return available()[short](**PARAMS.get(short, {}))


def _assert_same_model(a, b, rtol: float = 1e-10) -> None:
    """Every public fitted attribute of ``b`` equals ``a``'s to ``rtol``."""
    assert a.stats_.allclose(b.stats_, rtol=rtol)
    fitted = sorted(k for k in vars(a) if k.endswith("_") and not k.startswith("_"))
    assert fitted == sorted(k for k in vars(b) if k.endswith("_") and not k.startswith("_"))
    for key in fitted:
        va, vb = getattr(a, key), getattr(b, key)
        if key == "stats_":
            continue
        if isinstance(va, dict):
            assert va.keys() == vb.keys(), key
            for k in va:
                np.testing.assert_array_equal(va[k], vb[k], err_msg=key)
            continue
        va, vb = np.asarray(va), np.asarray(vb)
        if va.dtype.kind in "fc":
            scale = float(np.max(np.abs(va[np.isfinite(va)]), initial=1.0))
            np.testing.assert_allclose(vb, va, rtol=rtol, atol=rtol * scale, err_msg=key)
        else:
            np.testing.assert_array_equal(vb, va, err_msg=key)
    assert a.n_features_in_ == b.n_features_in_


def _assert_same_predictions(a, b, X, Xd, rtol: float = 1e-10) -> None:
    for method in LAZY:
        if not hasattr(a, method):  # naive Bayes has no decision_function
            assert not hasattr(b, method), method
            continue
        want = getattr(a, method)(X)
        got = getattr(b, method)(Xd)
        assert isinstance(got, da.Array), method
        assert got.dtype == want.dtype, method
        out = got.compute()
        assert out.shape == want.shape, method
        if want.dtype.kind == "f":
            np.testing.assert_allclose(out, want, rtol=rtol, atol=1e-9, err_msg=method)
        else:
            np.testing.assert_array_equal(out, want, err_msg=method)


# ---------------------------------------------------------------------------------
# local schedulers: the combinations
# ---------------------------------------------------------------------------------
@pytest.fixture(params=["sync", "threads"])
def scheduler(request):
    with dask.config.set(scheduler=request.param):
        yield request.param


@pytest.mark.parametrize("short,cls", STREAMING, ids=IDS)
def test_fit_on_dask_array_equals_fit_in_memory(short, cls, scheduler):
    X, y = _data(short)
    # uneven row blocks, features split over two column blocks
    Xd = da.from_array(X, chunks=((50, 70, 1, 119), (2, 2)))
    yd = da.from_array(y, chunks=100)
    ref = _est(short).fit(X, y)
    got = _est(short).fit(Xd, yd)
    _assert_same_model(ref, got)
    _assert_same_predictions(ref, got, X, Xd)


@pytest.mark.parametrize("short,cls", STREAMING, ids=IDS)
def test_partial_fit_and_forget_on_dask_equal_in_memory(short, cls):
    X, y = _data(short, n=300, seed=1)
    first, second = slice(0, 180), slice(180, 300)
    w = np.random.default_rng(2).integers(0, 4, size=300).astype(float)
    ref = _est(short).partial_fit(X[first], y[first], classes=["a", "b", "c"])
    ref.partial_fit(X[second], y[second], sample_weight=w[second])
    got = _est(short).partial_fit(
        da.from_array(X[first], chunks=50),
        da.from_array(y[first], chunks=50),
        classes=["a", "b", "c"],
    )
    got.partial_fit(
        da.from_array(X[second], chunks=40),
        da.from_array(y[second], chunks=40),
        sample_weight=da.from_array(w[second], chunks=40),
    )
    _assert_same_model(ref, got, rtol=1e-9)
    ref.forget(X[:60], y[:60])
    got.forget(da.from_array(X[:60], chunks=25), y[:60])  # an in-memory y cut to X's blocks
    _assert_same_model(ref, got, rtol=1e-9)


def test_later_blocks_are_summarised_as_the_first_ones():
    """moments='auto': the statistic chosen at the first block is kept, as in memory."""
    X, y = _data("lda", n=200)
    Xd, yd = da.from_array(X, chunks=50), da.from_array(y, chunks=50)
    ref = bayesrule.LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto")
    got = clone(ref)
    ref.partial_fit(X[:100], y[:100], classes=["a", "b", "c"])
    got.partial_fit(Xd[:100], yd[:100], classes=["a", "b", "c"])
    ref.set_params(shrinkage=None).partial_fit(X[100:], y[100:])
    got.set_params(shrinkage=None).partial_fit(Xd[100:], yd[100:])
    assert type(got.stats_) is type(ref.stats_) is bayesrule.stats.FourthMomentStats
    _assert_same_model(ref, got, rtol=1e-9)


def test_statistics_of_a_dask_collection_are_those_of_its_rows():
    X, y = _data("lda", n=200)
    est = bayesrule.LinearDiscriminantAnalysis()
    s = est.statistics(da.from_array(X, chunks=33), da.from_array(y, chunks=33))
    assert s.allclose(est.statistics(X, y), rtol=1e-12)
    assert not hasattr(est, "stats_")  # statistics never fits


@pytest.mark.parametrize("weights", ["dask", "numpy"])
def test_dataframe_input_with_series_y_and_weights(weights):
    X, y = _data("gnb", n=300)
    w = np.random.default_rng(3).uniform(0, 2, 300)
    df = pd.DataFrame(X, columns=["f0", "f1", "f2", "f3"]).assign(label=y, w=w)
    ddf = dd.from_pandas(df, npartitions=4)
    sw = ddf["w"] if weights == "dask" else w
    ref = bayesrule.GaussianNB().fit(df[["f0", "f1", "f2", "f3"]], y, sample_weight=w)
    got = bayesrule.GaussianNB().fit(ddf[["f0", "f1", "f2", "f3"]], ddf["label"], sample_weight=sw)
    _assert_same_model(ref, got)
    np.testing.assert_array_equal(got.feature_names_in_, ["f0", "f1", "f2", "f3"])
    pred = got.predict(ddf[["f0", "f1", "f2", "f3"]])
    assert isinstance(pred, da.Array) and np.isnan(pred.shape[0])
    np.testing.assert_array_equal(pred.compute(), ref.predict(df[["f0", "f1", "f2", "f3"]]))


def test_empty_partitions_are_skipped():
    X, y = _data("lda", n=200)
    df = pd.DataFrame(X, columns=list("abcd")).assign(label=y)
    ddf = dd.from_pandas(df, npartitions=5)
    kept = ddf[ddf["a"] > 1e9]  # every partition empty but the rows added below
    ddf = dd.concat([kept, ddf])
    got = bayesrule.LinearDiscriminantAnalysis().fit(ddf[list("abcd")], ddf["label"])
    ref = bayesrule.LinearDiscriminantAnalysis().fit(df[list("abcd")], y)
    _assert_same_model(ref, got)
    proba = got.predict_proba(ddf[list("abcd")]).compute()
    np.testing.assert_allclose(proba, ref.predict_proba(df[list("abcd")]), rtol=1e-10)
    with pytest.raises(ValueError, match="0 samples"):
        bayesrule.GaussianNB().fit(kept[list("abcd")], kept["label"])


def _mixed_frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    colour = np.array(["red", "green", "blue", "teal"])[(rng.integers(0, 3, n) + y) % 4]
    # a string column whose early rows see only some of its values
    town = np.where(
        np.arange(n) < n // 2, "oslo", np.array(["rome", "lima", "oslo"])[rng.integers(0, 3, n)]
    )
    return pd.DataFrame(
        {
            "x": rng.normal(size=n) + y,
            "count": rng.poisson(2 + 3 * y),
            "flag": rng.random(n) < 0.3 + 0.4 * y,
            "colour": pd.Series(colour, dtype="string"),
            "town": pd.Categorical(town),
            "label": np.where(y == 1, "yes", "no"),
        }
    )


def test_mixed_nb_on_a_dask_dataframe_merges_vocabularies():
    df = _mixed_frame()
    ddf = dd.from_pandas(df, npartitions=4, sort=False)
    cols = ["x", "count", "flag", "colour", "town"]
    ref = bayesrule.MixedNB().fit(df[cols], df["label"])
    got = bayesrule.MixedNB().fit(ddf[cols], ddf["label"])
    assert got.kinds_ == ["gaussian", "poisson", "bernoulli", "categorical", "categorical"]
    np.testing.assert_array_equal(got.categories_["town"], ["lima", "oslo", "rome"])
    _assert_same_model(ref, got)
    proba = got.predict_proba(ddf[cols])
    np.testing.assert_allclose(proba.compute(), ref.predict_proba(df[cols]), rtol=1e-10)
    np.testing.assert_array_equal(got.predict(ddf[cols]).compute(), ref.predict(df[cols]))


def test_lda_transform_is_lazy_with_the_right_chunks():
    X, y = _data("lda", n=300, p=6)
    Xd = da.from_array(X.astype(np.float32), chunks=(70, 3))
    ref = bayesrule.LinearDiscriminantAnalysis().fit(X.astype(np.float32), y)
    got = bayesrule.LinearDiscriminantAnalysis().fit(Xd, da.from_array(y, chunks=70))
    out = got.transform(Xd)
    assert out.chunks == ((70, 70, 70, 70, 20), (2,))
    assert out.dtype == ref.transform(X.astype(np.float32)).dtype == np.float32
    np.testing.assert_allclose(out.compute(), ref.transform(X.astype(np.float32)), rtol=1e-5)
    assert isinstance(got.fit_transform(Xd, da.from_array(y, chunks=70)), da.Array)


def test_predictions_use_the_model_as_it_was_when_asked():
    X, y = _data("gnb")
    est = bayesrule.GaussianNB().fit(X, y)
    lazy = est.predict_proba(da.from_array(X, chunks=60))
    before = est.predict_proba(X)
    est.partial_fit(X[:50] + 5.0, y[:50])
    np.testing.assert_allclose(lazy.compute(), before, rtol=1e-12)


def test_sample_as_dask_arrays():
    X, y = _data("qda", n=300)
    est = bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.1).fit(X, y)
    Xs, ys = est.sample(10_000, chunks=3000, random_state=7)
    assert isinstance(Xs, da.Array) and Xs.chunks == ((3000, 3000, 3000, 1000), (4,))
    assert ys.chunks == ((3000, 3000, 3000, 1000),) and ys.dtype == est.classes_.dtype
    a, b = dask.compute(Xs, ys)
    again = dask.compute(*est.sample(10_000, chunks=3000, random_state=7))
    np.testing.assert_array_equal(a, again[0])  # reproducible for a random_state and chunks
    # the labels follow the priors and each class's draws its mean
    freq = np.array([np.mean(b == c) for c in est.classes_])
    np.testing.assert_allclose(freq, est.priors_, atol=0.03)
    for k, c in enumerate(est.classes_):
        np.testing.assert_allclose(a[b == c].mean(axis=0), est.means_[k], atol=0.15)
    # given labels: one draw per label, in their blocks
    labels = np.repeat(est.classes_, 100)
    Xl, yl = est.sample(y=labels, chunks=(120, 180), random_state=0)
    assert Xl.chunks[0] == (120, 180)
    np.testing.assert_array_equal(yl.compute(), labels)
    with pytest.raises(ValueError, match="not among the classes"):
        est.sample(y=np.array(["a", "zz"]), chunks=1)
    with pytest.raises(ValueError, match="n_samples"):
        est.sample(-1, chunks=10)
    with pytest.raises(ValueError, match="add up"):
        est.sample(10, chunks=(3, 3))


def test_dask_only_api_says_how_to_install(monkeypatch):
    X, y = _data("gnb")
    est = bayesrule.GaussianNB().fit(X, y)
    monkeypatch.setitem(sys.modules, "dask.array", None)  # as if Dask were not installed
    with pytest.raises(ImportError, match=r"pip install 'bayesrule\[dask\]'"):
        est.sample(10, chunks=5)


def test_the_docs_first_example_runs():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "scale-out.md").read_text()
    code = re.findall(r"```python\n(.*?)```", text.split("## Dask", 1)[1], flags=re.S)[0]
    namespace: dict = {}
    with dask.config.set(scheduler="threads"):
        exec(compile(code, "scale-out.md", "exec"), namespace)
        X, y = dask.compute(namespace["X"], namespace["y"])
    lda, proba = namespace["lda"], namespace["proba"]
    assert isinstance(proba, da.Array) and proba.chunks[0] == (25_000,) * 4
    _assert_same_model(bayesrule.LinearDiscriminantAnalysis().fit(X, y), lda)


def test_no_dask_import_for_in_memory_work():
    """A fit and a prediction on arrays never import Dask."""
    import subprocess

    code = (
        "import sys, numpy as np, bayesrule\n"
        "X = np.random.default_rng(0).normal(size=(50, 3)); y = np.arange(50) % 2\n"
        "est = bayesrule.LinearDiscriminantAnalysis().fit(X, y); est.predict(X); est.sample(3)\n"
        "print('dask' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_refusals_are_clear():
    X, y = _data("rda", n=120)
    Xd, yd = da.from_array(X, chunks=40), da.from_array(y, chunks=40)
    with pytest.raises(TypeError, match="cannot be fitted on Dask collections"):
        bayesrule.RegularizedDiscriminantAnalysisCV().fit(Xd, yd)
    from sklearn.covariance import LedoitWolf

    with pytest.raises(TypeError, match="covariance_estimator"):
        bayesrule.LinearDiscriminantAnalysis(solver="lsqr", covariance_estimator=LedoitWolf()).fit(
            Xd, yd
        )
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        bayesrule.GaussianNB().fit(Xd, da.from_array(y[:100], chunks=40))
    with pytest.raises(ValueError, match="2-dimensional"):
        bayesrule.GaussianNB().fit(Xd[:, 0], yd)
    with pytest.raises(TypeError, match="Dask array or DataFrame X"):
        bayesrule.GaussianNB().fit(X, yd)
    with pytest.raises(ValueError, match="classes must be passed"):
        bayesrule.GaussianNB().partial_fit(Xd, yd)
    est = bayesrule.GaussianNB().fit(X, y)
    wide = da.from_array(np.hstack([X, X]), chunks=40)
    with pytest.raises(ValueError, match="X has 8 features, but GaussianNB is expecting 4"):
        est.predict(wide)  # checked on the client, before anything is computed
    with pytest.raises(ValueError, match="X has 8 features"):
        est.partial_fit(wide, yd)
    with pytest.raises(ValueError, match="do not exist in the initial classes"):
        est.partial_fit(Xd, da.from_array(np.where(y == "a", "zz", y), chunks=40))
    np.testing.assert_array_equal(est.classes_, ["a", "b", "c"])  # left as it was


def _random_blocks(seed: int) -> tuple[da.Array, da.Array]:
    """4 blocks of 3000 x 200 (6e7 multiply-adds each: over the threshold), made where computed."""
    g = da.random.default_rng(seed)
    return g.standard_normal((12_000, 200), chunks=(3000, 200)), g.integers(
        0, 3, 12_000, chunks=3000
    )


def _record_caps(monkeypatch) -> list:
    """The BLAS thread counts bayesrule sets (None: restored) and the threads that set them."""
    from bayesrule._util import parallel as _parallel

    caps: list = []
    apply = _parallel._apply

    def spy(cap):
        caps.append((cap, threading.get_ident()))
        return apply(cap)

    monkeypatch.setattr(_parallel, "_apply", spy)
    return caps


def test_threads_inside_local_threaded_tasks(monkeypatch):
    """Each task of the threaded scheduler runs with its share of the cores; no BLAS limit stays.

    The calling thread holds one single-threaded BLAS limit while the tasks
    run, and restores it; the tasks never change the BLAS themselves.
    """
    from bayesrule._util import parallel as _parallel
    from bayesrule.backends.dask import task_threads

    seen = []
    original = bayesrule.LinearDiscriminantAnalysis.statistics

    def spy(self, *args, **kwargs):
        seen.append(
            (
                task_threads(),
                _parallel.thread_count(1e12),
                bayesrule.get_config(),
                _parallel.blas_threads(),
            )
        )
        return original(self, *args, **kwargs)

    monkeypatch.setattr(bayesrule.LinearDiscriminantAnalysis, "statistics", spy)
    Xd, yd = _random_blocks(seed=0)
    blas_before = _parallel.blas_threads()
    caps = _record_caps(monkeypatch)
    before = threadpoolctl.threadpool_info()
    with dask.config.set(scheduler="threads", num_workers=2):
        got = bayesrule.LinearDiscriminantAnalysis().fit(Xd, yd)
    share = max(1, _parallel.available_cores() // 2)
    assert len(seen) == 4
    assert all(s[0] == share and s[1] == share for s in seen)  # no more threads than its share
    assert all(s[3] == 1 for s in seen)  # single-threaded BLAS products in the tasks
    assert not any(s[2]["limit_blas"] for s in seen)  # tasks never change the BLAS
    assert threadpoolctl.threadpool_info() == before  # BLAS thread counts as before the fit
    if blas_before > 1:  # lowered and restored by the calling thread alone
        assert [c for c, _ in caps] == [1, None]
        assert {t for _, t in caps} == {threading.get_ident()}
    monkeypatch.undo()
    X, y = dask.compute(Xd, yd, scheduler="sync")
    _assert_same_model(bayesrule.LinearDiscriminantAnalysis().fit(X, y), got)


def test_client_settings_reach_the_tasks(monkeypatch):
    seen = []
    original = bayesrule.GaussianNB.statistics

    def spy(self, *args, **kwargs):
        seen.append(bayesrule.get_config())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(bayesrule.GaussianNB, "statistics", spy)
    X, y = _data("gnb")
    with dask.config.set(scheduler="sync"), bayesrule.config_context(n_threads=1, limit_blas=False):
        bayesrule.GaussianNB().fit(da.from_array(X, chunks=60), da.from_array(y, chunks=60))
    assert seen == [{"n_threads": 1, "limit_blas": False}] * 4


def test_an_in_process_worker_with_two_threads_gives_one_thread_per_task(monkeypatch):
    """A worker running two tasks at once: n_threads=1 in each; the BLAS is restored after."""
    from bayesrule._util import parallel as _parallel
    from bayesrule.backends.dask import task_threads

    seen = []
    original = bayesrule.QuadraticDiscriminantAnalysis.statistics

    def spy(self, *args, **kwargs):
        seen.append((task_threads(), _parallel.thread_count(1e12)))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(bayesrule.QuadraticDiscriminantAnalysis, "statistics", spy)
    Xd, yd = _random_blocks(seed=1)
    caps = _record_caps(monkeypatch)
    before = threadpoolctl.threadpool_info()
    with distributed.Client(
        processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None
    ):
        got = bayesrule.QuadraticDiscriminantAnalysis().fit(Xd, yd)
    X, y = dask.compute(Xd, yd, scheduler="sync")
    assert seen == [(1, 1)] * 4
    assert threadpoolctl.threadpool_info() == before
    assert {t for _, t in caps} <= {threading.get_ident()}  # only the calling thread sets it
    monkeypatch.undo()
    _assert_same_model(bayesrule.QuadraticDiscriminantAnalysis().fit(X, y), got)


# ---------------------------------------------------------------------------------
# a real cluster: two single-threaded worker processes
# ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster():
    import cloudpickle

    # the workers cannot import this test module: ship its functions by value
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        with (
            distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
            ) as lc,
            distributed.Client(lc) as client,
        ):
            # what a fit loads (scikit-learn, SciPy and their BLAS), loaded once up front
            client.run(importlib.import_module, "bayesrule")
            yield lc, client
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def _chunk(
    i: int,
    short: str,
    rows: int,
    client_pid: int,
    sleep: float = 0.0,
    marker: str = "",
    runs: str = "",
):
    """Block ``i`` of a data set, made on a worker; refuses to run in the client process."""
    if os.getpid() == client_pid:
        raise RuntimeError("a block of X was computed in the client process")
    if runs:  # one line per run of the block, wherever it runs
        with open(runs, "a") as f:
            f.write(f"{i} {os.getpid()}\n")
    if marker and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)  # the worker dies while the fit runs
    if sleep:
        time.sleep(sleep)
    X, y = _data(short, n=rows * 8, seed=11)
    return X[i * rows : (i + 1) * rows]


def _remote_X(short: str, rows: int = 60, blocks: int = 8, **kw) -> da.Array:
    p = 4
    parts = [
        da.from_delayed(
            dask.delayed(_chunk, pure=True)(i, short, rows, os.getpid(), **kw), (rows, p), float
        )
        for i in range(blocks)
    ]
    return da.concatenate(parts)


@pytest.mark.parametrize("short,cls", STREAMING, ids=IDS)
def test_cluster_fit_equals_in_memory_fit(cluster, short, cls):
    X, y = _data(short, n=480, seed=11)
    Xd = _remote_X(short)
    got = _est(short).fit(Xd, da.from_array(y, chunks=60))
    ref = _est(short).fit(X, y)
    _assert_same_model(ref, got)


class _Wanted(distributed.diagnostics.plugin.SchedulerPlugin):
    """Records the size of every result a client asks for."""

    def __init__(self, scheduler):
        self.scheduler = scheduler
        self.sizes: list[tuple[str, int]] = []

    def transition(self, key, start, finish, *args, **kwargs):
        ts = self.scheduler.tasks.get(key)
        if finish == "memory" and ts is not None and ts.who_wants:
            self.sizes.append((str(key), int(ts.nbytes)))


def test_rows_never_reach_the_client(cluster):
    lc, client = cluster
    plugin = _Wanted(lc.scheduler)
    lc.scheduler.add_plugin(plugin, name="wanted")
    try:
        rows, blocks = 2000, 8
        Xd = _remote_X("lda", rows=rows, blocks=blocks)
        got = bayesrule.LinearDiscriminantAnalysis().fit(
            Xd, da.from_array(_data("lda", n=rows * blocks, seed=11)[1], chunks=rows)
        )
    finally:
        lc.scheduler.remove_plugin(name="wanted")
    x_bytes = rows * blocks * 4 * 8
    assert plugin.sizes, "the plugin saw no result go to the client"
    # what the client received: the labels of y and the merged statistics, nothing of X's size
    assert max(size for _, size in plugin.sizes) < x_bytes / 20, plugin.sizes
    assert got.n_samples_seen_ == rows * blocks
    with pytest.raises(RuntimeError, match="client process"):
        Xd.compute(scheduler="sync")  # the guard is real: computed here, a block raises


def test_predictions_on_the_cluster_stay_lazy_and_equal(cluster):
    X, y = _data("gnb", n=480, seed=11)
    ref = bayesrule.GaussianNB().fit(X, y)
    Xd = _remote_X("gnb")
    proba = ref.predict_proba(Xd)
    assert proba.chunks == ((60,) * 8, (3,))
    np.testing.assert_allclose(proba.compute(), ref.predict_proba(X), rtol=1e-12)
    np.testing.assert_array_equal(ref.predict(Xd).compute(), ref.predict(X))


def test_workers_use_one_thread_and_keep_their_blas(cluster):
    from bayesrule._util import parallel as _parallel
    from bayesrule.backends.dask import task_threads

    _, client = cluster
    before = client.run(threadpoolctl.threadpool_info)
    budgets = [client.submit(_parallel.thread_count, 1e12, pure=False) for _ in range(4)]
    assert all(b == 1 for b in client.gather(budgets))  # nanny: single-threaded BLAS
    assert client.submit(task_threads, pure=False).result() == "auto"  # one task per worker
    X, y = _data("qda", n=480, seed=11)
    bayesrule.QuadraticDiscriminantAnalysis().fit(_remote_X("qda"), da.from_array(y, chunks=60))
    assert client.run(threadpoolctl.threadpool_info) == before


def test_a_worker_killed_during_the_fit_changes_nothing(cluster, tmp_path):
    lc, client = cluster
    before = set(client.scheduler_info()["workers"])
    marker = str(tmp_path / "killed")
    X, y = _data("qda", n=480, seed=11)
    parts = []
    for i in range(8):  # block 5 kills its worker the first time it runs
        kw = {"sleep": 0.2, "marker": marker if i == 5 else "", "runs": str(tmp_path / "runs")}
        parts.append(
            da.from_delayed(
                dask.delayed(_chunk, pure=True)(i, "qda", 60, os.getpid(), **kw), (60, 4), float
            )
        )
    est = bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.1)
    got = est.fit(da.concatenate(parts), da.from_array(y, chunks=60))
    assert os.path.exists(marker)  # a worker did die
    runs = [line.split() for line in (tmp_path / "runs").read_text().splitlines()]
    fives = [pid for block, pid in runs if block == "5"]
    assert len(set(fives)) >= 2  # block 5 ran again, in another process
    client.wait_for_workers(2, timeout=30)
    assert set(client.scheduler_info()["workers"]) != before  # the nanny restarted it
    _assert_same_model(bayesrule.QuadraticDiscriminantAnalysis(reg_param=0.1).fit(X, y), got)


def test_client_for_an_address(cluster):
    from bayesrule.backends.dask import client_for

    lc, _ = cluster
    X, y = _data("gnb", n=480, seed=11)
    with client_for(lc.scheduler_address) as client:
        assert distributed.default_client() is client
        got = bayesrule.GaussianNB().fit(_remote_X("gnb"), da.from_array(y, chunks=60))
    _assert_same_model(bayesrule.GaussianNB().fit(X, y), got)
    with client_for(None) as none:
        assert none is None


def test_client_for_an_unreachable_address_names_it():
    from bayesrule.backends.dask import client_for

    with (
        pytest.raises(OSError, match="tcp://127.0.0.1:9"),
        client_for("tcp://127.0.0.1:9", timeout=1),
    ):
        pass
    with pytest.raises(ValueError, match="address"), client_for(""):
        pass


def test_mixture_discriminant_analysis_fits_on_dask_in_passes_but_never_merges(scheduler):
    X, y = _data("gnb", n=200, seed=4)
    Xd, yd = da.from_array(X, chunks=(70, 2)), da.from_array(y, chunks=70)
    ref = bayesrule.MixtureDiscriminantAnalysis(n_components=2).fit(X, y)
    got = bayesrule.MixtureDiscriminantAnalysis(n_components=2).fit(Xd, yd)
    assert (got.n_iter_, got.n_passes_) == (ref.n_iter_, ref.n_passes_)
    np.testing.assert_allclose(got.predict_proba(X), ref.predict_proba(X), atol=1e-8)
    for name, why in [
        ("partial_fit", "several passes"),
        ("merge", "do not correspond"),
        ("forget", "cannot be downdated"),
    ]:
        with pytest.raises(AttributeError, match=why):
            getattr(got, name)(Xd, yd)
    with pytest.raises(ValueError, match="partial=True.*two EM fits do not correspond"):
        bayesrule.fit_stream(got, [(X, y)], partial=True)


def test_mixture_discriminant_analysis_on_the_cluster(cluster):
    X, y = _data("gnb", n=480, seed=11)
    est = bayesrule.MixtureDiscriminantAnalysis(n_components=2, covariance_type="diag")
    got = clone(est).fit(_remote_X("gnb"), da.from_array(y, chunks=60))  # rows made on workers
    ref = clone(est).fit(X, y)
    assert (got.n_iter_, got.n_passes_) == (ref.n_iter_, ref.n_passes_)
    np.testing.assert_allclose(got.predict_proba(X), ref.predict_proba(X), atol=1e-8)

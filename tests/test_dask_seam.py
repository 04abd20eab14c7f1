"""The Dask backend's reduce against the seam's in-memory reference, on local schedulers.

The Dask backend fits every estimator through ``est.fit_plan(reduce, ...)``;
its ``reduce`` must equal :func:`bayesrule.estimators.seam.summarise` over
the same blocks (one pass for most models, every EM pass for MDA), whatever
the blocks, and must honour the task's ``combine`` and ``finish``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesrule
from bayesrule.estimators.registry import available
from bayesrule.estimators.seam import summarise

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

from bayesrule.backends.dask.fit import SPLIT_EVERY, reducer  # noqa: E402

#: every model fitted from blocks, the EM model (several passes) included
BLOCKWISE = sorted(s for s, c in available().items() if hasattr(c, "partial_fit") or s == "mda")
PARAMS: dict[str, dict] = {"qda": {"reg_param": 0.1}, "rda": {"alpha": 0.5, "gamma": 0.1}}
PARAMS["mda"] = {"n_components": 2, "covariance_type": "diag"}


def _data(short: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, n)]
    k = np.searchsorted(np.array(["a", "b", "c"]), y)
    if short in ("mnb", "cnb", "pnb"):
        X = rng.poisson(1.0 + 2.0 * k[:, None], size=(n, 3))
    elif short == "catnb":
        X = (rng.integers(0, 3, size=(n, 3)) + k[:, None]) % 4
    else:
        X = rng.normal(size=(n, 3)) + 2.0 * k[:, None]
    return X.astype(float), y


def _dask_reduce(X, y, chunks, classes):
    Xd = da.from_array(X, chunks=(chunks, -1))
    yd = da.from_array(y, chunks=(chunks,))
    xs, ys = list(Xd.to_delayed().ravel()), list(yd.to_delayed().ravel())
    return reducer(xs, ys, [None] * len(xs), classes, bayesrule.get_config())


def _blocks(X, y, chunks):
    bounds = np.cumsum([0, *chunks])
    return [(X[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


@pytest.mark.parametrize("short", BLOCKWISE)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=st.lists(st.integers(0, 40), min_size=1, max_size=12), seed=st.integers(0, 99))
def test_the_dask_reduce_is_the_in_memory_reduction(short, sizes, seed):
    """Any row blocks (empty ones among them, more than a combine takes): the same statistics."""
    chunks = tuple(sizes) + (60,)  # at least 60 rows: every class present
    X, y = _data(short, sum(chunks), seed)
    classes = np.unique(y)
    est = available()[short](**PARAMS.get(short, {}))
    blocks = _blocks(X, y, chunks)
    with dask.config.set(scheduler="sync"):
        got = est.fit_plan(_dask_reduce(X, y, chunks, classes), classes=classes)
    ref = est.fit_plan(lambda task: summarise(task, blocks, classes), classes=classes)
    assert type(got) is type(ref)
    if short == "mda":  # EM from the same blocks: the same passes, the same model
        np.testing.assert_array_equal(got.n_passes, ref.n_passes)
        np.testing.assert_allclose(got.weights, ref.weights, rtol=1e-12)
        np.testing.assert_allclose(got.component_means, ref.component_means, atol=1e-8)
    else:
        assert got.allclose(ref, rtol=1e-10)


class _Tally:
    """A task whose summaries are the block's row counts, tagged by combine and finish."""

    def statistics(self, X, y, sample_weight=None, classes=None):
        return ("block", int(X.shape[0]))

    def combine(self, total, block):
        n = block[1]
        return ("total", n if total is None else total[1] + n)

    def finish(self, total):
        assert total[0] == "total", "finish got a summary that never went through combine"
        return ("done", total[1])


@pytest.mark.parametrize("n_blocks", [1, 2, SPLIT_EVERY, SPLIT_EVERY + 1, 3 * SPLIT_EVERY**2])
def test_every_block_passes_through_combine_and_finish_once(n_blocks):
    chunks = tuple(range(1, n_blocks + 1))
    X, y = np.zeros((sum(chunks), 2)), np.zeros(sum(chunks))
    with dask.config.set(scheduler="threads"):
        out = _dask_reduce(X, y, chunks, None)(_Tally())
    assert out == ("done", sum(chunks))


def test_a_pass_over_empty_blocks_only_is_refused():
    X, y = np.zeros((0, 2)), np.zeros(0)
    with pytest.raises(ValueError, match="0 samples"):
        _dask_reduce(X, y, (0,), None)(_Tally())


def test_mixed_nb_infers_its_kinds_from_the_first_block_with_rows():
    """Leading empty partitions: the kinds come from the first rows, as in memory."""
    rng = np.random.default_rng(0)
    n = 300
    lab = rng.integers(0, 2, n)
    df = pd.DataFrame(
        {
            "x": rng.normal(size=n) + lab,
            "count": rng.poisson(2 + 3 * lab),
            "colour": pd.Series(np.array(["red", "blue", "teal"])[rng.integers(0, 3, n)]),
            "label": np.where(lab == 1, "yes", "no"),
        }
    )
    ddf = dd.from_pandas(df, npartitions=3, sort=False)
    ddf = dd.concat([ddf[ddf["x"] > 1e9], ddf])  # three empty partitions first
    cols = ["x", "count", "colour"]
    ref = bayesrule.MixedNB().fit(df[cols], df["label"])
    with dask.config.set(scheduler="sync"):
        got = bayesrule.MixedNB().fit(ddf[cols], ddf["label"])
    assert got.kinds_ == ref.kinds_ == ["gaussian", "poisson", "categorical"]
    assert got.stats_.allclose(ref.stats_, rtol=1e-10)
    # a refit forgets the kinds of the former fit: integers that are now categories
    df2 = df.assign(count=rng.integers(0, 2, n))
    ddf2 = dd.from_pandas(df2, npartitions=3, sort=False)
    with dask.config.set(scheduler="sync"):
        got.fit(ddf2[cols], ddf2["label"])
    assert got.kinds_ == bayesrule.MixedNB().fit(df2[cols], df2["label"]).kinds_
    assert got.kinds_[1] == "bernoulli"


def test_the_refusal_gives_the_estimator_s_own_reason():
    X, y = _data("rda", 90, 0)
    Xd, yd = da.from_array(X, chunks=30), da.from_array(y, chunks=30)
    with pytest.raises(TypeError, match="cannot be fitted on Dask.*cross-validation needs all"):
        bayesrule.RegularizedDiscriminantAnalysisCV().fit(Xd, yd)


def test_a_fitted_model_checks_the_feature_names_of_a_dask_frame():
    X, y = _data("gnb", 120, 1)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    est = bayesrule.GaussianNB().fit(df, y)
    before = est.stats_
    renamed = dd.from_pandas(df.rename(columns={"b": "z"}), npartitions=3)
    with pytest.raises(ValueError, match=r"feature names should match(.|\n)*- z"):
        est.partial_fit(renamed, dd.from_array(y, chunksize=40))
    assert est.stats_ is before  # checked on the client before anything is computed
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        est.partial_fit(da.from_array(X, chunks=40), da.from_array(y, chunks=40))
    assert est.n_samples_seen_ == 240


@pytest.mark.parametrize("cls", [bayesrule.LinearDiscriminantAnalysis, bayesrule.GaussianNB])
def test_features_and_label_of_one_parquet_read_keep_the_same_rows(tmp_path, cls):
    """``ddf[features]`` and ``ddf["label"]`` of a folder of Parquet files: Dask's optimiser
    fuses the one-column selection into fewer partitions than the features'; the fit
    still pairs each row with its own label (it equals the in-memory fit)."""
    rng = np.random.default_rng(3)
    frames = []
    for i in range(6):
        part = pd.DataFrame(rng.normal(size=(300, 12)), columns=[f"f{j}" for j in range(12)])
        part["label"] = rng.integers(0, 3, 300)
        part.iloc[:, :12] += part[["label"]].to_numpy()  # the labels matter
        part.to_parquet(tmp_path / f"part{i}.parquet")
        frames.append(part)
    whole = pd.concat(frames, ignore_index=True)
    ddf = dd.read_parquet(str(tmp_path))
    features = [c for c in ddf.columns if c != "label"]
    with dask.config.set(scheduler="synchronous"):
        model = cls().fit(ddf[features], ddf["label"])
    ref = cls().fit(whole[features], whole["label"])
    X = whole[features].to_numpy()
    np.testing.assert_allclose(model.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-10)
